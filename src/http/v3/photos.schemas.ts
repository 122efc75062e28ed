import { commonErrors, errorBody, idParam, signedQuery, v3Headers } from './common.schemas.ts';
import { studentRecord } from './student-sessions.schemas.ts';

const tags = ['student sessions'];
const studentAnswer = { type: 'object', properties: { student: studentRecord } } as const;

const WRITE_ERRORS =
  "404 `Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope; 403 " +
  'when the caller sees it but may not manage its exam.';

/** The schema of `DELETE /student_sessions/:id/id_card` or `.../face_photo` (one per photo). */
function destroyPhotoSchema(photo: string, fields: string) {
  return {
    tags,
    summary: `Destroy the ${photo} of a student session`,
    description:
      `Removes the stored file and nulls ${fields}. A session without one answers the same (200). ` +
      WRITE_ERRORS,
    headers: v3Headers,
    params: idParam(),
    querystring: signedQuery,
    response: { 200: studentAnswer, 404: errorBody, ...commonErrors },
  } as const;
}

export const destroyIdCardSchema = destroyPhotoSchema(
  'ID photo',
  '`id_card_file_name`, `id_card_content_type` and `id_card_file_size`',
);

export const destroyFacePhotoSchema = destroyPhotoSchema(
  'face photo',
  '`face_photo_file_name`, `face_photo_content_type` and `face_photo_file_size`',
);

export const facePhotoAddressSchema = {
  tags,
  summary: 'Get an expiring address of the face photo of a student session',
  description:
    'The address downloads the photo without credentials for 5 minutes (`expires_at`); after that, or ' +
    "altered, it is refused (403). It is always the service's own `/files/...` address. Readable by whoever " +
    "may read the session. 404 `Couldn't find the face photo` when the session has none; 404 " +
    "`Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope.",
  headers: v3Headers,
  params: idParam(),
  querystring: signedQuery,
  response: {
    200: {
      type: 'object',
      properties: {
        url: { type: 'string', format: 'uri' },
        expires_at: { type: 'string', format: 'date-time' },
      },
    },
    404: errorBody,
    ...commonErrors,
  },
} as const;

export const idCardAddressSchema = {
  ...facePhotoAddressSchema,
  summary: 'Get an expiring address of the ID card photo of a student session (an Invigil addition)',
  description:
    'Like the face photo address: downloads the ID card photo without credentials for 5 minutes ' +
    '(`expires_at`), for reviewers comparing it with the recording. Readable by whoever may read the ' +
    "session. 404 `Couldn't find the ID card` when the session has none; 404 " +
    "`Couldn't find Student Session with 'id'=ID` when the session is missing or out of scope.",
} as const;
