/**
 * The catalogue keys of the privacy panel's facts (web/shared/PrivacyFacts.svelte), one per value
 * the server states (src/domain/room/privacy.ts). A value this page does not know yet is shown by
 * its name rather than hidden.
 */
import { t } from './i18n.svelte.ts';

const RECORDED: Readonly<Record<string, string>> = {
  camera: 'candidate.privacy.recorded.camera',
  microphone: 'candidate.privacy.recorded.microphone',
  screen: 'candidate.privacy.recorded.screen',
  phone_camera: 'candidate.privacy.recorded.phoneCamera',
  id_photo: 'candidate.privacy.recorded.idPhoto',
  face_photo: 'candidate.privacy.recorded.facePhoto',
  uploads: 'candidate.privacy.recorded.uploads',
  flags: 'candidate.privacy.recorded.flags',
  events: 'candidate.privacy.recorded.events',
};

const ON_DEVICE: Readonly<Record<string, string>> = {
  flag_detectors: 'candidate.privacy.onDevice.flagDetectors',
  equipment_checks: 'candidate.privacy.onDevice.equipmentChecks',
};

const ROLES: Readonly<Record<string, string>> = {
  teacher: 'candidate.privacy.role.teacher',
  proctor: 'candidate.privacy.role.proctor',
  reviewer: 'candidate.privacy.role.reviewer',
  administrator: 'candidate.privacy.role.administrator',
  auditor: 'candidate.privacy.role.auditor',
};

const KEPT: Readonly<Record<string, string>> = {
  id_photo: 'candidate.privacy.kept.idPhoto',
  face_photo: 'candidate.privacy.kept.facePhoto',
  recordings: 'candidate.privacy.kept.recordings',
  uploads: 'candidate.privacy.kept.uploads',
  incidents: 'candidate.privacy.kept.incidents',
};

function word(keys: Readonly<Record<string, string>>, value: string): string {
  const key = keys[value];
  return key === undefined ? value : t(key);
}

/** What is recorded, in words. Reactive in components. */
export const recordedWord = (kind: string): string => word(RECORDED, kind);
/** What stays on the device, in words. */
export const onDeviceWord = (kind: string): string => word(ON_DEVICE, kind);
/** A role that sees the data, in words. */
export const roleWord = (role: string): string => word(ROLES, role);
/** A kind of kept data, in words. */
export const keptWord = (kind: string): string => word(KEPT, kind);
