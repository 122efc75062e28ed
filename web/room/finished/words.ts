/**
 * The finished stage's words (docs/room.md, "Your exam is finished"). Step 16 moves them into the
 * message catalogues.
 */
import { parts } from '../../shared/words.ts';

/** "1 part", "5 parts": the server's count of one recording's parts. */
function pieces(count: number): string {
  return count === 1 ? '1 part' : `${count} parts`;
}

export const FINISHED_WORDS = {
  heading: 'Your exam is finished',
  timeUp: 'The time for this exam ran out.',
  finished: 'You finished the exam.',
  endedByOffice: 'Your exam was ended by the exam office.',
  started: (time: string) => `Started: ${time}`,
  ended: (time: string) => `Ended: ${time}`,
  zone: (zone: string) => `Times are in your computer’s time zone (${zone}).`,
  arrivalHeading: 'What the server has received',
  close: 'You can close this page.',
  camera: (count: number) => `Camera recording: ${pieces(count)} received`,
  screen: (count: number) => `Screen recording: ${pieces(count)} received`,
  phone: (count: number) => `Phone recording: ${pieces(count)} received`,
  answers: (count: number) => `Answer files: ${count === 1 ? '1 file' : `${count} files`} received`,
  lastSecondsLost:
    'Your exam was ended by the exam staff. The last few seconds recorded after that moment were not kept; everything before it has arrived.',
  missing: (count: number) =>
    `${parts(count)} recorded on this page did not reach the server before the exam ended. Tell your exam office.`,
  nothing: 'This exam recorded nothing and asked for no files.',
  allArrived: 'Everything this page recorded has arrived.',
  serverCounts: 'These are the server’s own counts.',
} as const;
