// Placeholder wired into app.ts; the step 3 capability fills it in.
import type { Db } from '../../db/database.ts';
import type { ServerKeys } from '../../security/keys.ts';
import type { Clock } from '../clock.ts';

export type ExamStaffService = Record<string, never>;

export function createExamStaffService(_deps: { db: Db; clock: Clock; keys: ServerKeys }): ExamStaffService {
  return {};
}
