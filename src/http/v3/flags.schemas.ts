/**
 * OpenAPI descriptions of the reviewer's actions on automated flags (docs/automated-flags.md):
 * dismiss a flag (kept, marked) and restore it. They document; the domain validates.
 */
import { commonErrors, errorBody, signedParams, signedQuery, v3Headers } from './common.schemas.ts';
import { incidentRecord } from './student-sessions.schemas.ts';

const tags = ['student sessions'];

const incidentParams = {
  type: 'object',
  properties: {
    id: { type: 'integer', description: 'The student session' },
    incident_id: { type: 'integer', description: 'The incident: an automated flag of that session' },
  },
  required: ['id', 'incident_id'],
} as const;

const one = { type: 'object', properties: { incident: incidentRecord } } as const;

const errors = {
  403: {
    description:
      'The caller may see the session but not review it (proctor, auditor), or the signature failed',
    ...errorBody,
  },
  404: { description: 'No such session or incident, or outside the caller’s scope', ...errorBody },
  406: commonErrors[406],
  422: { description: "`'incident_id':['is not an automated flag']`", ...errorBody },
} as const;

export const dismissFlagSchema = {
  tags,
  summary: 'Dismiss an automated flag (reviewers and the exam managers)',
  description:
    'Marks the flag dismissed: it stays on the timeline, marked, and no longer counts towards the ' +
    'session’s suspicion_score. Dismissing a dismissed flag changes nothing. Who may: as for recording a ' +
    'review (docs/review.md).',
  headers: v3Headers,
  params: incidentParams,
  body: { type: 'object', properties: { ...signedParams }, required: ['timestamp', 'nonce', 'signature'] },
  response: { 200: one, ...errors },
} as const;

export const restoreFlagSchema = {
  tags,
  summary: 'Restore a dismissed automated flag (reviewers and the exam managers)',
  description:
    'Clears the dismissal: the flag counts towards the suspicion_score again. Restoring a flag that is ' +
    'not dismissed changes nothing.',
  headers: v3Headers,
  params: incidentParams,
  querystring: signedQuery,
  response: { 200: one, ...errors },
} as const;
