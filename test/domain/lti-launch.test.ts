/**
 * What a verified LMS launch does (src/domain/lti/launch.service.ts), on both databases: learners
 * find or create their session (attempts, placeholder email), staff are matched or created and sent
 * to the console, deep linking issues a ticket, LtiEndAssessment hands the exam in, and a launched
 * student is found by `show_lti_student` through signed V3 HTTP.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Actor } from '../../src/domain/access.ts';
import { isPlaceholderEmail } from '../../src/domain/lti/placeholder-email.ts';
import { hashToken } from '../../src/security/keys.ts';
import type { LaunchOutcome, LtiLaunch, LtiRole } from '../../src/domain/lti/launch.ts';
import { LaunchRefused } from '../../src/domain/lti/launch.ts';
import { object } from '../helpers/json.ts';
import { DIALECTS, startTestServer, TestClock, type TestServer } from '../helpers/server.ts';
import { startSmtpServer, type TestSmtpServer } from '../mail/support.ts';

const CLIENT = { ip: '203.0.113.9', userAgent: 'LMS test' };

type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** A server delivering mail to `smtpUrl`, with a superuser, a main institute and another one. */
interface World {
  readonly server: TestServer;
  readonly mainId: number;
  readonly otherId: number;
  readonly superuser: TestUser;
  readonly member: { readonly teacher: TestUser; readonly administrator: TestUser };
  readonly outsider: { readonly teacher: TestUser };
}

async function startWorld(
  dialect: (typeof DIALECTS)[number],
  clock: TestClock,
  smtpUrl: string,
): Promise<World> {
  const server = await startTestServer(dialect, { clock, env: { SMTP_URL: smtpUrl } });
  const homeId = await server.institute();
  const mainId = await server.institute();
  const otherId = await server.institute();
  return {
    server,
    mainId,
    otherId,
    superuser: await server.user(homeId, 'superuser'),
    member: {
      teacher: await server.user(mainId, 'teacher'),
      administrator: await server.user(mainId, 'administrator'),
    },
    outsider: { teacher: await server.user(otherId, 'teacher') },
  };
}

for (const dialect of DIALECTS) {
  describe(`LTI launch service [${dialect}]`, () => {
    const clock = new TestClock(Math.floor(Date.now() / 1000) * 1000);
    let world: World;
    let smtp: TestSmtpServer;
    let teacher: Actor;
    let providerId: number;
    let examId: number;
    let otherExamId: number;
    let sequence = 0;
    const unique = (prefix: string) => {
      sequence += 1;
      return `${prefix}-${sequence}-${crypto.randomBytes(3).toString('hex')}`;
    };

    before(async () => {
      smtp = await startSmtpServer();
      world = await startWorld(dialect, clock, smtp.url);
      const { services } = world.server.app;
      teacher = { id: world.member.teacher.id, instituteId: world.mainId, role: 'teacher' };
      const admin: Actor = {
        id: world.member.administrator.id,
        instituteId: world.mainId,
        role: 'administrator',
      };
      const provider = await services.toolProviders.create(admin, {
        name: 'Moodle',
        lti_version: '1.1',
        consumer_key: unique('moodle'),
        shared_secret: 'secret',
      });
      providerId = provider.id;
      examId = (
        await services.exams.create(teacher, {
          name: 'Chemistry final',
          type: 'record_review',
          duration_minutes: 60,
        })
      ).id;
      otherExamId = (
        await services.exams.create(teacher, { name: 'Physics', type: 'classroom', duration_minutes: 30 })
      ).id;
    });

    after(async () => {
      await world?.server.close();
      await smtp?.close();
    });

    /** A learner launch of a linked resource link, as a verifier would build it. */
    function launchOf(overrides: Partial<LtiLaunch> = {}): LtiLaunch {
      return {
        version: '1.3',
        toolProvider: { id: providerId, instituteId: world.mainId, name: 'Moodle' },
        messageKind: 'resource_link',
        deploymentId: 'dep-1',
        platformUserId: unique('user'),
        platformIssuer: 'https://lms.example.edu',
        name: 'Ada Lovelace',
        email: `${unique('ada')}@Example.edu`,
        roles: ['learner'],
        resourceLink: { id: linkedLink, title: 'Final' },
        context: { id: 'course-1', title: 'Chemistry' },
        custom: {},
        returnUrl: null,
        proctoring: null,
        deepLinking: null,
        ...overrides,
      };
    }

    let linkedLink = '';
    before(async () => {
      linkedLink = unique('rl');
      // The first launch of a deep-linked placement links it to the exam it names.
      const first = await launch(launchOf({ custom: { invigil_exam_id: String(examId) } }));
      assert.equal(first.kind, 'room');
    });

    function launch(value: LtiLaunch): Promise<LaunchOutcome> {
      return world.server.app.services.ltiLaunch.launch(value, CLIENT);
    }

    async function room(value: LtiLaunch) {
      const outcome = await launch(value);
      assert.equal(outcome.kind, 'room', JSON.stringify(outcome));
      if (outcome.kind !== 'room') throw new Error('unreachable');
      return outcome;
    }

    async function refused(value: LtiLaunch): Promise<LaunchRefused> {
      try {
        await launch(value);
      } catch (error) {
        assert.ok(error instanceof LaunchRefused, String(error));
        return error;
      }
      assert.fail('the launch was carried out');
    }

    const db = () => world.server.app.database.db;
    const sessionRow = (id: number) =>
      db().selectFrom('student_sessions').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    const linkRow = (id: number) =>
      db()
        .selectFrom('lti_session_links')
        .selectAll()
        .where('student_session_id', '=', id)
        .executeTakeFirst();

    async function finish(token: string) {
      await world.server.app.services.room.finish(token);
    }

    describe('learners', () => {
      it('creates a session with the LMS ids, name and email, links it, and audits it', async () => {
        const value = launchOf();
        const outcome = await room(value);
        assert.equal(outcome.examId, examId);
        const row = await sessionRow(outcome.sessionId);
        assert.equal(row.token, outcome.token);
        assert.equal(row.lms_user_id, value.platformUserId);
        assert.equal(row.resource_link_id, linkedLink);
        assert.equal(row.context_id, 'course-1');
        assert.notEqual(row.lti_resource_id, null);
        assert.equal(row.name, 'Ada Lovelace');
        assert.equal(row.email, value.email?.toLowerCase());
        assert.equal(row.attempt, 0);
        const link = await linkRow(outcome.sessionId);
        assert.equal(link?.platform_user_id, value.platformUserId);
        assert.equal(link?.deployment_id, 'dep-1');
        assert.equal(link?.lti_version, '1.3');
        const audit = await db()
          .selectFrom('audit_events')
          .selectAll()
          .where('action', '=', 'lti_session_created')
          .where('target_id', '=', outcome.sessionId)
          .executeTakeFirst();
        assert.equal(audit?.institute_id, world.mainId);
        assert.equal(audit?.target_type, 'student_sessions');
        assert.equal(audit?.ip, CLIENT.ip);
      });

      it('reuses the session on the next launch', async () => {
        const value = launchOf();
        const first = await room(value);
        const again = await room({ ...value, email: 'changed@example.edu' });
        assert.equal(again.sessionId, first.sessionId);
        assert.equal(again.token, first.token);
      });

      it('shows a message for a finished session instead of the room', async () => {
        const value = launchOf();
        const first = await room(value);
        await finish(first.token);
        const outcome = await launch(value);
        assert.equal(outcome.kind, 'message');
        if (outcome.kind !== 'message') return;
        assert.equal(outcome.title, 'Exam finished');
        assert.match(outcome.message, /You have finished this exam/);
      });

      it('makes a new attempt for a Proctoring Services launch with a higher attempt_number', async () => {
        const proctoring = (attemptNumber: number) => ({
          attemptNumber,
          startAssessmentUrl: 'https://lms.example.edu/start',
          sessionData: `data-${attemptNumber}`,
          acs: { url: 'https://lms.example.edu/acs', actions: ['terminate', 'flag'] },
        });
        const value = launchOf({ messageKind: 'start_proctoring', proctoring: proctoring(1) });
        const first = await room(value);
        const link = await linkRow(first.sessionId);
        assert.equal(link?.attempt_number, 1);
        assert.equal(link?.session_data, 'data-1');
        assert.equal(link?.acs_url, 'https://lms.example.edu/acs');
        assert.deepEqual(JSON.parse(link?.acs_actions ?? 'null'), ['terminate', 'flag']);
        await finish(first.token);
        // The same attempt again: finished.
        assert.equal((await launch(value)).kind, 'message');
        const second = await room({ ...value, proctoring: proctoring(2) });
        assert.notEqual(second.sessionId, first.sessionId);
        const row = await sessionRow(second.sessionId);
        assert.equal(row.attempt, 1);
        assert.equal(row.email, (await sessionRow(first.sessionId)).email);
        assert.equal((await linkRow(second.sessionId))?.attempt_number, 2);
        // An ordinary launch now continues attempt 2 and erases none of its claims.
        const ordinary = await room({ ...value, messageKind: 'resource_link', proctoring: null });
        assert.equal(ordinary.sessionId, second.sessionId);
        assert.equal((await linkRow(second.sessionId))?.session_data, 'data-2');
      });

      it('hands the exam in on LtiEndAssessment', async () => {
        const proctoring = {
          attemptNumber: 1,
          startAssessmentUrl: null,
          sessionData: null,
          acs: null,
        };
        const value = launchOf({ messageKind: 'start_proctoring', proctoring });
        const started = await room(value);
        const outcome = await launch({ ...value, messageKind: 'end_assessment' });
        assert.deepEqual(outcome, {
          kind: 'message',
          title: 'Exam handed in',
          message: 'Your exam has been handed in. You can close this window.',
          status: 200,
        });
        const row = await sessionRow(started.sessionId);
        assert.equal(row.status, 'exam_finished');
        assert.equal(row.end_reason, 'finished');
        // Said twice, it changes nothing.
        assert.equal((await launch({ ...value, messageKind: 'end_assessment' })).kind, 'message');
      });

      it('gives a placeholder email when the platform sends none, and never mails it', async () => {
        const value = launchOf({ email: null, name: null });
        const outcome = await room(value);
        const row = await sessionRow(outcome.sessionId);
        assert.ok(isPlaceholderEmail(row.email), row.email);
        assert.match(row.email, /^lti-[0-9a-f]{24}@lti\.invalid$/);
        assert.equal(row.name, `Student ${value.platformUserId}`);
        assert.equal((await room(value)).sessionId, outcome.sessionId, 'found again by the same address');
        // send_emails writes the exam link to the outbox; delivery marks it failed without sending it.
        const { services } = world.server.app;
        await services.mail.sendExamEmails(teacher, examId);
        const message = await db()
          .selectFrom('outbox')
          .selectAll()
          .where('to_address', '=', row.email)
          .executeTakeFirstOrThrow();
        smtp.messages.length = 0;
        assert.equal(await services.mail.deliver(message.id, { last: false }), 'rejected');
        assert.deepEqual(
          smtp.messages.filter((sent) => sent.envelopeTo.includes(row.email)),
          [],
        );
        const after = await db()
          .selectFrom('outbox')
          .selectAll()
          .where('id', '=', message.id)
          .executeTakeFirstOrThrow();
        assert.equal(after.status, 'failed');
        assert.match(after.last_error ?? '', /placeholder/);
      });

      it('claims a session staff added with the same email', async () => {
        const email = `${unique('added')}@example.edu`;
        const added = await world.server.app.services.studentSessions.create(teacher, examId, {
          name: 'Added By Hand',
          email,
        });
        const outcome = await room(launchOf({ email: email.toUpperCase() }));
        assert.equal(outcome.sessionId, added.id);
        assert.equal((await sessionRow(added.id)).resource_link_id, linkedLink);
      });

      it('tells a learner an unknown resource link is not ready, and records the placement', async () => {
        const link = unique('new-link');
        const outcome = await launch(launchOf({ resourceLink: { id: link, title: 'Quiz' } }));
        assert.deepEqual(outcome, {
          kind: 'message',
          title: 'Exam not ready',
          message:
            'This exam is not ready yet. Ask your teacher to set it up in Invigil, then open the link again.',
          status: 404,
        });
        const resource = await db()
          .selectFrom('lti_resources')
          .selectAll()
          .where('resource_link_id', '=', link)
          .executeTakeFirstOrThrow();
        assert.equal(resource.exam_id, null);
        assert.equal(resource.title, 'Quiz');
      });

      it('ignores a custom exam id of another institute', async () => {
        const foreign = await world.server.app.services.exams.create(
          { id: world.outsider.teacher.id, instituteId: world.otherId, role: 'teacher' },
          { name: 'Not yours', type: 'classroom', duration_minutes: 10 },
        );
        const outcome = await launch(
          launchOf({
            resourceLink: { id: unique('rl'), title: null },
            custom: { invigil_exam_id: String(foreign.id) },
          }),
        );
        assert.equal(outcome.kind, 'message');
      });

      it('finds a launched student through show_lti_student (signed V3)', async () => {
        const value = launchOf();
        const outcome = await room(value);
        const answer = await world.member.teacher.client.v3('GET', '/exams/:id/show_lti_student', {
          id: examId,
          student_lms_id: value.platformUserId,
          resource_link_id: linkedLink,
          context_id: 'course-1',
        });
        assert.equal(answer.status, 200, answer.text);
        const student = object(object(answer.json, 'body').student, 'student');
        assert.equal(student.id, outcome.sessionId);
        assert.equal(student.student_lms_id, value.platformUserId);
        assert.equal(student.token, outcome.token);
      });
    });

    describe('staff', () => {
      const staffLaunch = (roles: LtiRole[], overrides: Partial<LtiLaunch> = {}) =>
        launchOf({ roles: ['learner', ...roles], ...overrides });

      it('matches an instructor to the institute’s user by email (any case) and keeps their role', async () => {
        const email = `${unique('proctor')}@Example.org`;
        const proctor = await world.server.user(world.mainId, 'proctor', email);
        const outcome = await launch(staffLaunch(['instructor'], { email: email.toUpperCase() }));
        assert.deepEqual(outcome, { kind: 'console', userId: proctor.id, path: `/console/exams/${examId}` });
        const user = await db()
          .selectFrom('users')
          .selectAll()
          .where('id', '=', proctor.id)
          .executeTakeFirstOrThrow();
        assert.equal(user.role, 'proctor');
      });

      it('creates a teacher for an unknown instructor, and audits it', async () => {
        const email = `${unique('new-teacher')}@example.org`;
        const outcome = await launch(staffLaunch(['instructor'], { email, name: 'Grace Hopper' }));
        assert.equal(outcome.kind, 'console');
        if (outcome.kind !== 'console') return;
        const user = await db()
          .selectFrom('users')
          .selectAll()
          .where('id', '=', outcome.userId)
          .executeTakeFirstOrThrow();
        assert.equal(user.role, 'teacher');
        assert.equal(user.institute_id, world.mainId);
        assert.equal(user.name, 'Grace Hopper');
        const audit = await db()
          .selectFrom('audit_events')
          .selectAll()
          .where('action', '=', 'lti_user_created')
          .where('target_id', '=', outcome.userId)
          .executeTakeFirst();
        assert.equal(audit?.user_id, outcome.userId);
        // The second launch finds the same user.
        const again = await launch(staffLaunch(['instructor'], { email }));
        assert.equal(again.kind === 'console' ? again.userId : undefined, outcome.userId);
      });

      it('creates an administrator for an administrator launch, never a superuser', async () => {
        const email = `${unique('new-admin')}@example.org`;
        const outcome = await launch(staffLaunch(['administrator', 'instructor'], { email }));
        if (outcome.kind !== 'console') assert.fail(JSON.stringify(outcome));
        const user = await db()
          .selectFrom('users')
          .selectAll()
          .where('id', '=', outcome.userId)
          .executeTakeFirstOrThrow();
        assert.equal(user.role, 'administrator');
        const superuser = await db()
          .selectFrom('users')
          .select('email')
          .where('id', '=', world.superuser.id)
          .executeTakeFirstOrThrow();
        const refusal = await refused(staffLaunch(['administrator'], { email: superuser.email }));
        assert.equal(refusal.code, 'user_in_other_institute');
        // Even a superuser whose account sits in the launching institute.
        const local = `${unique('local-super')}@example.org`;
        await world.server.user(world.mainId, 'superuser', local);
        const here = await refused(staffLaunch(['administrator'], { email: local }));
        assert.equal(here.code, 'superuser');
        assert.equal(here.status, 403);
      });

      it('refuses staff without email, and users of another institute', async () => {
        assert.equal((await refused(staffLaunch(['instructor'], { email: null }))).code, 'email_missing');
        const outsider = await db()
          .selectFrom('users')
          .select('email')
          .where('id', '=', world.outsider.teacher.id)
          .executeTakeFirstOrThrow();
        const refusal = await refused(staffLaunch(['instructor'], { email: outsider.email }));
        assert.equal(refusal.code, 'user_in_other_institute');
        assert.equal(refusal.status, 403);
      });

      it('sends staff of an unknown resource link to the LTI resources screen', async () => {
        const link = unique('staff-link');
        const outcome = await launch(
          staffLaunch(['instructor'], {
            resourceLink: { id: link, title: null },
            email: `${unique('t')}@example.org`,
          }),
        );
        if (outcome.kind !== 'console') assert.fail(JSON.stringify(outcome));
        const resource = await db()
          .selectFrom('lti_resources')
          .selectAll()
          .where('resource_link_id', '=', link)
          .executeTakeFirstOrThrow();
        assert.equal(outcome.path, `/console/admin/lti-resources?lti_resource_id=${resource.id}`);
      });

      it('links a deep-linked placement to its exam on the first launch', async () => {
        const link = unique('deep');
        const outcome = await launch(
          staffLaunch(['instructor'], {
            resourceLink: { id: link, title: null },
            custom: { invigil_exam_id: String(otherExamId) },
            email: `${unique('t')}@example.org`,
          }),
        );
        assert.equal(outcome.kind === 'console' ? outcome.path : '', `/console/exams/${otherExamId}`);
      });

      it('issues a deep-linking ticket, for staff only', async () => {
        const deepLinking = {
          returnUrl: 'https://lms.example.edu/deep-link/return',
          data: 'opaque',
          acceptTypes: ['ltiResourceLink'],
          acceptMultiple: false,
          title: null,
        };
        const email = `${unique('dl')}@example.org`;
        const value = staffLaunch(['instructor'], {
          messageKind: 'deep_linking',
          resourceLink: null,
          deepLinking,
          email,
        });
        const outcome = await launch(value);
        if (outcome.kind !== 'console') assert.fail(JSON.stringify(outcome));
        const match = /^\/console\/lti\/deep-link\?ticket=([A-Za-z0-9_-]{43})$/.exec(outcome.path);
        assert.ok(match, outcome.path);
        const row = await db()
          .selectFrom('lti_tickets')
          .selectAll()
          .where('ticket_hash', '=', hashToken(match[1] ?? ''))
          .executeTakeFirstOrThrow();
        assert.equal(row.purpose, 'deep_link');
        assert.equal(row.used_at, null);
        assert.ok(row.expires_at > clock.now());
        assert.deepEqual(JSON.parse(row.payload), {
          toolProviderId: providerId,
          deploymentId: 'dep-1',
          settings: deepLinking,
          userId: outcome.userId,
          platformIssuer: 'https://lms.example.edu',
        });
        const learner = await refused({ ...value, roles: ['learner'] });
        assert.equal(learner.code, 'deep_linking_not_staff');
        assert.equal(learner.status, 403);
      });

      it('signs the user in as OIDC does, auditing the tool provider', async () => {
        const email = `${unique('signin')}@example.org`;
        const outcome = await launch(staffLaunch(['instructor'], { email }));
        if (outcome.kind !== 'console') assert.fail(JSON.stringify(outcome));
        const result = await world.server.app.services.ltiLaunch.signIn(outcome.userId, CLIENT, providerId);
        if (result.pending !== undefined) assert.fail('no second factor expected');
        assert.equal(result.session.actor.id, outcome.userId);
        assert.match(result.token, /\S{20,}/);
        const audit = await db()
          .selectFrom('audit_events')
          .selectAll()
          .where('action', '=', 'sign_in')
          .where('user_id', '=', outcome.userId)
          .executeTakeFirstOrThrow();
        assert.equal(audit.target_type, 'tool_providers');
        assert.equal(audit.target_id, providerId);
      });
    });
  });
}
