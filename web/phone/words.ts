/**
 * Every sentence the phone page shows, in one place (step 16 moves them into the catalogues).
 * Tests and screen readers find the page's parts by these words: change them only on purpose.
 */
import type { PhoneLiveState } from '../live/phone-live.ts';
import { itOrThey, parts, type ConnectionWords } from '../shared/words.ts';

export const CONNECTION: ConnectionWords = {
  lostWaiting: (waiting) =>
    `Connection lost — ${parts(waiting)} waiting; ${itOrThey(waiting)} will be sent when the phone is back online.`,
  lostIdle: 'Connection lost — this page keeps trying to reach the server.',
  sending: (waiting) => `Back online — sending: ${parts(waiting)} still waiting.`,
  sent: 'Back online.',
};

export const PAGE = {
  subtitle: 'Phone camera',
  title: (exam: string) => `${exam} · phone camera`,
  loading: 'Opening the phone camera page…',
  unreachable: 'This phone cannot reach the server. Check its Wi-Fi or mobile data; it keeps trying.',
  answered: (status: number) => `The server answered ${status}`,
  linkGone: 'Couldn’t find this phone link: scan the newest code shown in the exam room',
};

export const CAMERA = {
  front: 'Front camera',
  back: 'Back camera',
  frontOn: 'Front camera on.',
  backOn: 'Back camera on.',
  previewLabel: 'The phone camera’s picture',
  guide: 'Face · hands · screen',
  placeholder: 'The camera’s picture appears here once you choose a camera.',
  framing: 'Your face, your hands and your screen in view',
  stopped: 'The camera stopped. Press a camera button to turn it on again.',
  notAllowed:
    'The browser was not allowed to use the camera. Allow the camera for this page (the camera or lock symbol beside the address, or the browser’s site settings), then press a camera button again.',
  notFound: 'This phone has no such camera: try the other button.',
  busy: 'The camera is busy: close other apps that use it (video calls, the camera app), then try again.',
  failed:
    'The camera could not be turned on. Close other apps that use it, then try again, or reload this page.',
};

export const SETUP = {
  heading: 'Set up your phone camera',
  chooseHeading: '1. Choose a camera',
  chooseHelp:
    'The front camera lets you see the picture while you place the phone; the back camera is often sharper.',
  advice: [
    'Put the phone to your side, about 1 m (3 ft) away, a little higher than the desk.',
    'Turn it so the frame holds your face, your hands and your computer’s screen.',
    'Plug it in to charge, and keep this page open in front.',
  ],
  checkHeading: '2. Check the phone camera',
  checkHelp: (seconds: number) =>
    `Films ${seconds} seconds and sends them, to make sure the pictures arrive.`,
  check: 'Check the phone camera',
  checkAgain: 'Check again',
  chooseFirst: 'Choose a camera first: press “Front camera” or “Back camera”.',
  filming: (seconds: number) => `Filming ${seconds} seconds…`,
  sending: 'Sending the check…',
  passed: 'Phone camera check passed',
  passedAnnounced: 'Phone camera check passed.',
  failed: 'Phone camera check failed.',
  failedTryAgain: 'Phone camera check failed: try again.',
  waitHeading: '3. Start the exam on your computer',
  waiting: 'Keep this page open; recording starts when you start the exam on your computer.',
  waitingBefore: 'After the check, leave the phone where it is.',
};

export const EXAM = {
  heading: 'Exam in progress',
  recording: 'Recording — keep this page open and the phone where it is.',
  noCamera: 'Not recording: turn the camera on again with a button below.',
  starting: 'Starting the recording…',
  announced: 'Recording.',
  timeLeft: 'Time left',
  noLimit: 'No time limit',
  sent: 'Parts sent',
  waiting: 'Parts waiting',
  cameraHeading: 'Camera',
};

export const FINISHED = {
  heading: 'The exam is finished',
  text: 'The exam is finished. You can close this page.',
  missing: (count: number) =>
    `${parts(count)} recorded on this phone did not reach the server. Tell your exam office.`,
  arrived: (count: number) => `The server has ${parts(count)} from this phone.`,
};

export const GONE = {
  heading: 'This phone link no longer works',
  before: 'A phone link stops working when a newer code replaces it. You can also ',
  link: 'connect with the PIN',
  after: ' shown in the exam room.',
};

export const NOTICES = {
  screenOn: 'The screen stays on while this page is open.',
  cannotKeepOn:
    'This browser cannot keep the screen on by itself. Set the phone’s screen timeout to the longest time in its settings, and keep it plugged in, so it does not lock during the exam.',
  lowBattery: (percent: number) =>
    `Battery low (${percent} %): plug the phone in now, or it may switch off during the exam.`,
};

/** What the proctor's side of the phone says, by the live module's state. */
export const LIVE = {
  connecting: 'Connecting to your proctor…',
  live: 'Your proctor can see this camera.',
  ended: '',
  closed: 'This phone link was opened on another phone or tab, which now shows the camera to your proctor.',
  unavailable:
    'Your proctor cannot see this camera right now; the recording goes on. Reload the page to try again.',
} as const satisfies Record<PhoneLiveState, string>;

export type LiveState = PhoneLiveState;
