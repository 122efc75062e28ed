/**
 * The exam stage's words (docs/room.md, "Exam in progress"): the header's countdown and phone
 * indicator, the recording line, the instructions, the answer files, the finish and the events'
 * error lines. Step 16 moves them into the message catalogues.
 */
import type { MobileStatus } from '../state/room.svelte.ts';

export const EXAM_WORDS = {
  heading: 'Exam in progress',
  timeLeft: 'Time left',
  timeLeftPaused: 'Time left (clock paused)',
  noLimit: 'no limit',
  minutesLeft: (minutes: number) => `${minutes} minute${minutes === 1 ? '' : 's'} left.`,
  timeUp: 'Time is up.',

  recordingOff: 'Recording is not running.',
  recordingPhoneOnly: 'This computer records nothing in this exam: your phone does.',
  recordingNone: 'This exam is not recorded.',
  recordingOn: (sources: string) => `Recording your ${sources}.`,
  recordingSaving: 'Saving your recording…',
  recordingNotStarted:
    'Recording has not started yet. Press “Start recording” and allow the browser to share.',
  recordingReloaded: 'Recording stopped when the page was reloaded. Press “Resume recording”.',
  startRecording: 'Start recording',
  resumeRecording: 'Resume recording',
  fullScreen: 'Full screen',
  trackStopped: (what: string) => `Your ${what} stopped. Press “Resume recording” to go on.`,

  assessmentHeading: 'Your assessment',
  assessmentHelp:
    'The questions are in your learning platform and open in a new tab. Keep this tab open as well until you finish: this is where your exam is proctored. If the new tab did not open, or you closed it, use this link.',
  assessmentLink: 'Open the assessment in a new tab',

  instructionsHeading: 'Instructions',
  noInstructions: '<p>This exam has no instructions.</p>',

  answersHeading: 'Hand in your answers',
  answersHelp: 'PDF, images, text, zip or office documents. You can hand in several files.',
  answerFile: 'Answer file',
  upload: 'Upload file',
  uploadProgress: 'Upload progress',
  filesHandedIn: 'Files handed in',
  chooseFile: 'Choose a file to hand in first.',
  uploadFailed: (status: number) => `The upload failed (${status}).`,
  uploadUnreachable: 'The upload failed: the server could not be reached. Try again.',
  handedIn: (name: string, size: string) => `${name} (${size}) handed in`,
  handedInAnnounced: (name: string) => `${name} handed in.`,

  endHeading: 'When you are done',
  finish: 'Finish the exam',
  finishQuestion: 'Finish the exam?',
  finishWarning: 'You cannot return to the exam or hand in more files afterwards.',
  finishYes: 'Yes, finish now',
  finishNo: 'No, keep working',

  phoneLostAlert:
    'Your phone stopped recording. Open the phone page again (scan the code below) and keep it plugged in; the exam continues meanwhile.',
  phoneNotPairedAlert:
    'Your phone is not connected. Open the phone page (scan the code below) and keep it plugged in; the exam continues meanwhile.',
  phoneWhatToDo: 'What to do',
  phoneBack: 'Phone recording again.',
  phoneFirst: 'Phone recording.',
} as const;

/** The header's phone indicator during the exam: its look (a class) and its words, by status. */
export const PHONE_EXAM_STATE: Record<MobileStatus, readonly [string, string]> = {
  not_paired: ['off', 'Phone: not connected'],
  paired: ['connecting', 'Phone: connected, not recording yet'],
  streaming: ['live', 'Phone: recording'],
  lost: ['off', 'Phone: not responding'],
};

/** What the automated-flags notice in the setup says (docs/automated-flags.md). */
export const FLAGS_WORDS = {
  heading: 'Automatic checks during the exam',
  intro: 'While you take the exam, this page checks on your own computer:',
  face: 'Whether your face is in view of the camera, whether more than one face is in view, and whether you look away from the screen for a while.',
  faceMatch: 'Whether the face in view looks like the face photo you take below.',
  speech: 'Whether someone speaks: this exam does not allow talking.',
  signals:
    'Whether you switch to another tab or window, leave full screen, stop sharing your screen, use a second screen or a virtual camera.',
  onDevice:
    'The camera picture and the sound are analysed on your computer only: nothing is sent anywhere for this analysis. Only the result, such as “no face in view from minute 12 to minute 13”, is sent to your exam office.',
  hints:
    'These results are only hints for a person who reviews your exam. They can be wrong (for example in poor light), and they never end or interrupt your exam: a person decides.',
} as const;
