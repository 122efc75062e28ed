// @ts-check
/* global window, document, location, navigator, performance, localStorage, FormData, Blob, MediaRecorder, DOMException, HTMLElement, HTMLVideoElement */
/**
 * The phone as a second camera, in the phone's browser (docs/room.md "The phone"). It speaks only
 * to the phone API under /api/mobile/<pairing token>, and follows the session as the server reports
 * it (each heartbeat answers the phone's view):
 *
 *   setup (choose a camera, frame the view, the check) → waiting → recording → finished
 *
 * Recording starts by itself when the student starts the exam on the computer. Chunks wait in a
 * queue that survives a dropped connection; a reopened page resumes the numbering where the server
 * says (`next_sequence`). The server is the judge of every move; this page shows what it says.
 */

import {
  ApiError,
  byId,
  clearError,
  errorOf,
  h,
  parts,
  requestJson,
  showError,
  wakeableSleeps,
} from '../../shared/assets/page-kit.js';

/**
 * @typedef {'not_started' | 'not_completed' | 'succeeded' | 'failed' | 'skipped'} CheckValue
 * @typedef {'not_paired' | 'paired' | 'streaming' | 'lost'} MobileStatus
 * @typedef {{
 *   mobile: { status: MobileStatus, check: CheckValue, next_sequence: number, chunks_count: number },
 *   session: {
 *     status: string, start_time: string | null, end_time: string | null,
 *     time_left_seconds: number | null, student_name: string
 *   },
 *   exam: { name: string, live_proctoring: boolean },
 *   server_time: string
 * }} PhoneView
 * @typedef {'user' | 'environment'} Facing
 * @typedef {'setup' | 'exam' | 'finished' | 'gone'} Stage
 * @typedef {{ level: number, charging: boolean, addEventListener(type: string, listener: () => void): void }} BatteryState
 */

/** Milliseconds of recording per uploaded chunk (as the room's). */
const CHUNK_MS = 4000;
/** How often the page tells the server it is still there (and reads the session's status back). */
const HEARTBEAT_MS = 5000;
/**
 * How often it does so before the exam, so that recording starts within a moment of the start on
 * the computer (the phone hears of it only then; a wait of 5 s would be a recording gap).
 */
const WAITING_HEARTBEAT_MS = 2000;
/** How long the camera check films. */
const CHECK_CLIP_MS = 2000;
/** How long finishing waits for queued chunks before it gives up on them. */
const FLUSH_LIMIT_MS = 30000;
/** At or below this battery level, and not charging, the page asks for a charger. */
const LOW_BATTERY = 0.2;
/** How long "all recording parts sent" stays on screen after the connection came back. */
const BACK_ONLINE_SHOWN_MS = 10000;
/** The longest device description the server keeps. */
const MAX_DEVICE_TEXT = 120;

const token = decodeURIComponent(location.pathname.split('/').filter(Boolean).pop() ?? '');
const api = `/api/mobile/${encodeURIComponent(token)}`;
/** The camera this phone chose for this session, kept so a reopened page turns the same one on. */
const FACING_KEY = `invigil-phone-camera:${token}`;

/** @type {PhoneView | undefined} */
let view;
/** performance.now() when `view` arrived, so the countdown runs on the server's figure. */
let viewAt = 0;
/** @type {Stage | undefined} */
let shownStage;
/** @type {MediaStream | undefined} */
let stream;
/** @type {Facing | undefined} */
let facing;
/** @type {Recorder | undefined} */
let recorder;
/** @type {number | undefined} */
let heartbeatTimer;
/** @type {number | undefined} */
let tickTimer;
/** @type {BatteryState | null} */
let battery = null;
/** @type {WakeLockSentinel | undefined} */
let wakeLock;
/** @type {'unknown' | 'on' | 'off' | 'unsupported' | 'refused'} */
let wakeState = 'unknown';
let leaving = false;
/**
 * True once the server refused a chunk because the exam is over (its time ran out) before the
 * session's status says so; the page then shows the end as well.
 */
let refusedAsFinished = false;
/** @type {import('./mobile-live.js').PhoneLive | undefined} */
let live;
let liveLoading = false;
/** @type {keyof typeof LIVE_TEXT | undefined} */
let liveState;

// ---------------------------------------------------------------------------------------------
// Small DOM helpers

/** Sets an element's text only when it changes, so live regions do not repeat themselves. */
function setText(/** @type {HTMLElement | null} */ element, /** @type {string} */ text) {
  if (element !== null && element.textContent !== text) element.textContent = text;
}

/** Announces progress politely to screen readers. */
function announce(/** @type {string} */ message) {
  byId('status').textContent = message;
}

// ---------------------------------------------------------------------------------------------
// The phone API

/**
 * Calls the phone API. Returns the parsed JSON answer; throws ApiError with the server's own
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
      'This phone cannot reach the server. Check its Wi-Fi or mobile data; it keeps trying.',
    );
  }
  setReachable(true);
  const { status, ok, json } = answer;
  if (status === 404) {
    // The link was replaced by a newer code, or never existed: nothing more can work from here.
    goneStage(errorOf(json, 'Couldn’t find this phone link: scan the newest code shown in the exam room'));
  }
  if (!ok) throw new ApiError(status, errorOf(json, `The server answered ${status}`));
  return json;
}

/**
 * Calls a phone API route that answers the phone's view, and shows it. Throws as `call`.
 * @param {string} method
 * @param {string} path
 * @param {Record<string, unknown> | FormData} [body]
 */
async function callView(method, path, body) {
  accept(/** @type {PhoneView} */ (await call(method, path, body)));
}

/** Takes the phone's view from the server and shows the stage the session's status calls for. */
function accept(/** @type {PhoneView} */ answer) {
  if (shownStage === 'gone') return;
  view = answer;
  viewAt = performance.now();
  render();
}

/**
 * Runs a student's action: clears the old error, shows a new one, keeps the button from being
 * pressed twice (marked busy with aria-disabled, so the keyboard focus stays on it).
 * @param {HTMLButtonElement} button
 * @param {() => Promise<void>} action
 */
async function act(button, action) {
  if (button.getAttribute('aria-disabled') === 'true') return;
  clearError();
  button.setAttribute('aria-disabled', 'true');
  try {
    await action();
  } catch (error) {
    showError(error instanceof Error ? error.message : String(error));
  } finally {
    button.removeAttribute('aria-disabled');
  }
}

// ---------------------------------------------------------------------------------------------
// The connection: a visible, polite status while the server cannot be reached or chunks wait

let reachable = true;
/** True from a lost connection until every waiting chunk has been sent after it came back. */
let recovering = false;
/** @type {number | undefined} */
let backOnlineTimer;
/** Sleeping retries, woken when the connection comes back. */
const { pause, wakeAll } = wakeableSleeps();

/** @param {boolean} value */
function setReachable(value) {
  if (reachable === value) return;
  reachable = value;
  if (value) wakeAll();
  updateConnection();
}

function waitingChunks() {
  return uploads.chunks.length;
}

/** The header's connection line: lost (with the parts waiting), back and sending, back and done. */
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
      recorder !== undefined || waiting > 0
        ? `Connection lost — ${parts(waiting)} waiting; ${waiting === 1 ? 'it' : 'they'} will be sent when the phone is back online.`
        : 'Connection lost — this page keeps trying to reach the server.';
  } else if (recovering && waiting > 0) {
    text = `Back online — sending: ${parts(waiting)} still waiting.`;
  } else if (recovering) {
    text = 'Back online.';
    backOnlineTimer ??= window.setTimeout(() => {
      recovering = false;
      backOnlineTimer = undefined;
      updateConnection();
    }, BACK_ONLINE_SHOWN_MS);
  }
  banner.classList.toggle('lost', lost);
  setText(banner, text);
  banner.hidden = text === '';
}

window.addEventListener('offline', updateConnection);
window.addEventListener('online', () => {
  wakeAll();
  updateConnection();
  void heartbeat();
});

// ---------------------------------------------------------------------------------------------
// Stages

function render() {
  if (view === undefined) return;
  const { session, exam } = view;
  setText(byId('exam-name'), exam.name);
  document.title = `${exam.name} · phone camera`;
  /** @type {Stage} */
  const stage =
    session.status === 'exam_finished' || refusedAsFinished
      ? 'finished'
      : session.status === 'exam_started'
        ? 'exam'
        : 'setup';
  if (stage !== shownStage) showStage(stage);
  if (stage === 'setup') updateSetup();
  if (stage === 'exam') updateExam();
}

/** Replaces the stage on screen and takes the focus to its heading, so a screen reader starts there. */
function showStage(/** @type {Stage} */ stage) {
  const first = shownStage === undefined;
  shownStage = stage;
  const main = byId('main');
  for (const old of main.querySelectorAll('section.stage')) old.remove();
  if (stage === 'setup') main.append(setupStage());
  if (stage === 'exam') main.append(examStage());
  if (stage === 'finished') main.append(finishedStage());
  if (stage === 'gone') main.append(goneSection());
  attachPreview();
  updateNotices();
  const heading = main.querySelector('section.stage h2');
  if (heading instanceof HTMLElement && !first) {
    heading.tabIndex = -1;
    heading.focus();
  }
  if (stage === 'exam') startRecording();
  if (stage === 'finished') void finish();
}

/**
 * The camera's picture with the framing guide drawn over it (a frame to fit the face, the hands and
 * the screen into), and the buttons that choose the camera.
 * @param {string} headingId
 */
function cameraBlock(headingId) {
  const choice = h('div', { class: 'camera-choice', role: 'group', 'aria-labelledby': headingId });
  for (const [id, which, label] of /** @type {const} */ ([
    ['camera-front', 'user', 'Front camera'],
    ['camera-back', 'environment', 'Back camera'],
  ])) {
    const button = h('button', { type: 'button', id, 'aria-pressed': facing === which ? 'true' : 'false' }, [
      label,
    ]);
    button.addEventListener('click', () => void act(button, () => startCamera(which)));
    choice.append(button);
  }
  const preview = h('video', {
    id: 'preview',
    muted: true,
    playsinline: true,
    autoplay: true,
    'aria-label': 'The phone camera’s picture',
    hidden: true,
  });
  const frame = h('div', { class: 'viewfinder', id: 'viewfinder' }, [
    preview,
    h('div', { class: 'guide', id: 'framing-guide', 'aria-hidden': 'true', hidden: true }, [
      h('span', { class: 'guide-label' }, ['Face · hands · screen']),
    ]),
    h('p', { class: 'placeholder', id: 'preview-placeholder' }, [
      'The camera’s picture appears here once you choose a camera.',
    ]),
  ]);
  return [
    choice,
    h('div', { class: 'advice', id: 'camera-trouble', role: 'alert', hidden: true }),
    h('figure', { class: 'preview' }, [
      frame,
      h('figcaption', { id: 'framing-sentence' }, ['Your face, your hands and your screen in view']),
    ]),
  ];
}

/** Placement advice, short enough to read while holding the phone. */
function placementAdvice() {
  return h('ul', { class: 'tips', id: 'placement-advice' }, [
    h('li', {}, ['Put the phone to your side, about 1 m (3 ft) away, a little higher than the desk.']),
    h('li', {}, ['Turn it so the frame holds your face, your hands and your computer’s screen.']),
    h('li', {}, ['Plug it in to charge, and keep this page open in front.']),
  ]);
}

/** The notices that can appear in any stage with a camera: screen stays on, battery. */
function notices() {
  return h('div', { class: 'notices' }, [
    h('p', { id: 'wake-notice', class: 'help', hidden: true }),
    h('p', { id: 'battery-warning', class: 'warning', role: 'alert', hidden: true }),
    h('p', { id: 'live-state', class: 'help', role: 'status', hidden: true }),
  ]);
}

function setupStage() {
  const section = h('section', { class: 'stage', id: 'stage-setup', 'aria-labelledby': 'setup-heading' }, [
    h('h2', { id: 'setup-heading' }, ['Set up your phone camera']),
  ]);
  const choose = h('section', { class: 'step', 'aria-labelledby': 'camera-heading' }, [
    h('h3', { id: 'camera-heading' }, ['1. Choose a camera']),
    h('p', { class: 'help', id: 'camera-help' }, [
      'The front camera lets you see the picture while you place the phone; the back camera is often sharper.',
    ]),
    ...cameraBlock('camera-heading'),
    placementAdvice(),
  ]);
  const check = h('section', { class: 'step', 'aria-labelledby': 'check-heading' }, [
    h('h3', { id: 'check-heading' }, ['2. Check the phone camera']),
    h('p', { class: 'help', id: 'check-help' }, [
      `Films ${CHECK_CLIP_MS / 1000} seconds and sends them, to make sure the pictures arrive.`,
    ]),
  ]);
  const run = h(
    'button',
    { type: 'button', id: 'run-check', class: 'primary', 'aria-describedby': 'check-help' },
    ['Check the phone camera'],
  );
  run.addEventListener('click', () => void act(run, runCheck));
  check.append(run, h('p', { id: 'check-result', class: 'result', role: 'status', 'aria-live': 'polite' }));
  const wait = h('section', { class: 'step', 'aria-labelledby': 'wait-heading' }, [
    h('h3', { id: 'wait-heading' }, ['3. Start the exam on your computer']),
    h('p', { id: 'waiting', class: 'waiting', hidden: true }, [
      'Keep this page open; recording starts when you start the exam on your computer.',
    ]),
    h('p', { id: 'waiting-before', class: 'help' }, ['After the check, leave the phone where it is.']),
  ]);
  section.append(choose, check, wait, notices());
  return section;
}

function updateSetup() {
  if (view === undefined) return;
  const passed = view.mobile.check === 'succeeded';
  const result = document.getElementById('check-result');
  if (result !== null) {
    result.className = `result ${passed ? 'succeeded' : ''}`;
    if (passed) setText(result, 'Phone camera check passed');
    else if (view.mobile.check === 'failed') setText(result, 'Phone camera check failed: try again.');
  }
  const runButton = document.getElementById('run-check');
  if (runButton !== null) setText(runButton, passed ? 'Check again' : 'Check the phone camera');
  const waiting = document.getElementById('waiting');
  if (waiting !== null) waiting.hidden = !passed;
  const before = document.getElementById('waiting-before');
  if (before !== null) before.hidden = passed;
}

function examStage() {
  const section = h('section', { class: 'stage', id: 'stage-exam', 'aria-labelledby': 'exam-heading' }, [
    h('h2', { id: 'exam-heading' }, ['Exam in progress']),
    h('p', { id: 'recording-state', class: 'recording-state' }, ['Starting the recording…']),
    h('dl', { class: 'figures' }, [
      h('div', {}, [h('dt', {}, ['Time left']), h('dd', { id: 'time-left' }, ['--:--'])]),
      h('div', {}, [h('dt', {}, ['Parts sent']), h('dd', { id: 'chunks-sent' }, ['0'])]),
      h('div', {}, [h('dt', {}, ['Parts waiting']), h('dd', { id: 'chunks-waiting' }, ['0'])]),
    ]),
  ]);
  const camera = h('section', { class: 'step', 'aria-labelledby': 'exam-camera-heading' }, [
    h('h3', { id: 'exam-camera-heading' }, ['Camera']),
    ...cameraBlock('exam-camera-heading'),
  ]);
  section.append(camera, notices());
  window.clearInterval(tickTimer);
  tickTimer = window.setInterval(updateTimer, 1000);
  return section;
}

function updateExam() {
  updateRecordingState();
  updateTimer();
}

/** Seconds left in the exam by the server's figure, run on since the view arrived; null when untimed. */
function secondsLeft() {
  const left = view?.session.time_left_seconds;
  if (left === null || left === undefined) return null;
  return Math.max(0, Math.floor(left - (performance.now() - viewAt) / 1000));
}

function updateTimer() {
  const element = document.getElementById('time-left');
  if (element === null) return;
  const seconds = secondsLeft();
  if (seconds === null) {
    setText(element, 'No time limit');
    return;
  }
  const hours = Math.floor(seconds / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = String(seconds % 60).padStart(2, '0');
  setText(element, hours > 0 ? `${hours}:${String(minutes).padStart(2, '0')}:${rest}` : `${minutes}:${rest}`);
}

function updateRecordingState() {
  updateConnection();
  const state = document.getElementById('recording-state');
  const sent = document.getElementById('chunks-sent');
  const waiting = document.getElementById('chunks-waiting');
  setText(sent, String(uploads.sequence ?? view?.mobile.chunks_count ?? 0));
  setText(waiting, String(waitingChunks()));
  if (state === null) return;
  const on = recording();
  state.classList.toggle('on', on);
  setText(
    state,
    on
      ? 'Recording — keep this page open and the phone where it is.'
      : stream === undefined
        ? 'Not recording: turn the camera on again with a button below.'
        : 'Starting the recording…',
  );
}

function finishedStage() {
  return h('section', { class: 'stage', id: 'stage-finished', 'aria-labelledby': 'finished-heading' }, [
    h('h2', { id: 'finished-heading' }, ['The exam is finished']),
    h('p', { class: 'lead', id: 'finished-text' }, ['The exam is finished. You can close this page.']),
    h('p', { id: 'finished-arrival', role: 'status', 'aria-live': 'polite' }),
  ]);
}

/** The page for a link that names no session (replaced by a newer code, or mistyped). */
function goneSection(message = '') {
  return h('section', { class: 'stage', id: 'stage-gone', 'aria-labelledby': 'gone-heading' }, [
    h('h2', { id: 'gone-heading' }, ['This phone link no longer works']),
    h('p', { class: 'lead', id: 'gone-text' }, [message]),
    h('p', {}, [
      'A phone link stops working when a newer code replaces it. You can also ',
      h('a', { href: '/m' }, ['connect with the PIN']),
      ' shown in the exam room.',
    ]),
  ]);
}

/** Stops everything for a link the server no longer knows, and says what to do. */
function goneStage(/** @type {string} */ message) {
  if (shownStage === 'gone') return;
  window.clearTimeout(heartbeatTimer);
  window.clearInterval(tickTimer);
  void stopRecorder();
  stopLive();
  stopCamera();
  clearError();
  showStage('gone');
  setText(byId('gone-text'), /[.!?]$/.test(message) ? message : `${message}.`);
}

// ---------------------------------------------------------------------------------------------
// The camera

/** Puts the stream (if any) into the stage's preview, and shows the framing guide over it. */
function attachPreview() {
  const preview = document.getElementById('preview');
  if (!(preview instanceof HTMLVideoElement)) return;
  const on = stream !== undefined;
  if (preview.srcObject !== (stream ?? null)) preview.srcObject = stream ?? null;
  preview.hidden = !on;
  document.getElementById('framing-guide')?.toggleAttribute('hidden', !on);
  document.getElementById('preview-placeholder')?.toggleAttribute('hidden', on);
  preview.classList.toggle('mirrored', facing === 'user');
  for (const [id, which] of /** @type {const} */ ([
    ['camera-front', 'user'],
    ['camera-back', 'environment'],
  ])) {
    document.getElementById(id)?.setAttribute('aria-pressed', on && facing === which ? 'true' : 'false');
  }
}

function stopCamera() {
  stream?.getTracks().forEach((track) => track.stop());
  stream = undefined;
  void releaseWakeLock();
}

/** What to do when the browser refuses the camera, by the kind of refusal. */
function cameraAdvice(/** @type {unknown} */ error) {
  const name = error instanceof DOMException ? error.name : '';
  if (name === 'NotAllowedError' || name === 'SecurityError') {
    return 'The browser was not allowed to use the camera. Allow the camera for this page (the camera or lock symbol beside the address, or the browser’s site settings), then press a camera button again.';
  }
  if (name === 'NotFoundError' || name === 'OverconstrainedError') {
    return 'This phone has no such camera: try the other button.';
  }
  if (name === 'NotReadableError' || name === 'AbortError') {
    return 'The camera is busy: close other apps that use it (video calls, the camera app), then try again.';
  }
  return 'The camera could not be turned on. Close other apps that use it, then try again, or reload this page.';
}

/**
 * Turns on the camera facing `which` (video only: the phone never records sound), shows it, keeps
 * the screen on, and records at once when the exam is running. Throws nothing: a refusal is shown
 * with advice and the buttons stay there for another try.
 * @param {Facing} which
 */
async function startCamera(which) {
  const running = stream?.getVideoTracks().some((track) => track.readyState === 'live') ?? false;
  if (running && facing === which) return;
  const trouble = document.getElementById('camera-trouble');
  if (trouble !== null) trouble.hidden = true;
  // Another camera during the exam: the recording goes on from the new one, numbering unbroken.
  await stopRecorder();
  stopCamera();
  try {
    stream = await navigator.mediaDevices.getUserMedia({
      audio: false,
      video: {
        facingMode: { ideal: which },
        width: { ideal: 1280 },
        height: { ideal: 720 },
        frameRate: { ideal: 15, max: 30 },
      },
    });
  } catch (error) {
    stream = undefined;
    attachPreview();
    if (trouble !== null) {
      trouble.replaceChildren(h('p', {}, [cameraAdvice(error)]));
      trouble.hidden = false;
    }
    updateRecordingState();
    return;
  }
  facing = which;
  try {
    localStorage.setItem(FACING_KEY, which);
  } catch {
    // Private browsing may refuse storage; the choice is only a convenience for a reopened page.
  }
  for (const track of stream.getVideoTracks()) {
    track.addEventListener('ended', () => void cameraEnded(track));
  }
  attachPreview();
  announce(which === 'user' ? 'Front camera on.' : 'Back camera on.');
  void requestWakeLock();
  startRecording();
  void startLive();
}

/** The camera was taken away (another app, the system): stop recording and ask for it again. */
async function cameraEnded(/** @type {MediaStreamTrack} */ track) {
  if (stream === undefined || !stream.getTracks().includes(track)) return;
  stopCamera();
  attachPreview();
  showError('The camera stopped. Press a camera button to turn it on again.');
  // Its last chunk still goes out; a recorder of the camera turned on again numbers on after it.
  await stopRecorder();
  updateRecordingState();
}

/** A MIME type the phone's MediaRecorder can write, WebM first (as the room), MP4 for Safari. */
function recordingType() {
  return ['video/webm;codecs=vp8', 'video/webm;codecs=vp9', 'video/webm', 'video/mp4'].find((candidate) =>
    MediaRecorder.isTypeSupported(candidate),
  );
}

/** Films CHECK_CLIP_MS of the camera and sends it as the check; the answer says whether it passed. */
async function runCheck() {
  if (stream === undefined) throw new Error('Choose a camera first: press “Front camera” or “Back camera”.');
  const result = byId('check-result');
  result.className = 'result';
  setText(result, 'Filming 2 seconds…');
  const type = recordingType();
  const clipRecorder = new MediaRecorder(stream, type === undefined ? {} : { mimeType: type });
  /** @type {Blob[]} */
  const pieces = [];
  clipRecorder.addEventListener('dataavailable', (event) => {
    if (event.data.size > 0) pieces.push(event.data);
  });
  const stopped = new Promise((resolve) => clipRecorder.addEventListener('stop', resolve));
  clipRecorder.start();
  await new Promise((resolve) => window.setTimeout(resolve, CHECK_CLIP_MS));
  clipRecorder.stop();
  await stopped;
  const clip = new Blob(pieces, { type: clipRecorder.mimeType || type || 'video/webm' });
  setText(result, 'Sending the check…');
  const form = new FormData();
  form.append('file', clip, clip.type.includes('mp4') ? 'check.mp4' : 'check.webm');
  try {
    await callView('POST', '/check', form);
  } catch (error) {
    result.className = 'result failed';
    setText(result, 'Phone camera check failed.');
    throw error;
  }
  if (view?.mobile.check === 'succeeded') announce('Phone camera check passed.');
}

// ---------------------------------------------------------------------------------------------
// Recording

/**
 * The chunks recorded and not yet acknowledged, sent one at a time, in order, each retried with a
 * growing pause until the server acknowledges it. One queue for the page, whatever recorder made
 * the chunks: a camera switched or turned on again goes on with the numbering unbroken. The
 * server's `next_sequence` says where the numbering goes on (also after a reopened page).
 */
class ChunkQueue {
  constructor() {
    /** The sequence of the next chunk to send; null until the server said where to start. */
    /** @type {number | null} */
    this.sequence = null;
    /** @type {Blob[]} */
    this.chunks = [];
    /** @type {Promise<void> | undefined} */
    this.draining = undefined;
  }

  /** @param {Blob} chunk */
  push(chunk) {
    this.chunks.push(chunk);
    updateRecordingState();
    void this.drain();
  }

  /** Sends the queued chunks in order; a call while a send runs returns that send. */
  drain() {
    this.draining ??= this.send().finally(() => {
      this.draining = undefined;
    });
    return this.draining;
  }

  async send() {
    let delay = 1000;
    while (this.chunks.length > 0 && this.sequence !== null && shownStage !== 'gone') {
      const chunk = this.chunks[0];
      if (chunk === undefined) break;
      const form = new FormData();
      form.append('sequence', String(this.sequence));
      form.append('source', 'mobile');
      form.append('file', chunk, `mobile-${this.sequence}.${chunk.type.includes('mp4') ? 'mp4' : 'webm'}`);
      try {
        const ack = /** @type {{ next_sequence: number }} */ (await call('POST', '/recordings', form));
        this.sequence = ack.next_sequence;
        this.chunks.shift();
        delay = 1000;
        updateRecordingState();
        continue;
      } catch (error) {
        if (
          !(error instanceof ApiError) ||
          error.status === 0 ||
          error.status === 429 ||
          error.status >= 500
        ) {
          // Woken early when the connection comes back.
          await pause(delay);
          delay = Math.min(delay * 2, 30000);
          continue;
        }
        const expected = error.status === 409 ? /chunk (\d+)/.exec(error.message) : null;
        if (expected) {
          // Out of turn (an older page of this phone sent some meanwhile): go on where the server is.
          this.sequence = Number(expected[1]);
          continue;
        }
        if (error.status === 404) break;
        if (error.status === 409) {
          // Not started, or finished: the server takes no more, so nothing is kept. (At the end this
          // is the chunk that ran past the finish on the computer, which the phone hears of later.)
          this.chunks.length = 0;
          if (/finished/i.test(error.message)) {
            refusedAsFinished = true;
            render();
          } else void heartbeat();
        } else {
          // A chunk refused as unreadable: dropped, so the ones after it can still go.
          this.chunks.shift();
        }
        updateRecordingState();
      }
    }
  }
}

const uploads = new ChunkQueue();

/** One MediaRecorder of the camera, video only, cutting a chunk every CHUNK_MS into the queue. */
class Recorder {
  /** @param {MediaStream} source */
  constructor(source) {
    const type = recordingType();
    /** @type {MediaRecorderOptions & { videoKeyFrameIntervalDuration?: number }} */
    const options = {
      ...(type === undefined ? {} : { mimeType: type }),
      videoBitsPerSecond: 600_000,
      // A key frame every 2 s (Chromium): the finalised recording seeks to within 2 s.
      videoKeyFrameIntervalDuration: 2000,
    };
    this.recorder = new MediaRecorder(source, options);
    this.recorder.addEventListener('dataavailable', (event) => {
      if (event.data.size > 0) uploads.push(event.data);
    });
    /** @type {Promise<void>} */
    this.done = new Promise((resolve) => this.recorder.addEventListener('stop', () => resolve()));
    this.recorder.addEventListener('start', updateRecordingState);
    this.recorder.start(CHUNK_MS);
  }

  /** Stops the recorder and waits until its last chunk is queued. */
  async stop() {
    if (this.recorder.state !== 'inactive') this.recorder.stop();
    await this.done;
  }
}

/** True while a recorder films. */
function recording() {
  return recorder !== undefined && recorder.recorder.state === 'recording';
}

/**
 * Starts recording the camera; the first time, numbered from the server's `next_sequence`. Does
 * nothing outside the exam, without a camera, or while recording.
 */
function startRecording() {
  if (view === undefined || shownStage !== 'exam') return;
  if (stream === undefined || recorder !== undefined) {
    updateRecordingState();
    return;
  }
  uploads.sequence ??= view.mobile.next_sequence;
  recorder = new Recorder(stream);
  announce('Recording.');
  updateRecordingState();
}

/** Stops the recorder (its last chunk joins the queue). */
async function stopRecorder() {
  const running = recorder;
  recorder = undefined;
  await running?.stop();
}

/** The exam is over: stop, send what waits (at most FLUSH_LIMIT_MS), and say what arrived. */
async function finish() {
  window.clearInterval(tickTimer);
  window.clearTimeout(heartbeatTimer);
  await stopRecorder();
  await Promise.race([uploads.drain(), new Promise((resolve) => window.setTimeout(resolve, FLUSH_LIMIT_MS))]);
  stopLive();
  stopCamera();
  const arrival = document.getElementById('finished-arrival');
  const sent = uploads.sequence ?? view?.mobile.chunks_count ?? 0;
  const missing = waitingChunks();
  setText(
    arrival,
    missing > 0
      ? `${parts(missing)} recorded on this phone did not reach the server. Tell your exam office.`
      : sent > 0
        ? `The server has ${parts(sent)} from this phone.`
        : '',
  );
  updateConnection();
}

// ---------------------------------------------------------------------------------------------
// Keeping the phone awake, its battery, and its presence

/** Asks the browser to keep the screen on while a camera runs (Screen Wake Lock API). */
async function requestWakeLock() {
  if (!('wakeLock' in navigator)) {
    wakeState = 'unsupported';
    updateNotices();
    return;
  }
  if (stream === undefined || document.visibilityState !== 'visible') return;
  if (wakeLock !== undefined && !wakeLock.released) return;
  try {
    wakeLock = await navigator.wakeLock.request('screen');
    wakeState = 'on';
    wakeLock.addEventListener('release', () => {
      wakeState = 'off';
      updateNotices();
    });
  } catch {
    wakeState = 'refused';
  }
  updateNotices();
}

async function releaseWakeLock() {
  const held = wakeLock;
  wakeLock = undefined;
  if (held !== undefined && !held.released) await held.release().catch(() => undefined);
}

/** The screen and battery notices of the current stage. */
function updateNotices() {
  const wake = document.getElementById('wake-notice');
  if (wake !== null) {
    const cannot = wakeState === 'unsupported' || wakeState === 'refused';
    const text = cannot
      ? 'This browser cannot keep the screen on by itself. Set the phone’s screen timeout to the longest time in its settings, and keep it plugged in, so it does not lock during the exam.'
      : wakeState === 'on'
        ? 'The screen stays on while this page is open.'
        : '';
    wake.className = cannot ? 'warning' : 'help';
    setText(wake, text);
    wake.hidden = text === '' || stream === undefined;
  }
  const liveLine = document.getElementById('live-state');
  if (liveLine !== null) {
    const text = liveState === undefined ? '' : LIVE_TEXT[liveState];
    liveLine.className = liveState === 'closed' || liveState === 'unavailable' ? 'warning' : 'help';
    setText(liveLine, text);
    liveLine.hidden = text === '';
  }
  const warning = document.getElementById('battery-warning');
  if (warning !== null) {
    const low = battery !== null && battery.level <= LOW_BATTERY && !battery.charging;
    const text = low
      ? `Battery low (${Math.round((battery?.level ?? 0) * 100)} %): plug the phone in now, or it may switch off during the exam.`
      : '';
    setText(warning, text);
    warning.hidden = !low;
  }
}

/** Follows the battery where the browser tells it (Chromium's Battery Status API). */
async function watchBattery() {
  const source = /** @type {{ getBattery?: () => Promise<BatteryState> }} */ (
    /** @type {unknown} */ (navigator)
  );
  if (typeof source.getBattery !== 'function') return;
  try {
    battery = await source.getBattery.call(navigator);
  } catch {
    return;
  }
  battery.addEventListener('levelchange', updateNotices);
  battery.addEventListener('chargingchange', updateNotices);
  updateNotices();
}

/** The pause before the next heartbeat: shorter while waiting for the start. */
function heartbeatEvery() {
  return shownStage === 'setup' ? WAITING_HEARTBEAT_MS : HEARTBEAT_MS;
}

/** True once nothing more is to be done here: the exam is finished, or the link no longer works. */
function over() {
  return shownStage === 'finished' || shownStage === 'gone';
}

/** Tells the server the phone is still there, and shows the view it answers. Schedules the next. */
async function heartbeat() {
  window.clearTimeout(heartbeatTimer);
  if (over()) return;
  try {
    await callView('POST', '/heartbeat', {
      battery_level: battery === null ? null : battery.level,
      charging: battery === null ? null : battery.charging,
      visible: document.visibilityState === 'visible',
      // Whether this page films now: a phone that only waits reads as paired, not streaming.
      streaming: recording(),
    });
  } catch (error) {
    // A finished session refuses the heartbeat: the view says so.
    if (error instanceof ApiError && error.status === 409) await callView('GET', '').catch(() => undefined);
  }
  if (over()) return;
  // One timer only, even when a heartbeat of a visibility change ran meanwhile.
  window.clearTimeout(heartbeatTimer);
  heartbeatTimer = window.setTimeout(() => void heartbeat(), heartbeatEvery());
}

/**
 * The phone's browser and system in a few words ("Chrome 131 on Android 14"), from the user agent;
 * Chromium's client hints give the real Android version that its reduced user agent hides.
 */
async function deviceDescription() {
  const agent = navigator.userAgent;
  const match = (/** @type {RegExp} */ pattern) => pattern.exec(agent)?.[1];
  /** @type {[RegExp, string][]} */
  const browsers = [
    [/SamsungBrowser\/(\d+)/, 'Samsung Internet'],
    [/EdgA?\/(\d+)/, 'Edge'],
    [/OPR\/(\d+)/, 'Opera'],
    [/FxiOS\/(\d+)/, 'Firefox'],
    [/CriOS\/(\d+)/, 'Chrome'],
    [/Firefox\/(\d+)/, 'Firefox'],
    [/Chrome\/(\d+)/, 'Chrome'],
    [/Version\/(\d+(?:\.\d+)?).*Safari/, 'Safari'],
  ];
  let browser = 'A browser';
  for (const [pattern, name] of browsers) {
    const version = match(pattern);
    if (version !== undefined) {
      browser = `${name} ${version}`;
      break;
    }
  }
  let system = 'an unknown system';
  const android = match(/Android (\d+(?:\.\d+)?)/);
  const ios = /(?:iPhone|iPad|iPod).*? OS (\d+)[_.](\d+)/.exec(agent);
  if (android !== undefined) system = `Android ${android}`;
  else if (ios !== null) system = `iOS ${ios[1]}.${ios[2]}`;
  else if (/Macintosh/.test(agent)) system = navigator.maxTouchPoints > 1 ? 'iPadOS' : 'macOS';
  else if (/Windows/.test(agent)) system = 'Windows';
  else if (/CrOS/.test(agent)) system = 'ChromeOS';
  else if (/Linux/.test(agent)) system = 'Linux';
  const hints =
    /** @type {{ userAgentData?: { platform: string, getHighEntropyValues(hints: string[]): Promise<{ platformVersion?: string }> } }} */ (
      /** @type {unknown} */ (navigator)
    ).userAgentData;
  if (hints?.platform === 'Android') {
    try {
      const { platformVersion } = await hints.getHighEntropyValues(['platformVersion']);
      const major = platformVersion?.split('.')[0];
      if (major) system = `Android ${major}`;
    } catch {
      // The user agent's own figure stands.
    }
  }
  return `${browser} on ${system}`.slice(0, MAX_DEVICE_TEXT);
}

// ---------------------------------------------------------------------------------------------
// Live proctoring

/** What the proctor's side of the phone says, by the live module's state. */
const LIVE_TEXT = {
  connecting: 'Connecting to your proctor…',
  live: 'Your proctor can see this camera.',
  ended: '',
  closed: 'This phone link was opened on another phone or tab, which now shows the camera to your proctor.',
  unavailable:
    'Your proctor cannot see this camera right now; the recording goes on. Reload the page to try again.',
};

/**
 * In a live-proctored exam the phone also shows its camera to the proctor, through the phone's live
 * module (mobile-live.js, loaded only then); a camera turned on anew is handed to it. A failure there
 * only shows in the live line: the recording goes on as it is.
 */
async function startLive() {
  if (view === undefined || !view.exam.live_proctoring || stream === undefined || over()) return;
  if (live !== undefined) {
    live.setStream(stream);
    return;
  }
  if (liveLoading) return;
  liveLoading = true;
  try {
    const module = /** @type {typeof import('./mobile-live.js')} */ (await import('./mobile-live.js'));
    if (stream === undefined || over()) return;
    live = module.startPhoneLive({
      token,
      stream,
      onState: (state) => {
        liveState = state;
        updateNotices();
      },
    });
  } catch {
    liveState = 'unavailable';
    updateNotices();
  } finally {
    liveLoading = false;
  }
}

function stopLive() {
  live?.stop();
  live = undefined;
  liveState = undefined;
}

// ---------------------------------------------------------------------------------------------
// Start

/** The student is leaving: warn while recording, and tell the server the phone is gone. */
function watchLeaving() {
  window.addEventListener('beforeunload', (event) => {
    if (!recording() || shownStage !== 'exam') return;
    event.preventDefault();
    // Older browsers show the warning only when returnValue is set.
    event.returnValue = '';
  });
  window.addEventListener('pagehide', () => {
    if (leaving || shownStage === 'gone' || shownStage === 'finished' || shownStage === undefined) return;
    leaving = true;
    navigator.sendBeacon(`${api}/leave`);
  });
  // Back from the browser's page cache: the server heard the phone leave, so say hello again.
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted || !leaving) return;
    leaving = false;
    void open();
  });
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void requestWakeLock();
    void heartbeat();
  });
}

/** The camera this page chose before, when it was reopened. */
function rememberedFacing() {
  try {
    const saved = localStorage.getItem(FACING_KEY);
    return saved === 'user' || saved === 'environment' ? saved : undefined;
  } catch {
    return undefined;
  }
}

async function open() {
  try {
    await callView('POST', '/hello', { device: await deviceDescription() });
  } catch (error) {
    if (shownStage === 'gone') return;
    byId('stage-loading').hidden = true;
    showError(error instanceof Error ? error.message : String(error));
    heartbeatTimer = window.setTimeout(() => void open(), HEARTBEAT_MS);
    return;
  }
  document.getElementById('stage-loading')?.remove();
  clearError();
  heartbeatTimer = window.setTimeout(() => void heartbeat(), heartbeatEvery());
  // A reopened page turns the camera it used on again; the browser remembers the permission.
  const saved = rememberedFacing();
  if (saved !== undefined && stream === undefined && shownStage !== 'finished' && shownStage !== 'gone') {
    await startCamera(saved);
  }
}

watchLeaving();
void watchBattery();
void open();
