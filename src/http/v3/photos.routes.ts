import type { FastifyInstance } from 'fastify';
import { actorOf } from '../actor.ts';
import type { RouteDeps } from '../route-deps.ts';
import { isoTime } from '../time.ts';
import {
  destroyFacePhotoSchema,
  destroyIdCardSchema,
  facePhotoAddressSchema,
  idCardAddressSchema,
} from './photos.schemas.ts';
import { presentOneStudentSessionV3 } from './student-sessions.presenter.ts';

type IdRoute = { Params: { id: string } };

/**
 * The photo actions of a student session (contract §7): destroy the ID photo or the face photo
 * (`{"student": record}`), and an expiring address of the face photo (`{"url", "expires_at"}`).
 * Every answer is 200. Photos are uploaded by the candidate room.
 */
export function registerPhotoRoutes(app: FastifyInstance, { services, clock }: RouteDeps): void {
  const { photos, studentSessions } = services;

  app.delete<IdRoute>('/student_sessions/:id/id_card', { schema: destroyIdCardSchema }, async (request) => ({
    student: await presentOneStudentSessionV3(
      studentSessions,
      await photos.remove(actorOf(request), request.params.id, 'id_card'),
      clock.now(),
    ),
  }));

  app.delete<IdRoute>(
    '/student_sessions/:id/face_photo',
    { schema: destroyFacePhotoSchema },
    async (request) => ({
      student: await presentOneStudentSessionV3(
        studentSessions,
        await photos.remove(actorOf(request), request.params.id, 'face_photo'),
        clock.now(),
      ),
    }),
  );

  app.get<IdRoute>(
    '/student_sessions/:id/face_photo',
    { schema: facePhotoAddressSchema },
    async (request) => {
      const address = await photos.facePhotoAddress(actorOf(request), request.params.id);
      return { url: address.url, expires_at: isoTime(address.expiresAt) };
    },
  );

  app.get<IdRoute>('/student_sessions/:id/id_card', { schema: idCardAddressSchema }, async (request) => {
    const address = await photos.idCardAddress(actorOf(request), request.params.id);
    return { url: address.url, expires_at: isoTime(address.expiresAt) };
  });
}
