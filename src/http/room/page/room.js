// @ts-check
/**
 * The candidate exam room in the browser (contract §11, docs/room.md). It speaks only to the room
 * API under /api/room/<token>, and follows the session's status as the server reports it:
 *
 *   setup (checks, photos) → start → exam (countdown, recording, answer files, events) → finished
 *
 * The server is the judge of every move and of the time; this page shows what the server says,
 * keeps recording chunks and events in queues that survive a dropped connection, and never loses
 * the student's place on a reload (the status and the chunk counts come back from GET).
 */

import {
  ApiError,
  byId,
  clearError,
  errorOf,
  h,
  parseJson,
  parts,
  requestJson,
  showError,
  wakeableSleeps,
} from '../../shared/assets/page-kit.js';

/**
 * @typedef {'not_started' | 'not_completed' | 'succeeded' | 'failed' | 'skipped'} CheckValue
 * @typedef {{
 *   id: number, name: string, status: string,
 *   screenshare_check: CheckValue, microphone_check: CheckValue, speakers_check: CheckValue,
 *   webcam_check: CheckValue, mobile_check: CheckValue, bandwidth_check: CheckValue,
 *   bandwidth_speed: number | null, required_checks: string[], skip_requirements: boolean,
 *   open_time: string | null, start_time: string | null, end_time: string | null,
 *   end_reason: string | null, ends_at: string | null, time_left_seconds: number | null,
 *   individual_info_html: string | null, has_face_photo: boolean, has_id_card: boolean,
 *   uploads_count: number, recording_chunks_count: number, screen_recording_chunks_count: number
 * }} RoomSession
 * @typedef {{
 *   name: string, type: string, duration_minutes: number | null, start_time: string | null, end_time: string | null,
 *   upload_answers: boolean, web_cam: boolean, screen_share: boolean, mobile_cam: boolean,
 *   allow_websites: boolean, allow_external_applications: boolean, allow_textbooks: boolean,
 *   allow_calculator: boolean, allow_pen_paper: boolean, allow_additional: boolean,
 *   allowed_websites: string | null, allowed_external_applications: string | null,
 *   allowed_textbooks: string | null, allowed_calculator_type: string | null,
 *   allowed_additional: string | null, terms: string | null
 * }} RoomExam
 * @typedef {{ content_html: string }} RoomDocument
 * @typedef {{ enabled: boolean, socket: string, awaiting_admission: boolean, clock_paused: boolean }} RoomLive
 * @typedef {import('./flags/face.js').FlagSettings} FlagSettings
 * @typedef {{ enabled: boolean, settings: FlagSettings, models: string, has_face_photo: boolean }} RoomFlags
 * @typedef {'not_paired' | 'paired' | 'streaming' | 'lost'} MobileStatus
 * @typedef {{
 *   pairing_url: string | null, pairing_address: string, pin_code: string | null,
 *   status: MobileStatus, device: string | null, last_seen_at: string | null, chunks_count: number
 * }} RoomMobile the phone of a `mobile_cam` exam (the second camera); the pairing URL and the PIN
 *   are null once the session is finished
 * @typedef {{
 *   session: RoomSession, exam: RoomExam, document: RoomDocument | null, server_time: string,
 *   mobile?: RoomMobile | null, live?: RoomLive, lti_start_assessment?: string,
 *   automated_flags?: RoomFlags
 * }} RoomView
 * @typedef {'webcam' | 'screen'} RecordingSource
 * @typedef {typeof import('../../live/page/live-client.js')} LiveClientModule
 * @typedef {import('../../live/page/live-client.js').LiveConnection} LiveConnection
 * @typedef {import('../../live/page/live-client.js').LiveMessage} LiveMessage
 * @typedef {import('../../live/page/live-client.js').AppMessage} LiveServerMessage
 * @typedef {import('../../live/page/live-client.js').SocketStatus} LiveSocketStatus
 * @typedef {import('../../live/page/live-client.js').PublishState} LivePublishState
 * @typedef {import('./flags/flags.js').Flags} Flags
 */

/** Milliseconds of recording per uploaded chunk. */
const CHUNK_MS = 4000;
/** How often the page asks the server for the time and the status while the exam runs. */
const POLL_MS = 20000;
/**
 * How often the page re-reads its view in an exam with a phone camera, during the setup and the
 * exam: the phone talks to the server, not to this page, so this is how the page learns of it.
 */
const MOBILE_POLL_MS = 5000;
/** The slowest connection the bandwidth check passes, in Mbit/s. */
const MIN_MBIT = 1;
/** How long finishing waits for queued recording chunks before it finishes anyway. */
const FLUSH_LIMIT_MS = 30000;
/** The longest the connection check downloads; a slower line is measured on what arrived by then. */
const MEASURE_LIMIT_MS = 10000;
/** How long "all recording parts sent" stays on screen after the connection came back. */
const BACK_ONLINE_SHOWN_MS = 10000;

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const api = `/api/room/${encodeURIComponent(token)}`;

/** @type {RoomView | undefined} */
let view;
/** performance.now() when `view` arrived, so the countdown runs on the server's figure. */
let viewAt = 0;
/** @type {MediaStream | undefined} */
let cameraStream;
/** @type {MediaStream | undefined} */
let screenStream;
/** @type {Map<RecordingSource, Recorder>} */
const recorders = new Map();
/** Recorders stopped (finish, time up, a lost track) whose last chunks may still be on their way. */
/** @type {Set<Recorder>} */
const stoppedRecorders = new Set();
/** @type {number | undefined} */
let pollTimer;
/** @type {number | undefined} */
let tickTimer;
let finishing = false;
let leavingSetup = false;

// ---------------------------------------------------------------------------------------------
// Small DOM helpers

/** Announces progress politely to screen readers (and shows nothing extra on screen). */
function announce(/** @type {string} */ message) {
  byId('status').textContent = message;
}

/** @param {number} bytes */
function formatSize(bytes) {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/**
 * A time as the student reads it: in the browser's own time zone, with that zone named (a student
 * abroad must not guess whether the exam office meant its zone or theirs).
 * @param {string} iso
 */
function formatTime(iso) {
  return new Date(iso).toLocaleString(undefined, {
    year: 'numeric',
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    timeZoneName: 'short',
  });
}

/** The browser's time zone by name (`Europe/Berlin`), for the sentence that says which zone times are in. */
function timeZoneName() {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'your computer’s time zone';
}

// ---------------------------------------------------------------------------------------------
// The room API

/**
 * Calls the room API. Returns the parsed JSON answer; throws ApiError with the server's own
 * sentence for an error answer, or status 0 when the server could not be reached.
 * @param {string} method
 * @param {string} path
 * @param {Record<string, unknown> | FormData} [body]
 * @returns {Promise<unknown>}
 */
async function call(method, path, body) {
  let answer;
  try {
    answer = await requestJson(`${api}${path}`, method, body);
  } catch {
    setReachable(false);
    throw new ApiError(
      0,
      'The exam room cannot reach the server. Check your connection; it will keep trying.',
    );
  }
  setReachable(true);
  const { status, ok, json } = answer;
  if (!ok) throw new ApiError(status, errorOf(json, `The server answered ${status}`));
  return json;
}

/**
 * Calls a room API route that answers the room view. Returns it; throws as `call`.
 * @param {string} method
 * @param {string} path
 * @param {Record<string, unknown> | FormData} [body]
 */
async function callView(method, path, body) {
  return /** @type {RoomView} */ (await call(method, path, body));
}

/** Counts the views taken, so a status read that a newer view overtook can step aside. */
let viewVersion = 0;

/** Takes a room view from the server and shows the stage its status calls for. */
function accept(/** @type {RoomView} */ answer) {
  const before = view?.live;
  view = answer;
  viewAt = performance.now();
  viewVersion += 1;
  render();
  updateLive(before);
  updatePhone();
}

async function reload() {
  accept(await callView('GET', ''));
}

/**
 * Runs a user action: clears the old error, shows a new one, keeps the button from being pressed
 * twice while the action runs. The button is marked busy with aria-disabled rather than disabled:
 * a disabled button drops the keyboard focus to the page's body, and the student would have to
 * find their place again after every check.
 * @param {HTMLButtonElement | undefined} button
 * @param {() => Promise<void>} action
 * @param {string} [fallbackId] what takes the focus when the button is gone or hidden afterwards
 */
async function act(button, action, fallbackId) {
  if (button?.getAttribute('aria-disabled') === 'true') return;
  clearError();
  button?.setAttribute('aria-disabled', 'true');
  try {
    await action();
  } catch (error) {
    showError(error instanceof Error ? error.message : String(error));
  } finally {
    button?.removeAttribute('aria-disabled');
    keepFocus(button, fallbackId);
  }
}

/**
 * After an action, puts the focus back where the student was when the page moved it away (to the
 * body): on the button they used while it can still take it, else on `fallbackId` (a status text
 * the action filled in), else on the stage's heading.
 * @param {HTMLElement | undefined} button
 * @param {string} [fallbackId]
 */
function keepFocus(button, fallbackId) {
  const active = document.activeElement;
  if (active !== null && active !== document.body && active.isConnected) return;
  const usable = (/** @type {HTMLElement | null | undefined} */ element) =>
    element != null &&
    element.isConnected &&
    element.closest('[hidden]') === null &&
    !(element instanceof HTMLButtonElement && element.disabled);
  const fallback = fallbackId === undefined ? null : document.getElementById(fallbackId);
  const target = usable(button)
    ? button
    : usable(fallback)
      ? fallback
      : byId('main').querySelector('section.stage h2');
  if (!(target instanceof HTMLElement)) return;
  if (!target.matches('button, input, a[href], [tabindex]')) target.tabIndex = -1;
  target.focus();
}

// ---------------------------------------------------------------------------------------------
// The connection: a visible, polite status while the server cannot be reached or chunks wait

/** False after a call failed to reach the server, true again after one got an answer. */
let reachable = true;
/** True from a lost connection until every waiting chunk has been sent after it came back. */
let recovering = false;
/** @type {number | undefined} */
let backOnlineTimer;
/** Sleeping retries, woken when the browser reports the connection back. */
const { pause, wakeAll } = wakeableSleeps();

/** @param {boolean} value */
function setReachable(value) {
  if (reachable === value) return;
  reachable = value;
  // Any answer from the server (a status read, an event) means waiting chunks can go now.
  if (value) wakeAll();
  updateConnection();
}

/** Recording chunks recorded but not yet acknowledged by the server. */
function waitingChunks() {
  let waiting = 0;
  for (const recorder of recorders.values()) waiting += recorder.queue.length;
  for (const recorder of stoppedRecorders) waiting += recorder.queue.length;
  return waiting;
}

/** @param {number} count */
function pieces(count) {
  return count === 1 ? '1 part' : `${count} parts`;
}

/**
 * Shows the state of the connection in the header's status line: lost (with the chunks waiting),
 * back and sending (counting down), back and done (for a few seconds), or nothing.
 */
function updateConnection() {
  const banner = document.getElementById('connection');
  if (banner === null) return;
  const lost = !navigator.onLine || !reachable;
  const waiting = waitingChunks();
  let text = '';
  if (lost) {
    recovering = true;
    window.clearTimeout(backOnlineTimer);
    backOnlineTimer = undefined;
    text =
      recorders.size > 0 || waiting > 0
        ? `Connection lost — ${parts(waiting)} waiting; ${waiting === 1 ? 'it' : 'they'} will be sent when you are back online.`
        : 'Connection lost — the exam room keeps trying to reach the server.';
  } else if (recovering && waiting > 0) {
    text = `Back online — sending your recording: ${parts(waiting)} still waiting.`;
  } else if (recovering) {
    text = 'Back online — every recording part has been sent.';
    backOnlineTimer ??= window.setTimeout(() => {
      recovering = false;
      backOnlineTimer = undefined;
      updateConnection();
    }, BACK_ONLINE_SHOWN_MS);
  }
  banner.classList.toggle('lost', lost);
  if (banner.textContent !== text) banner.textContent = text;
  banner.hidden = text === '';
}

window.addEventListener('offline', updateConnection);
window.addEventListener('online', () => {
  wakeAll();
  updateConnection();
});

// ---------------------------------------------------------------------------------------------
// Stages

/** @type {string | undefined} */
let shownStage;

function render() {
  if (view === undefined) return;
  const { session, exam } = view;
  byId('exam-name').textContent = exam.name;
  document.title = `${exam.name} · exam room`;
  byId('student-name').textContent = `Candidate: ${session.name}`;
  const stage =
    session.status === 'exam_finished' ? 'finished' : session.status === 'exam_started' ? 'exam' : 'setup';
  if (stage !== shownStage) {
    shownStage = stage;
    const main = byId('main');
    for (const old of main.querySelectorAll('section.stage, #stage-loading')) old.remove();
    if (stage === 'setup') main.append(setupStage());
    if (stage === 'exam') main.append(examStage());
    if (stage === 'finished') main.append(finishedStage());
    const heading = main.querySelector('section.stage h2');
    if (heading instanceof HTMLElement) {
      heading.tabIndex = -1;
      heading.focus();
    }
  }
  if (stage === 'setup') updateSetup();
  if (stage === 'exam') updateExam();
  updateTimer();
  updatePolling(stage);
}

/** The interval the status reads run at now (0: none). */
let pollEvery = 0;

/**
 * Reads the view at the pace the stage needs: every POLL_MS during the exam (the time, the end by
 * staff), every MOBILE_POLL_MS in setup and exam of an exam with a phone (whose state changes
 * elsewhere), and not at all otherwise.
 * @param {string} stage
 */
function updatePolling(stage) {
  const phone = view?.mobile != null;
  const every =
    stage === 'exam' ? (phone ? MOBILE_POLL_MS : POLL_MS) : stage === 'setup' && phone ? MOBILE_POLL_MS : 0;
  if (every === pollEvery) return;
  window.clearInterval(pollTimer);
  pollTimer = undefined;
  pollEvery = every;
  if (every > 0) pollTimer = window.setInterval(() => void poll(), every);
}

// ---- Setup --------------------------------------------------------------------------------------

/** @type {Record<string, string>} */
const CHECK_NAMES = {
  webcam_check: 'Camera',
  microphone_check: 'Microphone',
  screenshare_check: 'Screen sharing',
  speakers_check: 'Speakers',
  bandwidth_check: 'Connection speed',
  mobile_check: 'Phone camera',
};

/** @type {Record<CheckValue, string>} */
const CHECK_RESULTS = {
  not_started: 'not checked yet',
  not_completed: 'not completed',
  succeeded: 'passed',
  failed: 'failed',
  skipped: 'skipped',
};

/** The rules of the exam as a list a student can read before starting. */
function rulesList(/** @type {RoomExam} */ exam) {
  /** @type {[boolean, string, string | null][]} */
  const rules = [
    [exam.allow_websites, 'Websites', exam.allowed_websites],
    [exam.allow_external_applications, 'Other applications', exam.allowed_external_applications],
    [exam.allow_textbooks, 'Textbooks', exam.allowed_textbooks],
    [exam.allow_calculator, 'A calculator', exam.allowed_calculator_type],
    [exam.allow_pen_paper, 'Pen and paper', null],
    [exam.allow_additional, 'Other aids', exam.allowed_additional],
  ];
  const allowed = rules.filter(([allow]) => allow);
  const list = h('ul', { class: 'rules' });
  if (allowed.length === 0) list.append(h('li', {}, ['No aids are allowed: only this exam room.']));
  for (const [, name, detail] of allowed) {
    list.append(h('li', {}, [detail ? `${name} allowed: ${detail}` : `${name} allowed`]));
  }
  return list;
}

/** A line of the checklist: a button that runs the check, and its result as text. */
function checkItem(
  /** @type {string} */ id,
  /** @type {string} */ label,
  /** @type {string} */ help,
  /** @type {string[]} */ fields,
  /** @type {(button: HTMLButtonElement) => Promise<void>} */ run,
) {
  const button = h('button', { type: 'button', id: `run-${id}`, 'aria-describedby': `help-${id}` }, [label]);
  button.addEventListener('click', () => void act(button, () => run(button)));
  const results = h('ul', { class: 'results', id: `results-${id}` });
  for (const field of fields) {
    results.append(h('li', { 'data-check': field }, [`${CHECK_NAMES[field]}: ${CHECK_RESULTS.not_started}`]));
  }
  return h('li', { class: 'check', id: `check-${id}` }, [
    button,
    h('p', { id: `help-${id}`, class: 'help' }, [help]),
    results,
  ]);
}

/** The question asked after the test tone (hidden until it plays): heard it, or not. */
function soundQuestion() {
  const sound = h(
    'div',
    {
      id: 'sound-question',
      class: 'question',
      role: 'group',
      'aria-labelledby': 'sound-question-text',
      hidden: true,
    },
    [h('p', { id: 'sound-question-text' }, ['Did you hear the tone?'])],
  );
  const heard = h('button', { type: 'button', id: 'sound-yes' }, ['Yes, I heard it']);
  const notHeard = h('button', { type: 'button', id: 'sound-no' }, ['No']);
  heard.addEventListener('click', () => void act(heard, () => answerSound(true)));
  notHeard.addEventListener('click', () => void act(notHeard, () => answerSound(false)));
  sound.append(heard, ' ', notHeard);
  return sound;
}

/**
 * The exam's terms and the box that accepts them (docs/room.md "Terms"). The terms are plain text
 * and shown as text (textContent), never as markup. The box is required: starting without it
 * shows the error below it, tied to the box by aria-describedby, and moves the focus to it.
 * @param {string} terms
 */
function termsSection(terms) {
  // Whole, never in a scrolling box: nothing to reach by keyboard before the box below it.
  const text = h('div', { class: 'terms-text', id: 'terms-text' });
  text.textContent = terms;
  const box = h('input', {
    type: 'checkbox',
    id: 'terms-accepted',
    required: true,
    'aria-describedby': 'terms-help',
  });
  box.addEventListener('change', () => {
    if (box.checked) showTermsError(undefined);
    updateSetup();
  });
  return h('section', { class: 'terms', id: 'terms', 'aria-labelledby': 'terms-heading' }, [
    h('h3', { id: 'terms-heading' }, ['Terms of this exam']),
    h('p', { class: 'help', id: 'terms-help' }, ['Read these terms. You accept them to start the exam.']),
    text,
    h('p', { class: 'accept' }, [
      box,
      ' ',
      h('label', { for: 'terms-accepted' }, ['I have read and accept these terms']),
    ]),
    h('p', { class: 'field-error', id: 'terms-error', hidden: true }),
  ]);
}

/**
 * Shows `message` as the terms box's error (aria-invalid, described by it), or clears it.
 * @param {string | undefined} message
 */
function showTermsError(message) {
  const box = document.getElementById('terms-accepted');
  const error = document.getElementById('terms-error');
  if (box === null || error === null) return;
  error.textContent = message ?? '';
  error.hidden = message === undefined;
  if (message === undefined) {
    box.removeAttribute('aria-invalid');
    box.setAttribute('aria-describedby', 'terms-help');
  } else {
    box.setAttribute('aria-invalid', 'true');
    box.setAttribute('aria-describedby', 'terms-error terms-help');
  }
}

/**
 * Keeps the terms on screen as the latest view has them: added when the exam office added terms
 * after the page was built, removed when it removed them, and when their text changed, shown anew
 * with the box unticked (the candidate accepts the text the server will record).
 */
function syncTerms() {
  const terms = view?.exam.terms ?? null;
  const shown = document.getElementById('terms');
  if (terms === null) {
    shown?.remove();
    return;
  }
  if (shown === null) {
    document.getElementById('begin-heading')?.closest('section')?.before(termsSection(terms));
    return;
  }
  const text = byId('terms-text');
  if (text.textContent === terms) return;
  text.textContent = terms;
  const box = byId('terms-accepted');
  if (box instanceof HTMLInputElement) box.checked = false;
}

/** True when the exam has terms and the candidate has not ticked the box yet. */
function termsPending() {
  if (!view?.exam.terms) return false;
  const box = document.getElementById('terms-accepted');
  return !(box instanceof HTMLInputElement && box.checked);
}

function setupStage() {
  if (view === undefined) throw new Error('no view');
  const { session, exam } = view;
  const section = h('section', { class: 'stage', id: 'stage-setup', 'aria-labelledby': 'setup-heading' });
  section.append(h('h2', { id: 'setup-heading' }, ['Before you start']));

  const hasWindow = exam.start_time || exam.end_time || session.open_time;
  const about = h('section', { 'aria-labelledby': 'about-heading' }, [
    h('h3', { id: 'about-heading' }, ['Your exam']),
  ]);
  const facts = h('ul', { class: 'facts' });
  if (exam.duration_minutes !== null)
    facts.append(h('li', {}, [`Once you start, you have ${exam.duration_minutes} minutes.`]));
  if (hasWindow) {
    const from = session.open_time ?? exam.start_time;
    if (from) facts.append(h('li', {}, [`You can start from ${formatTime(from)}.`]));
    if (exam.end_time) facts.append(h('li', {}, [`The exam closes at ${formatTime(exam.end_time)}.`]));
    facts.append(h('li', {}, [`Times are shown in your computer’s time zone (${timeZoneName()}).`]));
  }
  if (exam.web_cam || exam.screen_share) {
    facts.append(
      h('li', {}, [
        `Your ${[exam.web_cam ? 'camera and microphone' : '', exam.screen_share ? 'screen' : ''].filter(Boolean).join(' and ')} will be recorded while the exam runs.`,
      ]),
    );
  }
  if (view.mobile) {
    facts.append(
      h('li', {}, [
        'Your phone’s camera records you from the side while the exam runs: set it up under “Your phone” below.',
      ]),
    );
  }
  about.append(facts, h('h4', {}, ['What you may use']), rulesList(exam));
  if (session.individual_info_html) {
    const info = h('div', { class: 'info', id: 'individual-info' });
    // Sanitised by the server (sanitize-html) when flagged as HTML, escaped otherwise.
    info.innerHTML = session.individual_info_html;
    about.append(h('h4', {}, ['Information for you']), info);
  }
  section.append(about);
  if (view.automated_flags?.enabled) section.append(flagsNotice(view.automated_flags.settings));

  const checks = h('section', { 'aria-labelledby': 'checks-heading' }, [
    h('h3', { id: 'checks-heading' }, ['Check your equipment']),
  ]);
  const list = h('ol', { class: 'checks' });
  if (exam.web_cam) {
    list.append(
      checkItem(
        'camera',
        'Test camera and microphone',
        'Your browser will ask to use your camera and microphone: allow both.',
        ['webcam_check', 'microphone_check'],
        checkCamera,
      ),
    );
  }
  if (exam.screen_share) {
    list.append(
      checkItem(
        'screen',
        'Share your screen',
        'Choose your entire screen when your browser asks.',
        ['screenshare_check'],
        checkScreen,
      ),
    );
  }
  // The question about the tone belongs to the speaker check: it shows right under its button.
  const speakers = checkItem(
    'speakers',
    'Play a test sound',
    'A short tone plays; then tell us whether you heard it.',
    ['speakers_check'],
    checkSpeakers,
  );
  speakers.append(soundQuestion());
  list.append(speakers);
  if (exam.web_cam || exam.screen_share || exam.mobile_cam) {
    const item = checkItem(
      'bandwidth',
      'Measure your connection',
      `Downloads a 2 MB file to time your connection (at least ${MIN_MBIT} Mbit/s is recommended; it takes up to ${MEASURE_LIMIT_MS / 1000} seconds).`,
      ['bandwidth_check'],
      checkBandwidth,
    );
    item.append(
      h('div', { class: 'progress', id: 'bandwidth-box', hidden: true }, [
        h('span', { id: 'bandwidth-progress-label' }, ['Connection check']),
        ' ',
        h('progress', {
          id: 'bandwidth-progress',
          max: '100',
          value: '0',
          'aria-labelledby': 'bandwidth-progress-label',
          'aria-describedby': 'bandwidth-percent',
        }),
        ' ',
        h('span', { id: 'bandwidth-percent' }, ['0%']),
      ]),
      h('div', { id: 'bandwidth-advice', class: 'advice', hidden: true }),
    );
    list.append(item);
  }
  if (view.mobile) list.append(phoneCheckItem(view.mobile));
  checks.append(list);
  section.append(checks);

  if (exam.web_cam) {
    // The camera picture sits beside the two photo buttons: the student frames the card and the
    // face while looking at the picture the photo is taken from.
    const photos = h('section', { 'aria-labelledby': 'photos-heading' }, [
      h('h3', { id: 'photos-heading' }, ['Identify yourself']),
      h('p', { class: 'help', id: 'photos-help' }, [
        'Test your camera first. Then hold your ID card up to the camera for the first photo, and look into the camera for the second.',
      ]),
    ]);
    const preview = h('video', {
      id: 'camera-preview',
      muted: true,
      playsinline: true,
      autoplay: true,
      'aria-label': 'Your camera picture',
      hidden: true,
    });
    const row = h('div', { class: 'photo-row' }, [
      h('figure', { class: 'photo', id: 'camera-figure' }, [
        h('div', { class: 'frame', id: 'camera-frame' }, [
          preview,
          h('p', { class: 'placeholder', id: 'camera-placeholder' }, [
            'Your camera picture appears here once you have tested your camera.',
          ]),
        ]),
        h('figcaption', {}, ['Camera']),
      ]),
    ]);
    for (const [kind, label, caption] of /** @type {const} */ ([
      ['id_card', 'Take a photo of your ID card', 'ID card photo'],
      ['face_photo', 'Take a photo of your face', 'Face photo'],
    ])) {
      const button = h(
        'button',
        { type: 'button', id: `take-${kind}`, 'aria-describedby': `${kind}-state photos-help` },
        [label],
      );
      button.addEventListener('click', () => void act(button, () => takePhoto(kind)));
      // No <img> until there is a photo: an empty one shows as a broken image and is read out.
      row.append(
        h('figure', { class: 'photo', id: `${kind}-figure` }, [
          // Empty, it is only a frame: the caption names it and the state line below says "No photo yet".
          h('div', { class: 'frame empty', id: `${kind}-frame`, 'aria-hidden': 'true' }),
          h('figcaption', {}, [caption]),
          button,
          h('p', { id: `${kind}-state`, class: 'result' }),
        ]),
      );
    }
    photos.append(row);
    section.append(photos);
  }

  // The terms (if any) come in before the start by syncTerms, which keeps them as the view has them.
  const begin = h('section', { 'aria-labelledby': 'begin-heading' }, [
    h('h3', { id: 'begin-heading' }, ['Start']),
  ]);
  const startHelp = h('p', { id: 'start-help', class: 'help' });
  const start = h(
    'button',
    { type: 'button', id: 'start-exam', class: 'primary', 'aria-describedby': 'start-help' },
    ['Start the exam'],
  );
  start.addEventListener('click', () => void act(start, startExam));
  // A live exam with an ID check: the proctor lets the candidate go on (admits them); until then
  // this box stands where the start button is.
  const admission = h('div', { class: 'admission', id: 'admission', hidden: true }, [
    h('p', { class: 'admission-title' }, ['Waiting for your proctor to check your ID']),
    h('p', {}, [
      'Keep this page open and stay in front of your camera. Hold your ID card up to the camera when your proctor asks; you can start as soon as they have checked it.',
    ]),
    h('p', { class: 'live-copy', id: 'admission-live' }),
  ]);
  begin.append(startHelp, start, admission);
  if (view?.lti_start_assessment) {
    // LTI Proctoring Services: say before the start where the questions will be (docs/lti.md).
    begin.append(
      h('p', { class: 'help', id: 'assessment-note' }, [
        'When you start, your learning platform opens the questions in a new tab. Keep this tab open as well until you finish.',
      ]),
    );
  }
  section.append(begin);
  return section;
}

/** What still stands between the student and the start button, as sentences (none: ready). */
function missingForStart() {
  if (view === undefined) return ['The room is loading.'];
  const { session, exam } = view;
  if (session.skip_requirements) return [];
  /** @type {string[]} */
  const missing = [];
  for (const field of session.required_checks) {
    if (field === 'bandwidth_check' && slowConnectionAccepted()) continue;
    const value = /** @type {CheckValue} */ (session[/** @type {keyof RoomSession} */ (field)]);
    if (value !== 'succeeded') missing.push(`${CHECK_NAMES[field] ?? field} check (${CHECK_RESULTS[value]})`);
  }
  if (exam.web_cam && !session.has_id_card) missing.push('a photo of your ID card');
  if (exam.web_cam && !session.has_face_photo) missing.push('a photo of your face');
  return missing;
}

function updateSetup() {
  if (view === undefined) return;
  const { session } = view;
  for (const item of document.querySelectorAll('[data-check]')) {
    const field = item.getAttribute('data-check') ?? '';
    const value = /** @type {CheckValue} */ (session[/** @type {keyof RoomSession} */ (field)]);
    const required = session.required_checks.includes(field);
    const speed =
      field === 'bandwidth_check' && session.bandwidth_speed !== null && value !== 'not_started'
        ? ` (${session.bandwidth_speed} Mbit/s${value === 'failed' ? ', slow' : ''})`
        : '';
    item.textContent = `${CHECK_NAMES[field]}: ${CHECK_RESULTS[value] ?? value}${speed}${required ? '' : ' (optional)'}`;
    item.className = `result ${value}`;
  }
  updateBandwidthAdvice();
  syncTerms();
  for (const kind of /** @type {const} */ (['id_card', 'face_photo'])) {
    const state = document.getElementById(`${kind}-state`);
    if (state === null) continue;
    const has = kind === 'id_card' ? session.has_id_card : session.has_face_photo;
    state.textContent = has ? 'Photo saved.' : 'No photo yet.';
    updatePhotoButton(kind, has);
  }
  const missing = missingForStart();
  const start = /** @type {HTMLButtonElement} */ (byId('start-exam'));
  const awaiting = awaitingAdmission();
  start.disabled = missing.length > 0;
  start.hidden = awaiting;
  byId('admission').hidden = !awaiting;
  updateLiveState();
  byId('start-help').textContent =
    missing.length > 0
      ? `Still needed before you can start: ${missing.join('; ')}.`
      : awaiting
        ? 'Everything is ready. Your proctor checks your ID before you can start.'
        : termsPending()
          ? 'Accept the terms above, then start. When you start, the clock runs and the instructions appear.'
          : slowConnectionAccepted() && !session.skip_requirements
            ? 'You can start, but your connection is slow: parts of your recording may reach the server late. Keep this page open until the end. When you start, the clock runs and the instructions appear.'
            : 'Everything is ready. When you start, the clock runs and the instructions appear.';
}

/**
 * Saves check results and the browser's description, then shows the answer.
 * @param {Record<string, unknown>} results
 */
async function saveChecks(results) {
  accept(await callView('PUT', '/checks', { ...results, ...clientDetails() }));
}

function clientDetails() {
  const agent = navigator.userAgent;
  const browser = /(Edg|OPR|Chrome|Chromium|Firefox|Version)\/([\d.]+)/.exec(agent);
  const system = /Windows|Mac OS X|Android|iPhone|iPad|CrOS|Linux/.exec(agent);
  return {
    browser: browser
      ? ({ Edg: 'Edge', OPR: 'Opera', Version: 'Safari' }[browser[1] ?? ''] ?? browser[1])
      : 'unknown',
    browser_version: browser ? browser[2] : '',
    operating_system: system ? system[0] : 'unknown',
  };
}

async function checkCamera() {
  try {
    cameraStream?.getTracks().forEach((track) => track.stop());
    cameraStream = await navigator.mediaDevices.getUserMedia({
      video: { width: 640, height: 480 },
      audio: true,
    });
  } catch (error) {
    await saveChecks({ webcam_check: 'failed', microphone_check: 'failed' });
    throw new Error(
      `Your camera or microphone could not be used (${error instanceof Error ? error.message : String(error)}). Allow them in your browser’s site settings and try again.`,
      { cause: error },
    );
  }
  const hasVideo = cameraStream.getVideoTracks().length > 0;
  const hasAudio = cameraStream.getAudioTracks().length > 0;
  const preview = document.getElementById('camera-preview');
  if (preview instanceof HTMLVideoElement) {
    preview.srcObject = cameraStream;
    preview.hidden = false;
    byId('camera-placeholder').hidden = true;
  }
  publishLive();
  await saveChecks({
    webcam_check: hasVideo ? 'succeeded' : 'failed',
    microphone_check: hasAudio ? 'succeeded' : 'failed',
  });
  announce(hasVideo && hasAudio ? 'Camera and microphone work.' : 'Camera or microphone missing.');
}

async function checkScreen() {
  try {
    screenStream?.getTracks().forEach((track) => track.stop());
    screenStream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
  } catch (error) {
    await saveChecks({ screenshare_check: 'failed' });
    throw new Error(
      `Your screen could not be shared (${error instanceof Error ? error.message : String(error)}). Try again and choose your entire screen.`,
      { cause: error },
    );
  }
  const settings = screenStream.getVideoTracks()[0]?.getSettings();
  const whole = settings?.displaySurface === undefined || settings.displaySurface === 'monitor';
  if (whole) publishLive();
  await saveChecks({ screenshare_check: whole ? 'succeeded' : 'failed' });
  if (!whole) throw new Error('Please share your entire screen, not a window or a tab.');
  announce('Screen sharing works.');
}

/** Plays the tone and asks; the answer is saved by answerSound. */
function checkSpeakers() {
  const context = new AudioContext();
  const tone = context.createOscillator();
  const gain = context.createGain();
  gain.gain.value = 0.2;
  tone.frequency.value = 660;
  tone.connect(gain).connect(context.destination);
  tone.start();
  tone.stop(context.currentTime + 0.8);
  tone.addEventListener('ended', () => void context.close());
  const question = byId('sound-question');
  question.hidden = false;
  byId('sound-yes').focus();
  return Promise.resolve();
}

async function answerSound(/** @type {boolean} */ heard) {
  await saveChecks({ speakers_check: heard ? 'succeeded' : 'failed' });
  byId('sound-question').hidden = true;
  byId('run-speakers').focus();
}

/**
 * Times the download of the probe, showing its progress as it arrives. A slow line is measured on
 * what arrived within MEASURE_LIMIT_MS, so the check never keeps a student waiting for minutes.
 * Saves the result; throws with advice when the server could not be reached at all.
 */
async function checkBandwidth() {
  announce('Measuring your connection…');
  const box = byId('bandwidth-box');
  const progress = /** @type {HTMLProgressElement} */ (byId('bandwidth-progress'));
  const percent = byId('bandwidth-percent');
  byId('bandwidth-advice').hidden = true;
  box.hidden = false;
  progress.value = 0;
  percent.textContent = '0%';
  const controller = new AbortController();
  const limit = window.setTimeout(() => controller.abort(), MEASURE_LIMIT_MS);
  const began = performance.now();
  let received = 0;
  let total = 2 * 1024 * 1024;
  try {
    const response = await fetch(`/room/assets/bandwidth-probe?t=${Date.now()}`, {
      cache: 'no-store',
      signal: controller.signal,
    });
    total = Number(response.headers.get('content-length')) || total;
    const reader = response.body?.getReader();
    if (reader === undefined) throw new Error('no body');
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
      const share = Math.min(100, Math.round((received / total) * 100));
      progress.value = share;
      percent.textContent = `${share}% (${formatSize(received)} of ${formatSize(total)})`;
    }
  } catch (error) {
    if (!controller.signal.aborted && received === 0) {
      setReachable(false);
      throw new Error(
        'The connection check could not reach the server. Check that you are online (Wi-Fi or cable connected), then press “Measure your connection” again.',
        { cause: error },
      );
    }
    // Cut off at the time limit (or broken off midway): what arrived is the measurement.
  } finally {
    window.clearTimeout(limit);
  }
  const seconds = Math.max((performance.now() - began) / 1000, 0.001);
  const mbit = Math.round(((received * 8) / seconds / 1e6) * 100) / 100;
  // Done, whether the whole probe arrived or the time limit cut it short: say what was measured.
  progress.value = 100;
  percent.textContent = `Done: ${formatSize(received)} in ${seconds.toFixed(seconds < 1 ? 2 : 1)} s`;
  await saveChecks({ bandwidth_check: mbit >= MIN_MBIT ? 'succeeded' : 'failed', bandwidth_speed: mbit });
  announce(
    mbit >= MIN_MBIT
      ? `Your connection: ${mbit} Mbit/s. That is enough.`
      : `Your connection is slow: ${mbit} Mbit/s. See the advice below the connection check.`,
  );
}

/** True when the exam lets a measured slow connection start (docs/room.md): not a live-proctored one. */
function slowConnectionAccepted() {
  if (view === undefined) return false;
  const { session, exam } = view;
  return (
    exam.type !== 'live_proctoring' &&
    session.bandwidth_check === 'failed' &&
    session.bandwidth_speed !== null
  );
}

/** What to try on a slow connection, and whether the student may start anyway. */
function updateBandwidthAdvice() {
  const advice = document.getElementById('bandwidth-advice');
  if (advice === null || view === undefined) return;
  const { session } = view;
  const slow = session.bandwidth_check === 'failed' && session.bandwidth_speed !== null;
  advice.hidden = !slow;
  if (!slow || advice.dataset.speed === String(session.bandwidth_speed)) return;
  advice.dataset.speed = String(session.bandwidth_speed);
  const accepted = slowConnectionAccepted();
  advice.replaceChildren(
    h('p', {}, [
      `Your connection measured ${session.bandwidth_speed} Mbit/s; at least ${MIN_MBIT} Mbit/s is recommended. To speed it up:`,
    ]),
    h('ul', {}, [
      h('li', {}, ['Use a network cable, or move closer to your Wi-Fi router.']),
      h('li', {}, [
        'Close other tabs and programs that use the network (video, calls, cloud sync, downloads).',
      ]),
      h('li', {}, ['Ask others on your network to pause large downloads and streaming.']),
      h('li', {}, ['Then press “Measure your connection” again.']),
    ]),
    h('p', { id: 'bandwidth-way-forward' }, [
      accepted
        ? 'You can also start with this connection: your recording is kept on this computer and sent as fast as the connection allows. Keep this page open until the finished page confirms that everything arrived.'
        : 'This exam is proctored live and needs a faster connection to start. If it stays slow after these steps, contact your exam office.',
    ]),
  );
}

async function takePhoto(/** @type {'id_card' | 'face_photo'} */ kind) {
  const preview = /** @type {HTMLVideoElement} */ (byId('camera-preview'));
  if (cameraStream === undefined || preview.videoWidth === 0)
    throw new Error('Test your camera first: the photo is taken from its picture.');
  const canvas = h('canvas');
  canvas.width = preview.videoWidth;
  canvas.height = preview.videoHeight;
  canvas.getContext('2d')?.drawImage(preview, 0, 0);
  /** @type {Blob | null} */
  const blob = await new Promise((resolve) => canvas.toBlob(resolve, 'image/jpeg', 0.9));
  if (blob === null) throw new Error('The photo could not be taken. Try again.');
  const form = new FormData();
  form.append('file', blob, `${kind}.jpg`);
  accept(await callView('POST', `/${kind}`, form));
  const frame = byId(`${kind}-frame`);
  const old = frame.querySelector('img');
  if (old !== null) URL.revokeObjectURL(old.src);
  const image = h('img', {
    id: `${kind}-image`,
    src: URL.createObjectURL(blob),
    alt: kind === 'id_card' ? 'Your ID card photo, as saved' : 'Your face photo, as saved',
  });
  frame.replaceChildren(image);
  frame.classList.remove('empty');
  frame.removeAttribute('aria-hidden');
  announce(kind === 'id_card' ? 'ID card photo saved.' : 'Face photo saved.');
  if (kind === 'face_photo' && view?.automated_flags?.enabled) rememberFacePhoto(canvas);
}

/** True once this page itself started the exam (not a reload of a started one). */
let startedHere = false;

/**
 * The photo button says what pressing it does: take the photo, or once there is one, take it again.
 * The visible words come first in the button's name; the hidden rest says which photo.
 * @param {'id_card' | 'face_photo'} kind
 * @param {boolean} has
 */
function updatePhotoButton(kind, has) {
  const button = document.getElementById(`take-${kind}`);
  if (button === null || button.dataset.has === String(has)) return;
  button.dataset.has = String(has);
  const which = kind === 'id_card' ? 'of your ID card' : 'of your face';
  button.replaceChildren(
    ...(has
      ? ['Retake photo', h('span', { class: 'visually-hidden' }, [` ${which}`])]
      : [`Take a photo ${which}`]),
  );
}

async function startExam() {
  if (termsPending()) {
    showTermsError('Tick the box to accept the terms before you start.');
    byId('terms-accepted').focus();
    return;
  }
  let started;
  try {
    started = await callView('POST', '/start', view?.exam.terms ? { terms_accepted: true } : {});
  } catch (error) {
    // Terms the exam office added after this page loaded: show them, and ask for them.
    if (error instanceof ApiError && error.status === 422 && error.message.includes("'terms_accepted'")) {
      await reload();
      showTermsError('Read the terms and tick the box to accept them before you start.');
      document.getElementById('terms-accepted')?.focus();
      return;
    }
    throw error;
  }
  startedHere = true;
  accept(started);
  announce('The exam has started.');
  // Still within the click that started the exam, so the browser lets the tab open.
  if (started.lti_start_assessment) window.open(started.lti_start_assessment, '_blank', 'noopener');
}

// ---- The phone -----------------------------------------------------------------------------------
//
// In a `mobile_cam` exam the student's phone is a second camera (docs/room.md). The phone talks to
// the server, never to this page: the page shows how to open the phone camera page (the QR code,
// or the short address and the PIN) and follows the phone's state in the view, read every
// MOBILE_POLL_MS.

/** What the setup says of the phone, by its status. @type {Record<MobileStatus, string>} */
const PHONE_SETUP_TEXT = {
  not_paired: 'Waiting for your phone',
  paired: 'Phone connected — run the camera check on the phone',
  streaming: 'Phone camera is sending video',
  lost: 'The phone is not responding — check that the phone page is open and the phone is online',
};

/** The header's phone indicator during the exam: its look and its words, by status. */
/** @type {Record<MobileStatus, [string, string]>} */
const PHONE_EXAM_STATE = {
  not_paired: ['off', 'Phone: not connected'],
  paired: ['connecting', 'Phone: connected, not recording yet'],
  streaming: ['live', 'Phone: recording'],
  lost: ['off', 'Phone: not responding'],
};

/** The status the phone was in when the exam's "phone away" alert last showed, or null. */
/** @type {MobileStatus | null} */
let phoneAway = null;

/**
 * A short fingerprint of the pairing URL for the QR code's address: a new pairing token makes a
 * new address (the browser cannot show the old code from its cache), and the token itself stays
 * out of the image's address.
 * @param {string} text
 */
function fingerprint(text) {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index += 1) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16);
}

/** The QR code's address for this pairing URL. */
function qrSource(/** @type {string | null} */ pairingUrl) {
  return `${api}/mobile/qr.svg?v=${fingerprint(pairingUrl ?? '')}`;
}

/**
 * The QR code and, for a phone that cannot scan, the address and the PIN. `prefix` keeps the ids
 * of the setup's copy and the exam's copy apart.
 * @param {string} prefix
 * @param {RoomMobile} mobile
 */
function pairingBlock(prefix, mobile) {
  const image = h('img', {
    id: `${prefix}-qr`,
    class: 'qr',
    src: qrSource(mobile.pairing_url),
    alt: 'QR code that opens the phone camera page',
    width: '192',
    height: '192',
  });
  // Never a broken image: a code that cannot be loaded gives way to a sentence.
  const failed = h('p', { id: `${prefix}-qr-failed`, class: 'placeholder', hidden: true }, [
    'The code could not be shown: use the address and the PIN instead.',
  ]);
  image.addEventListener('error', () => {
    image.hidden = true;
    failed.hidden = false;
  });
  image.addEventListener('load', () => {
    image.hidden = false;
    failed.hidden = true;
  });
  return h('div', { class: 'pairing', id: `${prefix}-pairing` }, [
    h('div', { class: 'qr-frame' }, [image, failed]),
    h('p', { class: 'pairing-manual', id: `${prefix}-pairing-manual` }, [
      'Or open ',
      h('strong', { class: 'address', 'data-pairing': 'address' }, [mobile.pairing_address]),
      ' on your phone and type the PIN ',
      h('strong', { class: 'pin', 'data-pairing': 'pin' }, [mobile.pin_code ?? '']),
      ' and your email.',
    ]),
  ]);
}

/** The setup's "Your phone" line of the checklist: how to pair, the phone's state, its check. */
function phoneCheckItem(/** @type {RoomMobile} */ mobile) {
  const renew = h('button', { type: 'button', id: 'renew-pairing', 'aria-describedby': 'renew-help' }, [
    'Get a new code',
  ]);
  renew.addEventListener('click', () => void act(renew, renewPairing));
  return h('li', { class: 'check phone', id: 'check-phone' }, [
    h('h4', { id: 'phone-heading' }, ['Your phone']),
    h('p', { class: 'help', id: 'help-phone' }, [
      'This exam also records you with your phone’s camera, from the side. Scan this code with your phone’s camera: it opens the phone camera page, which runs the phone’s camera check. Keep that page open and the phone plugged in until the exam ends.',
    ]),
    pairingBlock('setup', mobile),
    h('p', { id: 'phone-status', class: 'phone-status', role: 'status', 'aria-live': 'polite' }, [
      PHONE_SETUP_TEXT[mobile.status],
    ]),
    h('p', { id: 'phone-device', class: 'help', hidden: true }),
    h('ul', { class: 'results', id: 'results-phone' }, [
      h('li', { 'data-check': 'mobile_check' }, [
        `${CHECK_NAMES.mobile_check}: ${CHECK_RESULTS.not_started}`,
      ]),
    ]),
    renew,
    h('p', { id: 'renew-help', class: 'help' }, [
      'Use a new code if this one does not open on your phone, or if someone else may have seen it. The phone link of the old code stops working at once: a phone that opened it must scan the new code.',
    ]),
  ]);
}

/** Replaces the pairing token; the view that comes back has the new code. */
async function renewPairing() {
  accept(await callView('POST', '/mobile/pairing'));
  announce('New code ready. The old phone link no longer works: scan the new code with your phone.');
}

/** What the setup says of the phone now. */
function phoneSetupText(/** @type {RoomMobile} */ mobile) {
  // The check clip made it streaming for a moment; a phone that passed and waits is not asked again.
  if (mobile.status === 'paired' && view?.session.mobile_check === 'succeeded')
    return 'Phone connected — its camera check passed. Keep the phone page open.';
  return PHONE_SETUP_TEXT[mobile.status];
}

/** Shows the current code, address and PIN in every copy of the pairing block. */
function updatePairing(/** @type {RoomMobile} */ mobile) {
  const source = qrSource(mobile.pairing_url);
  for (const image of document.querySelectorAll('img.qr')) {
    if (image.getAttribute('src') !== source) image.setAttribute('src', source);
  }
  for (const element of document.querySelectorAll('[data-pairing]')) {
    const text =
      element.getAttribute('data-pairing') === 'pin' ? (mobile.pin_code ?? '') : mobile.pairing_address;
    if (element.textContent !== text) element.textContent = text;
  }
}

/**
 * After every new view: shows the phone's state in the setup, or during the exam in the header's
 * indicator and, when the phone is away, an alert with the code to open the phone page again.
 */
function updatePhone() {
  const mobile = view?.mobile;
  const indicator = document.getElementById('phone-indicator');
  if (mobile == null || shownStage === 'finished') {
    if (indicator !== null) indicator.hidden = true;
    return;
  }
  updatePairing(mobile);
  const status = document.getElementById('phone-status');
  if (status !== null) {
    const text = phoneSetupText(mobile);
    if (status.textContent !== text) status.textContent = text;
    status.className = `phone-status ${mobile.status}`;
  }
  const device = document.getElementById('phone-device');
  if (device !== null) {
    const text = mobile.device ? `Your phone: ${mobile.device}` : '';
    if (device.textContent !== text) device.textContent = text;
    device.hidden = text === '';
  }
  if (shownStage === 'exam') updatePhoneInExam(mobile);
  else if (indicator !== null) indicator.hidden = true;
}

/** The phone indicator in the header (built once), with a link to what to do when the phone is away. */
function phoneIndicator() {
  const existing = document.getElementById('phone-indicator');
  if (existing !== null) return existing;
  const indicator = h('p', { id: 'phone-indicator', class: 'phone-state' }, [
    h('span', { id: 'phone-indicator-text' }),
    h('a', { id: 'phone-indicator-help', href: '#phone-away', hidden: true }, ['What to do']),
  ]);
  byId('timer').before(indicator);
  return indicator;
}

/**
 * During the exam: the header says what the phone does; a phone that is lost (or never connected)
 * gets an alert saying what to do, with the code to open the phone page again; its return takes
 * the alert away and is announced.
 * @param {RoomMobile} mobile
 */
function updatePhoneInExam(mobile) {
  const indicator = phoneIndicator();
  const [look, words] = PHONE_EXAM_STATE[mobile.status];
  indicator.hidden = false;
  indicator.className = `phone-state ${look}`;
  const text = byId('phone-indicator-text');
  if (text.textContent !== words) text.textContent = words;
  const away = mobile.status === 'lost' || mobile.status === 'not_paired';
  byId('phone-indicator-help').hidden = !away;
  const box = document.getElementById('phone-away');
  const message = document.getElementById('phone-away-text');
  if (box === null || message === null) return;
  if (away) {
    const sentence =
      mobile.status === 'lost'
        ? 'Your phone stopped recording. Open the phone page again (scan the code below) and keep it plugged in; the exam continues meanwhile.'
        : 'Your phone is not connected. Open the phone page (scan the code below) and keep it plugged in; the exam continues meanwhile.';
    if (message.textContent !== sentence) message.textContent = sentence;
    box.hidden = false;
    phoneAway = mobile.status;
    return;
  }
  box.hidden = true;
  message.textContent = '';
  if (phoneAway !== null && mobile.status === 'streaming') {
    announce(phoneAway === 'lost' ? 'Phone recording again.' : 'Phone recording.');
    phoneAway = null;
  }
}

/** The exam's box for a phone that is away: the alert and the code to open the phone page again. */
function phoneAwayBox(/** @type {RoomMobile} */ mobile) {
  return h('div', { class: 'phone-away', id: 'phone-away', tabindex: '-1', hidden: true }, [
    h('p', { id: 'phone-away-text', class: 'phone-away-text', role: 'alert' }),
    pairingBlock('exam', mobile),
  ]);
}

// ---- Exam ---------------------------------------------------------------------------------------

function examStage() {
  if (view === undefined) throw new Error('no view');
  const { exam } = view;
  const section = h('section', { class: 'stage', id: 'stage-exam', 'aria-labelledby': 'exam-heading' });
  section.append(h('h2', { id: 'exam-heading' }, ['Exam in progress']));
  const recording = h('div', { class: 'recording', id: 'recording' }, [
    h('p', { id: 'recording-state' }, ['Recording is not running.']),
  ]);
  const resume = h('button', { type: 'button', id: 'resume-recording', hidden: true }, ['Resume recording']);
  resume.addEventListener('click', () => void act(resume, resumeRecording, 'recording-state'));
  const fullscreen = h('button', { type: 'button', id: 'enter-fullscreen' }, ['Full screen']);
  fullscreen.addEventListener(
    'click',
    () => void act(fullscreen, () => document.documentElement.requestFullscreen()),
  );
  recording.append(resume, ' ', fullscreen);
  section.append(recording);
  if (view.mobile) section.append(phoneAwayBox(view.mobile));

  // LTI Proctoring Services: the questions are in the learning platform, opened in a tab of its own
  // so that this one keeps recording (docs/lti.md).
  if (view.lti_start_assessment) {
    section.append(
      h('section', { 'aria-labelledby': 'assessment-heading', class: 'assessment' }, [
        h('h3', { id: 'assessment-heading' }, ['Your assessment']),
        h('p', { id: 'assessment-help', class: 'help' }, [
          'The questions are in your learning platform and open in a new tab. Keep this tab open as well until you finish: this is where your exam is proctored. If the new tab did not open, or you closed it, use this link.',
        ]),
        h('p', {}, [
          h(
            'a',
            {
              id: 'open-assessment',
              href: view.lti_start_assessment,
              target: '_blank',
              rel: 'noopener',
              'aria-describedby': 'assessment-help',
            },
            ['Open the assessment in a new tab'],
          ),
        ]),
      ]),
    );
  }

  const instructions = h('section', { 'aria-labelledby': 'instructions-heading', class: 'instructions' }, [
    h('h3', { id: 'instructions-heading' }, ['Instructions']),
  ]);
  const content = h('div', { id: 'instructions-content', class: 'document' });
  instructions.append(content);
  section.append(instructions);

  if (exam.upload_answers) {
    const answers = h('section', { 'aria-labelledby': 'answers-heading' }, [
      h('h3', { id: 'answers-heading' }, ['Hand in your answers']),
    ]);
    const input = h('input', { type: 'file', id: 'answer-file', 'aria-describedby': 'answer-help' });
    const upload = h('button', { type: 'button', id: 'upload-answer' }, ['Upload file']);
    upload.addEventListener('click', () => void act(upload, uploadAnswer));
    const progress = h('progress', {
      id: 'upload-progress',
      max: '100',
      value: '0',
      'aria-labelledby': 'upload-progress-label',
    });
    answers.append(
      h('p', { id: 'answer-help', class: 'help' }, [
        'PDF, images, text, zip or office documents. You can hand in several files.',
      ]),
      h('label', { for: 'answer-file' }, ['Answer file']),
      input,
      upload,
      h('div', { class: 'progress', id: 'upload-box', hidden: true }, [
        h('span', { id: 'upload-progress-label' }, ['Upload progress']),
        ' ',
        progress,
        ' ',
        h('span', { id: 'upload-percent' }, ['0%']),
      ]),
      h('ul', { id: 'uploaded-files', 'aria-label': 'Files handed in' }),
    );
    section.append(answers);
  }

  const finish = h('button', { type: 'button', id: 'finish-exam', class: 'primary' }, ['Finish the exam']);
  finish.addEventListener('click', () =>
    /** @type {HTMLDialogElement} */ (byId('finish-dialog')).showModal(),
  );
  const confirm = h('button', { type: 'button', id: 'finish-confirm', class: 'primary' }, [
    'Yes, finish now',
  ]);
  const cancel = h('button', { type: 'button', id: 'finish-cancel' }, ['No, keep working']);
  const dialog = h(
    'dialog',
    {
      id: 'finish-dialog',
      'aria-labelledby': 'finish-dialog-heading',
      'aria-describedby': 'finish-dialog-text',
    },
    [
      h('h3', { id: 'finish-dialog-heading' }, ['Finish the exam?']),
      h('p', { id: 'finish-dialog-text' }, [
        'You cannot return to the exam or hand in more files afterwards.',
      ]),
      confirm,
      ' ',
      cancel,
    ],
  );
  cancel.addEventListener('click', () => dialog.close());
  confirm.addEventListener('click', () => {
    dialog.close();
    void act(finish, finishExam);
  });
  section.append(
    h('section', { 'aria-labelledby': 'end-heading' }, [
      h('h3', { id: 'end-heading' }, ['When you are done']),
      finish,
    ]),
    dialog,
  );
  queueMicrotask(beginExam);
  return section;
}

let examBegun = false;

/** Once per page: the exam stage is up, so recording starts (or waits for a click after a reload). */
function beginExam() {
  if (examBegun || view === undefined) return;
  examBegun = true;
  watchEvents();
  const live = (/** @type {MediaStream | undefined} */ stream) =>
    stream?.getTracks().some((track) => track.readyState === 'live') === true;
  const { exam } = view;
  // Opened on a started exam: the page was reloaded (or opened again), which staff should know.
  if (!startedHere) void sendEvent('page_reloaded');
  const needCamera = exam.web_cam && !live(cameraStream);
  const needScreen = exam.screen_share && !live(screenStream);
  if (needCamera || needScreen) {
    // No streams (a reload lost them, or the checks were skipped): the browser shares the camera
    // and the screen only after a click.
    const button = byId('resume-recording');
    button.textContent = startedHere ? 'Start recording' : 'Resume recording';
    button.hidden = false;
    byId('recording-state').textContent = startedHere
      ? 'Recording has not started yet. Press “Start recording” and allow the browser to share.'
      : 'Recording stopped when the page was reloaded. Press “Resume recording”.';
    return;
  }
  startRecording();
}

async function resumeRecording() {
  if (view === undefined) return;
  if (view.exam.web_cam)
    cameraStream = await navigator.mediaDevices.getUserMedia({
      video: { width: 640, height: 480 },
      audio: true,
    });
  if (view.exam.screen_share)
    screenStream = await navigator.mediaDevices.getDisplayMedia({ video: true, audio: false });
  byId('resume-recording').hidden = true;
  startRecording();
  publishLive();
}

function updateExam() {
  if (view === undefined) return;
  const content = byId('instructions-content');
  const html = view.document?.content_html ?? '';
  if (content.dataset.html !== html) {
    content.dataset.html = html;
    // Sanitised by the server (sanitize-html); the page's CSP also forbids any script in it.
    content.innerHTML = html === '' ? '<p>This exam has no instructions.</p>' : html;
    nameInstructions(content);
  }
}

/**
 * Shows the word "Instructions" once: a document that opens with its own "Instructions" heading
 * (as exam offices often write it) names the section itself, and the page's heading steps aside;
 * otherwise the page's heading stays.
 * @param {HTMLElement} content
 */
function nameInstructions(content) {
  const heading = byId('instructions-heading');
  const first = content.firstElementChild;
  const own =
    first !== null &&
    /^H[1-6]$/.test(first.tagName) &&
    /^\s*instructions?\s*:?\s*$/i.test(first.textContent ?? '');
  heading.hidden = own;
  const section = content.closest('section');
  if (own && first instanceof HTMLElement) {
    first.id = 'instructions-own-heading';
    section?.setAttribute('aria-labelledby', first.id);
  } else {
    section?.setAttribute('aria-labelledby', 'instructions-heading');
  }
}

/** Asks the server for the time and the status; a finished session (time up, ended by staff) shows as such. */
async function poll() {
  const version = viewVersion;
  try {
    const answer = await callView('GET', '');
    if (answer.session.status === 'exam_finished') await stopRecording();
    // A newer view (a check saved meanwhile, say) arrived while this read was on its way: showing
    // this one would step the page back for a moment.
    if (viewVersion !== version && answer.session.status === view?.session.status) return;
    accept(answer);
  } catch (error) {
    // Unreachable: the next poll tries again. Anything else (the exam removed, say) is shown.
    if (error instanceof ApiError && error.status === 0) return;
    showError(error instanceof Error ? error.message : String(error));
  }
}

/**
 * After the countdown reached zero: reads the status every 2 seconds until the server, whose clock
 * decides, has finished the session (the two clocks may differ by a moment), for a minute at most.
 */
async function awaitTimeUp() {
  for (let round = 0; round < 30 && view?.session.status === 'exam_started'; round += 1) {
    await poll();
    if (view?.session.status !== 'exam_started') return;
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

// ---- Timer ----------------------------------------------------------------------------------------

function secondsLeft() {
  if (view === undefined || view.session.time_left_seconds === null) return null;
  // Paused by the proctor: the server's figure stands still until they resume the clock.
  if (clockPaused()) return view.session.time_left_seconds;
  return Math.max(0, Math.round(view.session.time_left_seconds - (performance.now() - viewAt) / 1000));
}

/** @param {number} seconds */
function clockText(seconds) {
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const pad = (/** @type {number} */ n) => String(n).padStart(2, '0');
  return hours > 0 ? `${hours}:${pad(minutes)}:${pad(rest)}` : `${pad(minutes)}:${pad(rest)}`;
}

/** @type {Set<number>} */
const warned = new Set();
let timeUpHandled = false;

function updateTimer() {
  const timer = byId('timer');
  const left = secondsLeft();
  const running = view?.session.status === 'exam_started';
  timer.hidden = !running;
  if (!running) {
    window.clearInterval(tickTimer);
    tickTimer = undefined;
    return;
  }
  const text = byId('time-left');
  const paused = clockPaused();
  timer.classList.toggle('paused', paused);
  const label = timer.querySelector('.timer-label');
  if (label !== null) label.textContent = paused ? 'Time left (clock paused)' : 'Time left';
  if (left === null) {
    text.textContent = 'no limit';
    return;
  }
  text.textContent = clockText(left);
  text.setAttribute('datetime', `PT${left}S`);
  timer.classList.toggle('low', left <= 300);
  for (const minutes of [10, 5, 1]) {
    if (left <= minutes * 60 && left > 0 && !warned.has(minutes)) {
      warned.add(minutes);
      announce(`${minutes} minute${minutes === 1 ? '' : 's'} left.`);
    }
  }
  tickTimer ??= window.setInterval(updateTimer, 1000);
  if (left === 0 && !timeUpHandled) {
    timeUpHandled = true;
    announce('Time is up.');
    void stopRecording().then(awaitTimeUp);
  }
}

// ---- Recording --------------------------------------------------------------------------------

/**
 * One MediaRecorder and the queue of its chunks. Chunks are sent one at a time, in order, each
 * retried until the server acknowledges it; the server's `next_sequence` says where to go on.
 */
class Recorder {
  /**
   * @param {RecordingSource} source
   * @param {MediaStream} stream
   * @param {number} nextSequence
   */
  constructor(source, stream, nextSequence) {
    this.source = source;
    this.sequence = nextSequence;
    /** @type {Blob[]} */
    this.queue = [];
    /** @type {Promise<void> | undefined} the send in progress */
    this.draining = undefined;
    /** Chunks the server refused because the exam had ended before they arrived. */
    this.lost = 0;
    const type = ['video/webm;codecs=vp8,opus', 'video/webm;codecs=vp8', 'video/webm', 'video/mp4'].find(
      (candidate) => MediaRecorder.isTypeSupported(candidate),
    );
    /** @type {MediaRecorderOptions & { videoKeyFrameIntervalDuration?: number }} */
    const options = {
      ...(type === undefined ? {} : { mimeType: type }),
      videoBitsPerSecond: source === 'screen' ? 1_500_000 : 800_000,
      // A key frame every 2 s (Chromium; ignored elsewhere): the finalised recording can be seeked
      // to within 2 s, and a damaged chunk costs no more than the seconds up to the next key frame.
      videoKeyFrameIntervalDuration: 2000,
    };
    this.recorder = new MediaRecorder(stream, options);
    this.recorder.addEventListener('dataavailable', (event) => {
      if (event.data.size === 0) return;
      this.queue.push(event.data);
      updateRecordingState();
      void this.drain();
    });
    /** @type {Promise<void>} */
    this.done = new Promise((resolve) => this.recorder.addEventListener('stop', () => resolve()));
    this.recorder.start(CHUNK_MS);
  }

  /**
   * Sends the queued chunks in order; while a send runs, a call returns that same send. Resolves
   * when the queue is empty (or the server takes no more chunks).
   */
  drain() {
    this.draining ??= this.send().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  async send() {
    let delay = 1000;
    while (this.queue.length > 0) {
      const chunk = this.queue[0];
      if (chunk === undefined) break;
      const form = new FormData();
      form.append('sequence', String(this.sequence));
      form.append('source', this.source);
      form.append('file', chunk, `${this.source}-${this.sequence}.webm`);
      try {
        const ack = /** @type {{ next_sequence: number }} */ (await call('POST', '/recordings', form));
        this.sequence = ack.next_sequence;
        this.queue.shift();
        delay = 1000;
        updateRecordingState();
      } catch (error) {
        // Finished (time up, or ended by staff): the server takes no more, so nothing is kept.
        if (
          error instanceof ApiError &&
          error.status === 409 &&
          /accepted only while|finished/.test(error.message)
        ) {
          this.lost += this.queue.length;
          this.queue.length = 0;
          updateRecordingState();
          // Ended elsewhere (staff, or the learning platform's LtiEndAssessment): show it now, not
          // at the next poll.
          void poll();
          break;
        }
        if (error instanceof ApiError && error.status === 409) {
          const expected = /chunk (\d+)/.exec(error.message);
          if (expected) this.sequence = Number(expected[1]);
          continue;
        }
        // Woken early when the browser reports the connection back.
        await pause(delay);
        delay = Math.min(delay * 2, 30000);
      }
    }
  }

  /** Stops the recorder and waits until its last chunk is queued. */
  async stop() {
    if (this.recorder.state !== 'inactive') this.recorder.stop();
    await this.done;
  }
}

function startRecording() {
  if (view === undefined) return;
  const { exam, session } = view;
  if (exam.web_cam && cameraStream !== undefined && !recorders.has('webcam')) {
    recorders.set('webcam', new Recorder('webcam', cameraStream, session.recording_chunks_count));
  }
  if (exam.screen_share && screenStream !== undefined && !recorders.has('screen')) {
    recorders.set('screen', new Recorder('screen', screenStream, session.screen_recording_chunks_count));
  }
  watchTracks();
  updateRecordingState();
  void runFlags();
}

function updateRecordingState() {
  updateConnection();
  const state = document.getElementById('recording-state');
  if (state === null) return;
  if (recorders.size === 0) {
    state.textContent =
      view?.exam.web_cam || view?.exam.screen_share
        ? 'Recording is not running.'
        : view?.mobile
          ? 'This computer records nothing in this exam: your phone does.'
          : 'This exam is not recorded.';
    return;
  }
  const sources = [...recorders.keys()]
    .map((source) => (source === 'webcam' ? 'camera' : 'screen'))
    .join(' and ');
  // The connection line in the header counts the waiting parts; this line says what is recorded.
  state.textContent = `Recording your ${sources}.`;
}

/** Stops every recorder and sends what is queued, waiting at most FLUSH_LIMIT_MS. */
async function stopRecording() {
  const all = [...recorders.values()];
  for (const recorder of all) stoppedRecorders.add(recorder);
  await Promise.all(all.map((recorder) => recorder.stop()));
  const flushed = Promise.all(all.map((recorder) => recorder.drain()));
  await Promise.race([flushed, new Promise((resolve) => setTimeout(resolve, FLUSH_LIMIT_MS))]);
  recorders.clear();
}

// ---- Events -----------------------------------------------------------------------------------

/** Events waiting for the connection, each with its offset from the start in seconds. */
/** @type {{ type: string, offset_time: number | undefined }[]} */
const pendingEvents = [];

function offsetNow() {
  if (view?.session.start_time == null) return undefined;
  const serverNow = Date.parse(view.server_time) + (performance.now() - viewAt);
  return Math.max(0, Math.floor((serverNow - Date.parse(view.session.start_time)) / 1000));
}

async function sendEvent(/** @type {string} */ type) {
  pendingEvents.push({ type, offset_time: offsetNow() });
  await flushEvents();
}

/** The send in progress: sends run one after another, so no event goes twice or is skipped. */
/** @type {Promise<void>} */
let eventsSent = Promise.resolve();

/** Sends the waiting events in order, after any send already running. Returns when done. */
function flushEvents() {
  eventsSent = eventsSent.then(sendPendingEvents);
  return eventsSent;
}

async function sendPendingEvents() {
  while (pendingEvents.length > 0 && view?.session.status === 'exam_started') {
    const event = pendingEvents[0];
    if (event === undefined) break;
    try {
      await call('POST', '/events', event.offset_time === undefined ? { type: event.type } : event);
      pendingEvents.shift();
    } catch (error) {
      if (error instanceof ApiError && error.status === 0) return; // sent again when back online
      pendingEvents.shift(); // refused for good (finished, invalid): nothing to retry
    }
  }
}

let focusLost = false;
let lastCopy = 0;

function watchEvents() {
  // A reload or a closed tab hides the page too; that is reported as page_reloaded when it reopens.
  let unloading = false;
  window.addEventListener('beforeunload', () => (unloading = true));
  window.addEventListener('pagehide', () => (unloading = true));
  const lose = () => {
    if (focusLost || finishing || unloading) return;
    focusLost = true;
    void sendEvent('focus_lost');
  };
  const regain = () => {
    if (!focusLost) return;
    focusLost = false;
    void sendEvent('focus_regained');
  };
  window.addEventListener('blur', lose);
  window.addEventListener('focus', regain);
  document.addEventListener('visibilitychange', () => (document.hidden ? lose() : regain()));
  document.addEventListener(
    'fullscreenchange',
    () => void sendEvent(document.fullscreenElement === null ? 'fullscreen_left' : 'fullscreen_entered'),
  );
  window.addEventListener('offline', () =>
    pendingEvents.push({ type: 'connection_lost', offset_time: offsetNow() }),
  );
  window.addEventListener('online', () => {
    pendingEvents.push({ type: 'connection_restored', offset_time: offsetNow() });
    void flushEvents();
    for (const recorder of recorders.values()) void recorder.drain();
  });
  for (const type of ['copy', 'paste', 'cut']) {
    document.addEventListener(type, () => {
      if (Date.now() - lastCopy < 5000) return;
      lastCopy = Date.now();
      void sendEvent('copy_paste');
    });
  }
  if ('screen' in window && 'isExtended' in window.screen && window.screen.isExtended === true) {
    void sendEvent('multiple_screens');
  }
}

const watchedTracks = new WeakSet();

function watchTracks() {
  /** @type {[MediaStream | undefined, string, string][]} */
  const streams = [
    [cameraStream, 'video', 'webcam_lost'],
    [cameraStream, 'audio', 'microphone_lost'],
    [screenStream, 'video', 'screen_share_stopped'],
  ];
  for (const [stream, kind, event] of streams) {
    for (const track of stream?.getTracks() ?? []) {
      if (track.kind !== kind || watchedTracks.has(track)) continue;
      watchedTracks.add(track);
      track.addEventListener('ended', () => {
        if (finishing || view?.session.status !== 'exam_started') return;
        void sendEvent(event);
        showError(
          `Your ${event === 'screen_share_stopped' ? 'screen share' : kind === 'audio' ? 'microphone' : 'camera'} stopped. Press “Resume recording” to go on.`,
        );
        const resume = byId('resume-recording');
        resume.textContent = 'Resume recording';
        resume.hidden = false;
        const recorder = recorders.get(event === 'screen_share_stopped' ? 'screen' : 'webcam');
        if (recorder !== undefined) {
          void recorder.stop();
          stoppedRecorders.add(recorder);
          recorders.delete(recorder.source);
          updateRecordingState();
        }
      });
    }
  }
}

// ---- Automated flags ---------------------------------------------------------------------------
//
// When the exam has automated flags (view.automated_flags.enabled), the detectors in ./flags/ run
// on this device while the exam runs, loaded from the hashed path the view names
// (docs/automated-flags.md). Like the live part, they may never cost the exam: a failure to load
// leaves the room as it is.

/** How long finishing waits for the last flag reports. */
const FLAGS_STOP_LIMIT_MS = 3000;
/** @type {Promise<Flags | null> | undefined} */
let flagsLoading;
/** The session storage key of the face photo the detectors compare with (this tab only). */
const FACE_PHOTO_KEY = `invigil-face-photo:${token}`;

/** What the setup says about the automated flags, in plain words. */
function flagsNotice(/** @type {FlagSettings} */ settings) {
  const items = [
    'Whether your face is in view of the camera, whether more than one face is in view, and whether you look away from the screen for a while.',
  ];
  if (settings.face_match) items.push('Whether the face in view looks like the face photo you take below.');
  if (settings.speech_forbidden) items.push('Whether someone speaks: this exam does not allow talking.');
  items.push(
    'Whether you switch to another tab or window, leave full screen, stop sharing your screen, use a second screen or a virtual camera.',
  );
  return h('section', { 'aria-labelledby': 'flags-heading', id: 'flags-notice', class: 'info' }, [
    h('h3', { id: 'flags-heading' }, ['Automatic checks during the exam']),
    h('p', {}, ['While you take the exam, this page checks on your own computer:']),
    h(
      'ul',
      { class: 'facts' },
      items.map((item) => h('li', {}, [item])),
    ),
    h('p', {}, [
      'The camera picture and the sound are analysed on your computer only: nothing is sent anywhere for this analysis. Only the result, such as “no face in view from minute 12 to minute 13”, is sent to your exam office.',
    ]),
    h('p', {}, [
      'These results are only hints for a person who reviews your exam. They can be wrong (for example in poor light), and they never end or interrupt your exam: a person decides.',
    ]),
  ]);
}

/**
 * Keeps the face photo in this tab's session storage, so the detectors can compare with it after
 * a reload too. Never throws (a full storage only means no comparison).
 * @param {HTMLCanvasElement} canvas
 */
function rememberFacePhoto(canvas) {
  try {
    sessionStorage.setItem(FACE_PHOTO_KEY, canvas.toDataURL('image/jpeg', 0.85));
  } catch {
    // No room in the storage: the exam goes on without a comparison.
  }
}

/** Loads the detectors once and hands them the current streams. Returns them, or null. */
async function runFlags() {
  const flagsView = view?.automated_flags;
  if (!flagsView?.enabled || view?.session.status !== 'exam_started') return null;
  flagsLoading ??= (async () => {
    try {
      const module = await /** @type {Promise<typeof import('./flags/flags.js')>} */ (
        import(`${flagsView.models}flags.js`)
      );
      let facePhoto = null;
      try {
        facePhoto = sessionStorage.getItem(FACE_PHOTO_KEY);
      } catch {
        facePhoto = null;
      }
      return module.startFlags({
        api,
        base: flagsView.models,
        settings: flagsView.settings,
        facePhoto,
        offsetNow: () => offsetNow(),
        running: () => view?.session.status === 'exam_started',
      });
    } catch (error) {
      console.info(`[automated flags] not loaded: ${String(error)}`);
      void call('POST', '/flags/rate', { hz: 0 }).catch(() => undefined);
      return null;
    }
  })();
  const flags = await flagsLoading;
  flags?.useStreams(cameraStream, screenStream);
  return flags;
}

/** Stops the detectors and sends their last reports, waiting at most `limitMs`. Never throws. */
async function stopFlags(/** @type {number} */ limitMs) {
  if (flagsLoading === undefined) return;
  const flags = await flagsLoading;
  await flags?.stop(limitMs);
}

// ---- Live proctoring ----------------------------------------------------------------------------
//
// In a live_proctoring exam the room publishes the camera, the microphone and the screen to the
// proctor from the setup on (src/http/live/page/live-client.js), shows the proctor's messages and
// lets the candidate answer, and follows the proctor's controls (admit, pause, resume, end). None of
// it may cost the recording: the live client publishes copies of the tracks, every live step here
// catches its own failures, and nothing in the recording waits for the live part.

/** The live client, loaded only for a live exam (a failure to load it leaves the room as it is). */
const LIVE_CLIENT = '/live/assets/live-client.js';

/** @type {LiveConnection | undefined} */
let liveConnection;
let liveLoading = false;
/** The live client could not be loaded: the room says so once and goes on without it. */
let liveBroken = false;
/** @type {LiveSocketStatus} */
let liveSocket = 'connecting';
/** @type {LivePublishState} */
let livePublishing = 'off';
/**
 * A camera opened for the proctor alone when the page is opened again (a reload) and the browser
 * still allows the camera: the proctor sees the candidate at once, while the recording asks for its
 * own streams with a click as before.
 * @type {MediaStream | undefined}
 */
let liveCamera;
/** @type {Set<number>} */
const shownMessages = new Set();
let historyLoaded = false;
/** True while the chat's messages are on screen (new ones need no "new message" link then). */
let chatVisible = false;

function clockPaused() {
  return view?.live?.enabled === true && view.live.clock_paused && view.session.status === 'exam_started';
}

function awaitingAdmission() {
  return (
    view?.live?.enabled === true && view.live.awaiting_admission && view.session.status !== 'exam_finished'
  );
}

/** A stream with a live track, or null. */
function usableStream(/** @type {MediaStream | undefined} */ stream) {
  return stream?.getTracks().some((track) => track.readyState === 'live') === true ? stream : null;
}

/**
 * After every new view: starts the live part of a live exam (once), shows the admission and the
 * paused clock, and says what changed; stops it all once the session is finished.
 * @param {RoomLive | undefined} before the live part of the previous view
 */
function updateLive(before) {
  if (view === undefined) return;
  const now = view.live;
  if (now?.enabled !== true || view.session.status === 'exam_finished') {
    stopLive();
    return;
  }
  try {
    ensureLivePanel();
    void startLive();
    const paused = clockPaused();
    byId('clock-paused').hidden = !paused;
    if (
      before !== undefined &&
      before.clock_paused !== now.clock_paused &&
      view.session.status === 'exam_started'
    ) {
      announce(
        paused
          ? 'Your proctor paused the exam clock.'
          : 'Your proctor resumed the exam clock. Your time runs again.',
      );
    }
    if (before?.awaiting_admission === true && !now.awaiting_admission && shownStage === 'setup') {
      announce('Your proctor has checked your ID. You can start the exam now.');
    }
    updateLiveState();
  } catch (error) {
    console.warn('live: the live panel failed', error);
  }
}

/** Loads the live client and opens the connection to the proctor (once). */
async function startLive() {
  if (liveConnection !== undefined || liveLoading || liveBroken || view?.live === undefined) return;
  liveLoading = true;
  const socket = view.live.socket;
  try {
    const client = await /** @type {Promise<LiveClientModule>} */ (import(LIVE_CLIENT));
    if (view?.live?.enabled !== true || view.session.status === 'exam_finished') return;
    liveConnection = client.connectLive({
      url: socket,
      onMessage: liveMessage,
      onStatus: liveStatus,
      onPublishState: (state) => {
        livePublishing = state;
        updateLiveState();
      },
    });
    publishLive();
    void openLiveCamera();
  } catch (error) {
    liveBroken = true;
    console.warn('live: the live client could not be loaded', error);
    updateLiveState();
  } finally {
    liveLoading = false;
  }
}

/** Closes the live connection and hides the live part (the session is finished). */
function stopLive() {
  const connection = liveConnection;
  liveConnection = undefined;
  try {
    connection?.close();
  } catch (error) {
    console.warn('live: closing failed', error);
  }
  liveCamera?.getTracks().forEach((track) => track.stop());
  liveCamera = undefined;
  for (const id of ['live-state', 'live-unread', 'clock-paused', 'live-panel']) {
    const element = document.getElementById(id);
    if (element !== null) element.hidden = true;
  }
  document.body.classList.remove('live');
}

/**
 * Publishes what the room has: the camera and microphone of the checks or the recording (or the
 * camera opened for the proctor alone), and the shared screen. Safe to call at any time.
 */
function publishLive() {
  if (liveConnection === undefined || view === undefined) return;
  try {
    const own = view.exam.web_cam ? usableStream(cameraStream) : null;
    const camera = own ?? (view.exam.web_cam ? usableStream(liveCamera) : null);
    const screen = view.exam.screen_share ? usableStream(screenStream) : null;
    liveConnection.publish({ camera, screen });
    if (own !== null && liveCamera !== undefined) {
      // The room has its own camera now: the one opened for the proctor alone is no longer needed.
      liveCamera.getTracks().forEach((track) => track.stop());
      liveCamera = undefined;
    }
  } catch (error) {
    console.warn('live: publishing failed', error);
  }
}

/**
 * Opened again (a reload) with the camera already allowed: opens it for the proctor, so the
 * candidate is seen without pressing anything. Does nothing when the browser would have to ask, or
 * before the candidate has tested the camera in this exam.
 */
async function openLiveCamera() {
  if (view === undefined || !view.exam.web_cam || liveCamera !== undefined || usableStream(cameraStream))
    return;
  // Only a candidate who has used the camera in this exam before: never a camera that turns on
  // before the candidate has turned it on themselves.
  const { session } = view;
  if (session.webcam_check !== 'succeeded' && session.status !== 'exam_started') return;
  try {
    const states = await Promise.all(
      /** @type {const} */ (['camera', 'microphone']).map((name) => navigator.permissions.query({ name })),
    );
    if (states.some((state) => state.state !== 'granted')) return;
    const stream = await navigator.mediaDevices.getUserMedia({
      video: { width: 640, height: 480 },
      audio: true,
    });
    if (liveConnection === undefined || usableStream(cameraStream) !== null) {
      stream.getTracks().forEach((track) => track.stop());
      return;
    }
    liveCamera = stream;
    publishLive();
  } catch (error) {
    // The camera check (or "Resume recording") asks for the camera as before.
    console.warn('live: the camera could not be opened for the proctor', error);
  }
}

/** @param {LiveSocketStatus} status */
function liveStatus(status) {
  if (liveConnection === undefined) return;
  liveSocket = status;
  updateLiveState();
  // Connected (again): fetch what was written meanwhile.
  if (status === 'open') void loadMessages();
  // Refused for good (the session finished, say): the view tells the room what to show.
  if (status === 'closed') void poll();
}

/** @param {LiveServerMessage} message */
function liveMessage(message) {
  if (liveConnection === undefined) return;
  if (message.type === 'message') showMessages([message.message], true);
  // The proctor admitted, paused, resumed or ended: the view says what that means now.
  if (message.type === 'control') void poll();
  if (message.type === 'error') console.warn('live:', message.error);
}

/** What the live indicator says: its look and its sentence. */
function liveState() {
  if (liveBroken) {
    return [
      'off',
      'Live connection unavailable. Your exam is still recorded; reload this page to try again.',
    ];
  }
  if (liveSocket === 'closed')
    return ['off', 'Not connected to your proctor. Reload this page to connect again.'];
  if (liveSocket !== 'open' || livePublishing === 'connecting')
    return ['connecting', 'Connecting to your proctor…'];
  if (livePublishing === 'live') {
    return [
      'live',
      view?.exam.web_cam === false ? 'Your proctor can see your screen' : 'Your proctor can see you',
    ];
  }
  return ['waiting', 'Connected to your proctor. They can see you once your camera is on.'];
}

function updateLiveState() {
  const indicator = document.getElementById('live-state');
  if (indicator === null || indicator.hidden) return;
  const [look, sentence] = liveState();
  if (indicator.textContent !== sentence) indicator.textContent = sentence;
  indicator.className = `live-state ${look}`;
  // Copies beside the admission box and in the panel; the header's line is the one read out.
  for (const id of ['admission-live', 'live-panel-state']) {
    const copy = document.getElementById(id);
    if (copy === null || copy.textContent === sentence) continue;
    copy.textContent = sentence;
    copy.className = `live-copy ${look}`;
  }
}

/** Builds the live indicator (header) and the chat panel once; shows them again if hidden. */
function ensureLivePanel() {
  document.body.classList.add('live');
  const existing = document.getElementById('live-panel');
  if (existing !== null) {
    existing.hidden = false;
    byId('live-state').hidden = false;
    return;
  }
  const timer = byId('timer');
  timer.before(
    h('p', { id: 'live-state', class: 'live-state connecting', role: 'status' }, [
      'Connecting to your proctor…',
    ]),
    h('a', { id: 'live-unread', class: 'live-unread', href: '#live-panel', hidden: true }, [
      'New message from your proctor',
    ]),
  );
  byId('connection').after(
    h('p', { id: 'clock-paused', class: 'clock-paused', hidden: true }, [
      'Your proctor paused the exam clock. Your time left stays as shown until they resume it.',
    ]),
  );
  byId('live-unread').addEventListener('click', () => {
    byId('live-unread').hidden = true;
  });

  const list = h('ol', { id: 'chat-messages', class: 'chat-messages' });
  const log = h(
    'div',
    // A log region: screen readers read each new message. Quiet until the history has loaded.
    { id: 'chat-log', class: 'chat-log', role: 'log', 'aria-live': 'off', 'aria-labelledby': 'chat-heading' },
    [
      list,
      h('p', { id: 'chat-empty', class: 'help' }, [
        'No messages yet. Your proctor may write to you here, and you can write to them.',
      ]),
    ],
  );
  const input = h('input', {
    type: 'text',
    id: 'chat-body',
    name: 'body',
    maxlength: '2000',
    autocomplete: 'off',
    'aria-describedby': 'chat-error',
  });
  const send = h('button', { type: 'submit', id: 'chat-send' }, ['Send']);
  const form = h('form', { id: 'chat-form', class: 'chat-form', novalidate: true }, [
    h('label', { for: 'chat-body' }, ['Your message to the proctor']),
    h('div', { class: 'chat-row' }, [input, send]),
    h('p', { id: 'chat-error', class: 'warning', role: 'alert', hidden: true }),
  ]);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void sendMessage(input, send);
  });
  // The panel sticks below the header, whose height changes as it wraps.
  const header = document.querySelector('header.top');
  if (header instanceof HTMLElement && 'ResizeObserver' in window) {
    new ResizeObserver(() =>
      document.documentElement.style.setProperty('--header-height', `${header.offsetHeight}px`),
    ).observe(header);
  }
  const panel = h(
    'aside',
    { id: 'live-panel', class: 'live-panel', 'aria-labelledby': 'live-heading', tabindex: '-1' },
    [
      h('h2', { id: 'live-heading' }, ['Your proctor']),
      h('p', { id: 'live-panel-state', class: 'live-copy' }),
      h('h3', { id: 'chat-heading' }, ['Messages']),
      log,
      form,
    ],
  );
  document.body.append(panel);
  if ('IntersectionObserver' in window) {
    new IntersectionObserver((entries) => {
      chatVisible = entries.some((entry) => entry.isIntersecting);
      if (chatVisible) byId('live-unread').hidden = true;
    }).observe(log);
  }
}

/** The time of a message as the candidate reads it (their own clock, hours and minutes). */
function messageTime(/** @type {string} */ iso) {
  return new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
}

/** @param {LiveMessage} message */
function messageItem(message) {
  const mine = message.sender === 'candidate';
  const who = mine ? 'You' : message.author ? `Proctor (${message.author})` : 'Proctor';
  return h('li', { class: `chat-message ${mine ? 'mine' : 'proctor'}`, 'data-id': String(message.id) }, [
    h('p', { class: 'chat-meta' }, [
      h('strong', {}, [who]),
      ' · ',
      h('time', { datetime: message.created_at }, [messageTime(message.created_at)]),
    ]),
    // Text only, never HTML: what either side wrote is shown exactly as written.
    h('p', { class: 'chat-body' }, [message.body]),
  ]);
}

/**
 * Adds the messages not shown yet, in order. New ones from the proctor (`fresh`) are announced and,
 * when the chat is off screen, the header offers a link to it.
 * @param {LiveMessage[]} messages
 * @param {boolean} fresh
 */
function showMessages(messages, fresh) {
  const list = document.getElementById('chat-messages');
  if (list === null) return;
  let fromProctor = 0;
  for (const message of [...messages].sort((a, b) => a.id - b.id)) {
    if (shownMessages.has(message.id)) continue;
    shownMessages.add(message.id);
    const later = [...list.children].find(
      (child) => child instanceof HTMLElement && Number(child.dataset.id) > message.id,
    );
    list.insertBefore(messageItem(message), later ?? null);
    if (message.sender === 'proctor') fromProctor += 1;
  }
  byId('chat-empty').hidden = shownMessages.size > 0;
  const log = byId('chat-log');
  log.scrollTop = log.scrollHeight;
  if (!fresh || fromProctor === 0) return;
  announce(
    fromProctor === 1 ? 'New message from your proctor.' : `${fromProctor} new messages from your proctor.`,
  );
  if (!chatVisible) byId('live-unread').hidden = false;
}

/** Loads the chat's history (on opening, and after every reconnect: what was written meanwhile). */
async function loadMessages() {
  try {
    const answer = /** @type {{ messages: LiveMessage[] }} */ (await call('GET', '/messages'));
    showMessages(answer.messages, historyLoaded);
    if (!historyLoaded) {
      historyLoaded = true;
      byId('chat-log').setAttribute('aria-live', 'polite');
    }
  } catch (error) {
    console.warn('live: the messages could not be loaded', error);
  }
}

/**
 * Sends the candidate's message; errors are shown under the field (read out at once).
 * @param {HTMLInputElement} input
 * @param {HTMLButtonElement} button
 */
async function sendMessage(input, button) {
  if (button.getAttribute('aria-disabled') === 'true') return;
  const error = byId('chat-error');
  const body = input.value.trim();
  if (body === '') {
    error.textContent = 'Write a message first.';
    error.hidden = false;
    input.focus();
    return;
  }
  error.hidden = true;
  error.textContent = '';
  button.setAttribute('aria-disabled', 'true');
  try {
    const answer = /** @type {LiveMessage | { message: LiveMessage }} */ (
      await call('POST', '/messages', { body })
    );
    showMessages(['message' in answer ? answer.message : answer], false);
    input.value = '';
  } catch (failure) {
    error.textContent = `Your message was not sent: ${failure instanceof Error ? failure.message : String(failure)}`;
    error.hidden = false;
  } finally {
    button.removeAttribute('aria-disabled');
    input.focus();
  }
}

// ---- Answers and finishing ----------------------------------------------------------------------

/** Sends the chosen file with XMLHttpRequest, whose upload events drive the progress bar. */
async function uploadAnswer() {
  const input = /** @type {HTMLInputElement} */ (byId('answer-file'));
  const file = input.files?.[0];
  if (file === undefined) throw new Error('Choose a file to hand in first.');
  const box = byId('upload-box');
  const progress = /** @type {HTMLProgressElement} */ (byId('upload-progress'));
  const percent = byId('upload-percent');
  box.hidden = false;
  progress.value = 0;
  percent.textContent = '0%';
  const form = new FormData();
  form.append('file', file, file.name);
  /** @type {{ upload: { file_name: string, size: number } }} */
  const answer = await new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('POST', `${api}/uploads`);
    request.setRequestHeader('accept', 'application/json');
    request.upload.addEventListener('progress', (event) => {
      if (!event.lengthComputable) return;
      const value = Math.round((event.loaded / event.total) * 100);
      progress.value = value;
      percent.textContent = `${value}%`;
    });
    request.addEventListener('load', () => {
      const json = parseJson(request.responseText);
      if (request.status === 201 && json !== null) {
        resolve(/** @type {{ upload: { file_name: string, size: number } }} */ (json));
        return;
      }
      reject(new ApiError(request.status, errorOf(json, `The upload failed (${request.status}).`)));
    });
    request.addEventListener('error', () =>
      reject(new ApiError(0, 'The upload failed: the server could not be reached. Try again.')),
    );
    request.send(form);
  });
  progress.value = 100;
  percent.textContent = '100%';
  byId('uploaded-files').append(
    h('li', {}, [`${answer.upload.file_name} (${formatSize(answer.upload.size)}) handed in`]),
  );
  input.value = '';
  announce(`${answer.upload.file_name} handed in.`);
  await reload();
}

async function finishExam() {
  finishing = true;
  try {
    byId('recording-state').textContent = 'Saving your recording…';
    await Promise.all([stopRecording(), stopFlags(FLAGS_STOP_LIMIT_MS)]);
    await flushEvents();
    accept(await callView('POST', '/finish'));
  } finally {
    finishing = false;
  }
}

// ---- Finished -----------------------------------------------------------------------------------

function finishedStage() {
  if (view === undefined) throw new Error('no view');
  const { session } = view;
  window.clearInterval(pollTimer);
  pollTimer = undefined;
  pollEvery = 0;
  stopLive();
  void stopFlags(0);
  void stopRecording().then(() => {
    for (const stream of [cameraStream, screenStream]) stream?.getTracks().forEach((track) => track.stop());
  });
  const reason =
    session.end_reason === 'time_up'
      ? 'The time for this exam ran out.'
      : session.end_reason === 'finished'
        ? 'You finished the exam.'
        : 'Your exam was ended by the exam office.';
  const times = h('ul', { class: 'facts', id: 'finished-times' });
  if (session.start_time) times.append(h('li', {}, [`Started: ${formatTime(session.start_time)}`]));
  if (session.end_time) times.append(h('li', {}, [`Ended: ${formatTime(session.end_time)}`]));
  const arrived = h('div', { id: 'finished-arrival', role: 'status', 'aria-live': 'polite' });
  const section = h(
    'section',
    { class: 'stage', id: 'stage-finished', 'aria-labelledby': 'finished-heading' },
    [
      h('h2', { id: 'finished-heading' }, ['Your exam is finished']),
      h('p', {}, [reason]),
      times,
      h('p', { class: 'help' }, [`Times are in your computer’s time zone (${timeZoneName()}).`]),
      h('h3', { id: 'arrival-heading' }, ['What the server has received']),
      arrived,
      h('p', { id: 'finished-summary' }, ['You can close this page.']),
    ],
  );
  showArrival(arrived, session);
  return section;
}

/** How many recorders this page ran (each may lose its last chunk when staff end the exam). */
function recorderCount() {
  return stoppedRecorders.size + recorders.size;
}

/**
 * Confirms, from the server's own counts, what arrived: the recording parts of each stream and the
 * files handed in; and says so plainly when parts recorded on this page never reached the server.
 * @param {HTMLElement} box
 * @param {RoomSession} session
 */
function showArrival(box, session) {
  if (view === undefined) return;
  const { exam } = view;
  const list = h('ul', { id: 'arrival-list' });
  if (exam.web_cam || session.recording_chunks_count > 0)
    list.append(h('li', {}, [`Camera recording: ${pieces(session.recording_chunks_count)} received`]));
  if (exam.screen_share || session.screen_recording_chunks_count > 0)
    list.append(h('li', {}, [`Screen recording: ${pieces(session.screen_recording_chunks_count)} received`]));
  // The phone sends its own recording (the phone page confirms it there); the server's count is here.
  const phoneChunks = view.mobile?.chunks_count ?? 0;
  if (view.mobile != null || phoneChunks > 0)
    list.append(h('li', {}, [`Phone recording: ${pieces(phoneChunks)} received`]));
  if (exam.upload_answers || session.uploads_count > 0)
    list.append(
      h('li', {}, [
        `Answer files: ${session.uploads_count === 1 ? '1 file' : `${session.uploads_count} files`} received`,
      ]),
    );
  const missing =
    waitingChunks() + [...stoppedRecorders, ...recorders.values()].reduce((sum, r) => sum + r.lost, 0);
  const recordedHere = recorderCount() > 0;
  // Ended by staff (end_exam, the proctor): the seconds recorded between that moment and the page
  // hearing of it are refused by design, at most the chunk in progress per recording.
  const endedByStaff = session.end_reason === 'api';
  const onlyTheLastSeconds = endedByStaff && waitingChunks() === 0 && missing <= recorderCount() * 2;
  const sentence =
    missing > 0 && onlyTheLastSeconds
      ? 'Your exam was ended by the exam staff. The last few seconds recorded after that moment were not kept; everything before it has arrived.'
      : missing > 0
        ? `${parts(missing)} recorded on this page did not reach the server before the exam ended. Tell your exam office.`
        : list.childElementCount === 0
          ? 'This exam recorded nothing and asked for no files.'
          : recordedHere
            ? 'Everything this page recorded has arrived.'
            : 'These are the server’s own counts.';
  box.replaceChildren(
    ...(list.childElementCount > 0 ? [list] : []),
    h('p', { id: 'arrival-summary', class: missing > 0 && !onlyTheLastSeconds ? 'warning' : 'good' }, [
      sentence,
    ]),
  );
}

// ---------------------------------------------------------------------------------------------
// Start

/** Leaving during setup steps the session back to exam_not_started; opening it again enters anew. */
function watchLeaving() {
  window.addEventListener('pagehide', () => {
    if (leavingSetup || view === undefined || shownStage !== 'setup') return;
    leavingSetup = true;
    navigator.sendBeacon(`${api}/leave`);
  });
}

async function open() {
  try {
    const first = await callView('GET', '');
    const status = first.session.status;
    const entering = ['registered', 'email_sent', 'after_check_req', 'exam_not_started'].includes(status);
    accept(entering ? await callView('POST', '/enter') : first);
    watchLeaving();
  } catch (error) {
    byId('stage-loading').remove();
    showError(error instanceof Error ? error.message : String(error));
  }
}

void open();
