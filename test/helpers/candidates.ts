import assert from 'node:assert/strict';
import type { ApiClient } from './client.ts';
import { object } from './json.ts';

/**
 * Adds the student "Candidate `n`" (candidate`n`@example.org) to exam `examId` through `client`'s
 * signed V3 API; fails unless it answers 201. Returns the session's id, room token and whole record.
 */
export async function addCandidate(
  client: ApiClient,
  examId: number,
  n: number,
): Promise<{ id: number; token: string; student: Record<string, unknown> }> {
  const answer = await client.v3('POST', '/exams/:exam_id/student_sessions', {
    exam_id: examId,
    name: `Candidate ${n}`,
    email: `candidate${n}@example.org`,
  });
  assert.equal(answer.status, 201, answer.text);
  const student = object(object(answer.json, 'body').student, 'student');
  return { id: student.id as number, token: student.token as string, student };
}
