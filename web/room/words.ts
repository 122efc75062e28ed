/**
 * The exam room's words, in one place (step 16 moves them into the message catalogues). Sentences
 * both candidate pages say alike come from web/shared/words.ts.
 */
import { itOrThey, parts, type ConnectionWords } from '../shared/words.ts';

export const ROOM_WORDS = {
  loading: 'Opening your exam room…',
  skip: 'Skip to the exam room',
  candidate: (name: string) => `Candidate: ${name}`,
  title: (exam: string) => `${exam} · exam room`,
  timeLeft: 'Time left',
  unreachable: 'The exam room cannot reach the server. Check your connection; it will keep trying.',
} as const;

/** The room's connection line (the header's polite status while the server cannot be reached). */
export const ROOM_CONNECTION_WORDS: ConnectionWords = {
  lostWaiting: (waiting) =>
    `Connection lost — ${parts(waiting)} waiting; ${itOrThey(waiting)} will be sent when you are back online.`,
  lostIdle: 'Connection lost — the exam room keeps trying to reach the server.',
  sending: (waiting) => `Back online — sending your recording: ${parts(waiting)} still waiting.`,
  sent: 'Back online — every recording part has been sent.',
};

/** What each check is called in its result line. */
export const CHECK_NAMES: Readonly<Record<string, string>> = {
  webcam_check: 'Camera',
  microphone_check: 'Microphone',
  screenshare_check: 'Screen sharing',
  speakers_check: 'Speakers',
  bandwidth_check: 'Connection speed',
  mobile_check: 'Phone camera',
};

/** A check's state in words. */
export const CHECK_RESULTS: Readonly<Record<string, string>> = {
  not_started: 'not checked yet',
  not_completed: 'not completed',
  succeeded: 'passed',
  failed: 'failed',
  skipped: 'skipped',
};

/** The setup stage's sentences. */
export const SETUP_WORDS = {
  heading: 'Before you start',
  loading: 'The room is loading.',
  aboutHeading: 'Your exam',
  duration: (minutes: number) => `Once you start, you have ${minutes} minutes.`,
  startFrom: (time: string) => `You can start from ${time}.`,
  closesAt: (time: string) => `The exam closes at ${time}.`,
  timeZone: (zone: string) => `Times are shown in your computer’s time zone (${zone}).`,
  recorded: (what: string) => `Your ${what} will be recorded while the exam runs.`,
  cameraAndMicrophone: 'camera and microphone',
  screen: 'screen',
  phoneRecords:
    'Your phone’s camera records you from the side while the exam runs: set it up under “Your phone” below.',
  mayUse: 'What you may use',
  noAids: 'No aids are allowed: only this exam room.',
  allowed: (name: string, detail: string | null) =>
    detail ? `${name} allowed: ${detail}` : `${name} allowed`,
  aids: {
    websites: 'Websites',
    applications: 'Other applications',
    textbooks: 'Textbooks',
    calculator: 'A calculator',
    penPaper: 'Pen and paper',
    additional: 'Other aids',
  },
  infoHeading: 'Information for you',

  checksHeading: 'Check your equipment',
  resultLine: (field: string, value: string, speed: string, required: boolean) =>
    `${CHECK_NAMES[field] ?? field}: ${CHECK_RESULTS[value] ?? value}${speed}${required ? '' : ' (optional)'}`,
  speed: (mbit: number, slow: boolean) => ` (${mbit} Mbit/s${slow ? ', slow' : ''})`,
  missingCheck: (field: string, value: string | undefined) =>
    `${CHECK_NAMES[field] ?? field} check (${CHECK_RESULTS[value ?? ''] ?? String(value)})`,
  missingIdCard: 'a photo of your ID card',
  missingFacePhoto: 'a photo of your face',

  camera: {
    button: 'Test camera and microphone',
    help: 'Your browser will ask to use your camera and microphone: allow both.',
    refused: (reason: string) =>
      `Your camera or microphone could not be used (${reason}). Allow them in your browser’s site settings and try again.`,
    works: 'Camera and microphone work.',
    missing: 'Camera or microphone missing.',
  },
  screenShare: {
    button: 'Share your screen',
    help: 'Choose your entire screen when your browser asks.',
    refused: (reason: string) =>
      `Your screen could not be shared (${reason}). Try again and choose your entire screen.`,
    notWhole: 'Please share your entire screen, not a window or a tab.',
    works: 'Screen sharing works.',
  },
  speakers: {
    button: 'Play a test sound',
    help: 'A short tone plays; then tell us whether you heard it.',
    question: 'Did you hear the tone?',
    yes: 'Yes, I heard it',
    no: 'No',
  },
  bandwidth: {
    button: 'Measure your connection',
    help: (minMbit: number, seconds: number) =>
      `Downloads a 2 MB file to time your connection (at least ${minMbit} Mbit/s is recommended; it takes up to ${seconds} seconds).`,
    progressLabel: 'Connection check',
    measuring: 'Measuring your connection…',
    received: (share: number, received: string, total: string) => `${share}% (${received} of ${total})`,
    done: (received: string, seconds: string) => `Done: ${received} in ${seconds} s`,
    unreachable:
      'The connection check could not reach the server. Check that you are online (Wi-Fi or cable connected), then press “Measure your connection” again.',
    enough: (mbit: number) => `Your connection: ${mbit} Mbit/s. That is enough.`,
    slow: (mbit: number) =>
      `Your connection is slow: ${mbit} Mbit/s. See the advice below the connection check.`,
    adviceIntro: (mbit: number, minMbit: number) =>
      `Your connection measured ${mbit} Mbit/s; at least ${minMbit} Mbit/s is recommended. To speed it up:`,
    advice: [
      'Use a network cable, or move closer to your Wi-Fi router.',
      'Close other tabs and programs that use the network (video, calls, cloud sync, downloads).',
      'Ask others on your network to pause large downloads and streaming.',
      'Then press “Measure your connection” again.',
    ],
    mayStart:
      'You can also start with this connection: your recording is kept on this computer and sent as fast as the connection allows. Keep this page open until the finished page confirms that everything arrived.',
    mustBeFaster:
      'This exam is proctored live and needs a faster connection to start. If it stays slow after these steps, contact your exam office.',
  },

  photos: {
    heading: 'Identify yourself',
    help: 'Test your camera first. Then hold your ID card up to the camera for the first photo, and look into the camera for the second.',
    preview: 'Your camera picture',
    placeholder: 'Your camera picture appears here once you have tested your camera.',
    cameraCaption: 'Camera',
    idCardCaption: 'ID card photo',
    faceCaption: 'Face photo',
    ofIdCard: 'of your ID card',
    ofFace: 'of your face',
    take: (which: string) => `Take a photo ${which}`,
    retake: 'Retake photo',
    saved: 'Photo saved.',
    none: 'No photo yet.',
    idCardAlt: 'Your ID card photo, as saved',
    faceAlt: 'Your face photo, as saved',
    idCardSaved: 'ID card photo saved.',
    faceSaved: 'Face photo saved.',
    testCameraFirst: 'Test your camera first: the photo is taken from its picture.',
    notTaken: 'The photo could not be taken. Try again.',
  },

  terms: {
    heading: 'Terms of this exam',
    help: 'Read these terms. You accept them to start the exam.',
    accept: 'I have read and accept these terms',
    tick: 'Tick the box to accept the terms before you start.',
    added: 'Read the terms and tick the box to accept them before you start.',
  },

  start: {
    heading: 'Start',
    button: 'Start the exam',
    stillNeeded: (missing: readonly string[]) => `Still needed before you can start: ${missing.join('; ')}.`,
    awaiting: 'Everything is ready. Your proctor checks your ID before you can start.',
    acceptTerms:
      'Accept the terms above, then start. When you start, the clock runs and the instructions appear.',
    slow: 'You can start, but your connection is slow: parts of your recording may reach the server late. Keep this page open until the end. When you start, the clock runs and the instructions appear.',
    ready: 'Everything is ready. When you start, the clock runs and the instructions appear.',
    started: 'The exam has started.',
    admissionTitle: 'Waiting for your proctor to check your ID',
    admissionText:
      'Keep this page open and stay in front of your camera. Hold your ID card up to the camera when your proctor asks; you can start as soon as they have checked it.',
    assessmentNote:
      'When you start, your learning platform opens the questions in a new tab. Keep this tab open as well until you finish.',
  },
} as const;

/** The phone of a mobile_cam exam, in the setup (and its pairing block, which the exam reuses). */
export const PHONE_WORDS = {
  heading: 'Your phone',
  help: 'This exam also records you with your phone’s camera, from the side. Scan this code with your phone’s camera: it opens the phone camera page, which runs the phone’s camera check. Keep that page open and the phone plugged in until the exam ends.',
  /** What the setup says of the phone, by its status. */
  status: {
    not_paired: 'Waiting for your phone',
    paired: 'Phone connected — run the camera check on the phone',
    streaming: 'Phone camera is sending video',
    lost: 'The phone is not responding — check that the phone page is open and the phone is online',
  },
  /** A phone that passed its check and waits is not asked again. */
  pairedAndChecked: 'Phone connected — its camera check passed. Keep the phone page open.',
  device: (device: string) => `Your phone: ${device}`,
  renew: 'Get a new code',
  renewHelp:
    'Use a new code if this one does not open on your phone, or if someone else may have seen it. The phone link of the old code stops working at once: a phone that opened it must scan the new code.',
  renewed: 'New code ready. The old phone link no longer works: scan the new code with your phone.',
  qrAlt: 'QR code that opens the phone camera page',
  qrFailed: 'The code could not be shown: use the address and the PIN instead.',
  manualOpen: 'Or open ',
  manualPin: ' on your phone and type the PIN ',
  manualEnd: ' and your email.',
} as const;
