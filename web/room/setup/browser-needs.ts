/**
 * What this computer records in the room, for the browser check (web/shared/browser-support.ts):
 * the camera unless the candidate is exempt from both camera and microphone, the screen unless
 * exempt from sharing it. A phone's recording is the phone page's own.
 */
import type { RecordingNeeds } from '../../shared/browser-support.ts';
import type { RoomView } from '../state/room.svelte.ts';
import { exemptionsOf } from './exemptions.ts';

/** What the view's exam has this computer record; nothing while there is no view. */
export function roomRecordingNeeds(view: RoomView | undefined): RecordingNeeds {
  if (view === undefined) return { camera: false, screen: false };
  const exempt = exemptionsOf(view);
  return {
    camera: view.exam.web_cam && !(exempt.has('webcam') && exempt.has('microphone')),
    screen: view.exam.screen_share && !exempt.has('screen_share'),
  };
}
