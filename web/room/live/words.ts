/**
 * The live proctoring words of the exam room (docs/live-proctoring.md, "The candidate's room"):
 * the indicator, the paused clock, the admission, the chat. Step 16 moves them into the catalogues.
 */
export const LIVE_WORDS = {
  unavailable: 'Live connection unavailable. Your exam is still recorded; reload this page to try again.',
  closed: 'Not connected to your proctor. Reload this page to connect again.',
  connecting: 'Connecting to your proctor…',
  seesScreen: 'Your proctor can see your screen',
  seesYou: 'Your proctor can see you',
  waiting: 'Connected to your proctor. They can see you once your camera is on.',

  paused: 'Your proctor paused the exam clock.',
  resumed: 'Your proctor resumed the exam clock. Your time runs again.',
  pausedNote: 'Your proctor paused the exam clock. Your time left stays as shown until they resume it.',
  admitted: 'Your proctor has checked your ID. You can start the exam now.',

  unread: 'New message from your proctor',
  panelHeading: 'Your proctor',
  messagesHeading: 'Messages',
  empty: 'No messages yet. Your proctor may write to you here, and you can write to them.',
  field: 'Your message to the proctor',
  send: 'Send',
  you: 'You',
  proctor: 'Proctor',
  proctorNamed: (author: string) => `Proctor (${author})`,
  writeFirst: 'Write a message first.',
  notSent: (reason: string) => `Your message was not sent: ${reason}`,
  newMessages: (count: number) =>
    count === 1 ? 'New message from your proctor.' : `${count} new messages from your proctor.`,
} as const;
