// The 1EdTech platform-storage step (LTI "Client Side postMessages"): keeps a launch's browser
// binding in the platform's own storage when the browser refuses Invigil's cookie in the platform's
// iframe. `put` stores it before the login goes to the platform; `get` reads it back when the launch
// arrives and posts it to /lti/launch/verify. The page carries its instructions in data attributes
// (src/http/lti/pages.ts, platformStoragePage).
import './lti.css';

/** How long the platform has to answer a message, in milliseconds. */
const ANSWER_MS = 2000;

/** A message of the protocol, as sent and as answered. */
type StorageMessage = Readonly<Record<string, unknown>>;

/** The window the platform named in lti_storage_target: the parent itself (`_parent`) or a frame of it. */
function targetWindow(name: string): Window | null {
  const openerValue: unknown = window.opener;
  // Another site's window is no Window of this realm (instanceof fails), so only its type is checked.
  const opener = typeof openerValue === 'object' && openerValue !== null ? (openerValue as Window) : null;
  const parent = window.parent === window ? opener : window.parent;
  if (parent === null) return null;
  if (name === '_parent') return parent;
  try {
    const frames = parent.frames as unknown as Readonly<Record<string, Window | undefined>>;
    return frames[name] ?? null;
  } catch {
    return null;
  }
}

/**
 * Sends one message and waits for its answer (same message_id, from `origin`). Resolves with the
 * answer, or null when none came in time or the platform answered an error; never rejects.
 */
function ask(
  target: Window,
  origin: string,
  message: { subject: string } & StorageMessage,
): Promise<StorageMessage | null> {
  const messageId = crypto.randomUUID();
  return new Promise((resolve) => {
    const finish = (answer: StorageMessage | null) => {
      window.clearTimeout(timer);
      window.removeEventListener('message', listen);
      resolve(answer);
    };
    const listen = (event: MessageEvent<unknown>) => {
      if (event.origin !== origin) return;
      const raw = event.data;
      if (typeof raw !== 'object' || raw === null) return;
      const data = raw as StorageMessage;
      if (data.message_id !== messageId) return;
      // Some platforms still answer with the draft's `org.imsglobal.` prefix.
      const subject = typeof data.subject === 'string' ? data.subject.replace(/^org\.imsglobal\./, '') : '';
      if (subject !== `${message.subject}.response`) return;
      finish(data.error === undefined ? data : null);
    };
    const timer = window.setTimeout(() => finish(null), ANSWER_MS);
    window.addEventListener('message', listen);
    try {
      target.postMessage({ ...message, message_id: messageId }, origin);
    } catch {
      finish(null);
    }
  });
}

async function run(): Promise<void> {
  const element = document.getElementById('platform-storage');
  if (element === null) return;
  const { mode, target: name = '_parent', origin = '', key = '' } = element.dataset;
  const target = targetWindow(name);
  if (mode === 'put') {
    const { value = '', next = '' } = element.dataset;
    if (target !== null) await ask(target, origin, { subject: 'lti.put_data', key, value });
    // Stored or not, the login goes on: the cookie may still work, and the launch says what to do if not.
    window.location.assign(next);
    return;
  }
  if (mode === 'get') {
    const form = document.getElementById('storage-verify');
    if (!(form instanceof HTMLFormElement)) return;
    const answer = target === null ? null : await ask(target, origin, { subject: 'lti.get_data', key });
    const value = answer !== null && typeof answer.value === 'string' ? answer.value : '';
    const field = form.elements.namedItem('binding');
    if (field instanceof HTMLInputElement) field.value = value;
    form.submit();
  }
}

void run();
