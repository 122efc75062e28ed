/**
 * The role × endpoint matrix (contract §4, src/domain/access.ts): every V3 route the server
 * documents, called by every actor, answers the class of status the policy gives that actor.
 * A route the OpenAPI document lists without a row below fails the suite.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DIALECTS, startTestServer, type TestServer } from '../helpers/server.ts';
import {
  A_ACTORS,
  ACTORS,
  type ActorName,
  B_ACTORS,
  type Call,
  type Cell,
  createWorld,
  CROSS_PROBES,
  type Outcome,
  ROUTE_CALLS,
  type Row,
  runCell,
  runProbe,
  servedRoutes,
  snapshotOfA,
  type World,
} from './access-matrix.support.ts';

const OK: Outcome = 'ok';
const LIST: Outcome = 'listed';
const OMIT: Outcome = 'omitted';
const DENY: Outcome = 'forbidden';
const HIDE: Outcome = 'hidden';
const INV: Outcome = 'invalid';

/**
 * The expected outcome of every route for every actor. Columns, all fresh users: institute A's
 * superuser, administrator, the exam's owner (teacher), another teacher, a co-manager (teacher),
 * proctor, reviewer, auditor; institute B's administrator and teacher. Rows follow canReadExam /
 * canManageExam (exam and everything under it), canAddIncident, canCreateExam,
 * canAdministerInstitutes / instituteStanding / usersStanding, configStanding (tool providers, LTI
 * resources; a write by a non-manager is 403 before its parameters, docs/api-v3-lti.md) and
 * canReadIdentityProvider, auditLogScope, outboxScope. `listed`/`omitted`: 2xx with or without A's fixture records.
 */
// prettier-ignore
const EXPECTED: Readonly<Record<string, Row>> = {
  //                                                          super admin owner teach coman proct revie audit B-adm B-tch
  'GET /exams':                                              [LIST, LIST, LIST, OMIT, LIST, LIST, LIST, LIST, OMIT, OMIT],
  'POST /exams':                                             [OK,   OK,   OK,   OK,   OK,   DENY, DENY, DENY, OK,   OK  ],
  'GET /exams/:id':                                          [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'PATCH /exams/:id':                                        [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'PUT /exams/:id':                                          [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /exams/:id':                                       [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'GET /exams/:id/index_students':                           [LIST, LIST, LIST, HIDE, LIST, LIST, LIST, LIST, HIDE, HIDE],
  'GET /exams/id/show_student':                              [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /exams/:id/show_student':                             [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'POST /exams/:id/add_student':                             [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /exams/:id/delete_student':                        [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'GET /exams/:exam_id/documents':                           [LIST, LIST, LIST, HIDE, LIST, LIST, LIST, LIST, HIDE, HIDE],
  'POST /exams/:exam_id/documents':                          [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:exam_id/documents/:id':                       [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'PATCH /exams/:exam_id/documents/:id':                     [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'PUT /exams/:exam_id/documents/:id':                       [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /exams/:exam_id/documents/:id':                    [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'GET /exams/:exam_id/attachments':                         [LIST, LIST, LIST, HIDE, LIST, LIST, LIST, LIST, HIDE, HIDE],
  'POST /exams/:exam_id/attachments':                        [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:exam_id/attachments/:id':                     [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'DELETE /exams/:exam_id/attachments/:id':                  [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:exam_id/documents/:document_id/attachments':  [LIST, LIST, LIST, HIDE, LIST, LIST, LIST, LIST, HIDE, HIDE],
  'POST /exams/:exam_id/documents/:document_id/attachments': [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:exam_id/documents/:document_id/attachments/:id':
                                                             [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'DELETE /exams/:exam_id/documents/:document_id/attachments/:id':
                                                             [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'GET /exams/:exam_id/student_sessions':                    [LIST, LIST, LIST, HIDE, LIST, LIST, LIST, LIST, HIDE, HIDE],
  'POST /exams/:exam_id/student_sessions':                   [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /student_sessions':                                   [LIST, LIST, LIST, OMIT, LIST, LIST, LIST, LIST, OMIT, OMIT],
  'GET /student_sessions/:id':                               [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'PATCH /student_sessions/:id':                             [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'PUT /student_sessions/:id':                               [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /student_sessions/:id':                            [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/incidents':                    [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   DENY, HIDE, HIDE],
  'POST /exams/:exam_id/student_sessions/import':            [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:id/email_preview':                            [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:id/email_deliveries':                         [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /exams/:id/monitor':                                  [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],

  'DELETE /student_sessions/:id/id_card':                    [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /student_sessions/:id/face_photo':                 [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /student_sessions/:id/face_photo':                    [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /student_sessions/:id/id_card':                       [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /student_sessions/:id/report.pdf':                    [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /student_sessions/:id/files':                         [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /student_sessions/:id/recordings':                    [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  // Who looked (docs/candidate-data.md): read like the session.
  'GET /student_sessions/:id/staff_views':                   [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],

  // Reviews (docs/review.md): read like the session; verdicts by reviewers and managers (canReviewSession).
  'GET /student_sessions/:id/review':                        [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'PUT /student_sessions/:id/review':                        [OK,   OK,   OK,   HIDE, OK,   DENY, OK,   DENY, HIDE, HIDE],
  // Appeals (docs/appeals.md): read like the session; decided like a verdict (canDecideAppeal), but
  // never by the reviewer who gave the verdict (the administrator here: 422 `decision`).
  'GET /student_sessions/:id/appeal':                        [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'PUT /student_sessions/:id/appeal':                        [OK,   INV,  OK,   HIDE, OK,   DENY, OK,   DENY, HIDE, HIDE],
  // Compat, by room token: whoever may not review the session gets the 404 of an unknown token.
  'GET /student_sessions/:id/reviewable':                    [OK,   OK,   OK,   HIDE, OK,   HIDE, OK,   HIDE, HIDE, HIDE],
  'GET /exams/:exam_id/review_queue':                        [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  // Automated flags: dismissed and restored by whoever may record a verdict (canReviewSession).
  'POST /student_sessions/:id/incidents/:incident_id/dismiss':   [OK,   OK,   OK,   HIDE, OK,   DENY, OK,   DENY, HIDE, HIDE],
  'DELETE /student_sessions/:id/incidents/:incident_id/dismiss': [OK,   OK,   OK,   HIDE, OK,   DENY, OK,   DENY, HIDE, HIDE],

  'PUT /exams/:id/add_comanager':                            [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /exams/:id/remove_comanager':                      [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/assign_proctor':               [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /student_sessions/:id/assigned_proctor':           [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'POST /exams/:id/send_emails':                             [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'POST /exams/:id/practice_reminders':                      [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  // The proctor column is the proctor assigned to the session the call ends (canEndSession).
  'POST /student_sessions/:id/end_exam':                     [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],

  'PUT /exams/:id/generate_exam_documents_zip':              [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:id/status_exam_documents_zip':                [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:id/download_exam_documents_zip':              [OK,   OK,   OK,   HIDE, OK,   DENY, DENY, DENY, HIDE, HIDE],

  'GET /institutes':                                         [LIST, DENY, DENY, DENY, DENY, DENY, DENY, DENY, DENY, DENY],
  'POST /institutes':                                        [OK,   DENY, DENY, DENY, DENY, DENY, DENY, DENY, DENY, DENY],
  'GET /institutes/:id':                                     [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PATCH /institutes/:id':                                   [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /institutes/:id':                                     [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /institutes/:id':                                  [OK,   DENY, DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'POST /institutes/:id/webhook_secret':                     [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /institutes/:id/message_overrides':                   [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /institutes/:id/message_overrides':                   [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /institutes/:id/record_of_processing':                [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],

  'GET /institutes/:institute_id/users':                     [LIST, LIST, DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'POST /institutes/:institute_id/users':                    [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /institutes/:institute_id/users/:id':                 [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PATCH /institutes/:institute_id/users/:id':               [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /institutes/:institute_id/users/:id':                 [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /institutes/:institute_id/users/:id':              [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],

  'GET /tool_providers':                                     [LIST, LIST, LIST, LIST, LIST, DENY, DENY, LIST, OMIT, OMIT],
  'POST /tool_providers':                                    [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, OK,   DENY],
  'GET /tool_providers/:id':                                 [OK,   OK,   OK,   OK,   OK,   DENY, DENY, OK,   HIDE, HIDE],
  'GET /tool_provider/:id':                                  [OK,   OK,   OK,   OK,   OK,   DENY, DENY, OK,   HIDE, HIDE],
  'PATCH /tool_providers/:id':                               [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /tool_providers/:id':                                 [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /tool_providers/:id':                              [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],

  'GET /lti_resources':                                      [LIST, LIST, LIST, LIST, LIST, DENY, DENY, LIST, OMIT, OMIT],
  'POST /lti_resources':                                     [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, DENY],
  'GET /lti_resources/:id':                                  [OK,   OK,   OK,   OK,   OK,   DENY, DENY, OK,   HIDE, HIDE],
  'PATCH /lti_resources/:id':                                [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /lti_resources/:id':                                  [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'DELETE /lti_resources/:id':                               [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /exams/:id/show_lti_student':                         [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],

  'GET /identity_providers':                                 [LIST, LIST, LIST, LIST, LIST, LIST, LIST, LIST, OMIT, OMIT],

  'GET /audit_events':                                       [LIST, LIST, DENY, DENY, DENY, DENY, DENY, DENY, OMIT, DENY],

  'GET /outbox':                                             [LIST, LIST, DENY, DENY, DENY, DENY, DENY, DENY, OMIT, DENY],
  'GET /outbox/:id':                                         [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, DENY],
  'POST /outbox/:id/redeliver':                              [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, DENY],
  'POST /institutes/:institute_id/users/:id/invite':         [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],

  // Live proctoring (docs/api-live.md): whoever may end the session (canEndSession; the proctor column is
  // the proctor assigned to the session the call names).
  'GET /student_sessions/:id/messages':                      [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/messages':                     [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/admit':                        [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/pause':                        [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],
  'POST /student_sessions/:id/resume':                       [OK,   OK,   OK,   HIDE, OK,   OK,   DENY, DENY, HIDE, HIDE],

  // Retention (docs/retention.md): who sees the session and administers the institute; others who see it 403.
  'GET /student_sessions/:id/legal_hold':                    [OK,   OK,   DENY, HIDE, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /student_sessions/:id/legal_hold':                    [OK,   OK,   DENY, HIDE, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /student_sessions/:id/purges':                        [OK,   OK,   DENY, HIDE, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'GET /purges':                                             [LIST, LIST, DENY, DENY, DENY, DENY, DENY, DENY, OMIT, DENY],
  'GET /student_sessions/:id/retention':                     [OK,   OK,   OK,   HIDE, OK,   OK,   OK,   OK,   HIDE, HIDE],
  'GET /institutes/:id/retention_policies':                  [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
  'PUT /institutes/:id/retention_policies':                  [OK,   OK,   DENY, DENY, DENY, DENY, DENY, DENY, HIDE, HIDE],
};

/** Routes whose calls could take institute A down with them if the policy failed: run them last. */
const LAST = new Set(['DELETE /institutes/:id']);
const ROUTES = [
  ...Object.keys(EXPECTED).filter((route) => !LAST.has(route)),
  ...Object.keys(EXPECTED).filter((route) => LAST.has(route)),
];

function expectation(route: string, actor: ActorName): Outcome {
  const outcome = EXPECTED[route]?.[ACTORS.indexOf(actor)];
  if (outcome === undefined) throw new Error(`no expectation for ${route} as ${actor}`);
  return outcome;
}

function failures(cells: readonly Cell[]): string[] {
  return cells
    .filter((cell) => cell.actual !== cell.expected)
    .map(
      (cell) =>
        `${cell.route} as ${cell.actor}: expected ${cell.expected}, got ${cell.actual}\n    ${cell.detail}`,
    );
}

for (const dialect of DIALECTS) {
  describe(`V3 access matrix [${dialect}]`, () => {
    let server: TestServer;
    let world: World;
    let served = new Set<string>();
    const tally = { cells: 0, passed: 0 };

    /** Counts the cells, then fails naming every cell whose outcome is not the expected one. */
    function check(cells: readonly Cell[]): void {
      tally.cells += cells.length;
      tally.passed += cells.filter((cell) => cell.actual === cell.expected).length;
      const failed = failures(cells);
      assert.equal(failed.length, 0, `${failed.length} cell(s) failed:\n  ${failed.join('\n  ')}`);
    }

    before(async () => {
      server = await startTestServer(dialect);
      world = await createWorld(server);
      served = new Set(await servedRoutes(server.baseUrl));
    });

    after(async () => {
      console.log(`# access matrix [${dialect}]: ${tally.passed} of ${tally.cells} cells as expected`);
      await server.close();
    });

    it('has an expectation and a call for every V3 route in the OpenAPI document', () => {
      assert.ok(served.size > 0, 'the OpenAPI document lists V3 routes');
      const problems: string[] = [];
      for (const route of served) {
        if (EXPECTED[route] === undefined) problems.push(`no expectation for ${route}`);
        else if (ROUTE_CALLS[route] === undefined) problems.push(`no call for ${route}`);
      }
      assert.deepEqual(problems, []);
    });

    it('documents every route of its table (a row for a route that is gone is stale)', () => {
      const stale = Object.keys(EXPECTED).filter((route) => !served.has(route));
      assert.deepEqual(stale, []);
    });

    describe("institute B neither sees nor changes anything of institute A's", () => {
      const planned = new Map<string, Call>();
      const probes = new Map<string, Call>();
      let beforeB: unknown;

      before(async () => {
        // Fresh targets first, so the snapshot holds them and a wrongful change to one shows.
        for (const route of ROUTES) {
          const spec = ROUTE_CALLS[route];
          if (spec === undefined) continue;
          for (const actor of B_ACTORS) planned.set(`${route} ${actor}`, await spec.prepare(world, actor));
        }
        for (const probe of CROSS_PROBES) probes.set(probe.name, await probe.prepare(world));
        beforeB = await snapshotOfA(world);
      });

      for (const route of ROUTES) {
        it(`${route}`, async () => {
          const cells: Cell[] = [];
          for (const actor of B_ACTORS) {
            const prepared = planned.get(`${route} ${actor}`);
            if (prepared === undefined) throw new Error(`no call for ${route}`);
            cells.push(await runCell(world, route, actor, expectation(route, actor), prepared));
          }
          check(cells);
        });
      }

      it("answers B's own routes naming A's records exactly as for missing ones", async () => {
        const cells: Cell[] = [];
        for (const probe of CROSS_PROBES) {
          const prepared = probes.get(probe.name);
          if (prepared === undefined) throw new Error(`no call for ${probe.name}`);
          cells.push(await runProbe(world, probe, prepared));
        }
        check(cells);
      });

      it("leaves every record of A as it was (re-read by A's administrator)", async () => {
        assert.deepEqual(await snapshotOfA(world), beforeB);
      });
    });

    describe('institute A, by role', () => {
      for (const route of ROUTES) {
        it(`${route}`, async () => {
          const spec = ROUTE_CALLS[route];
          if (spec === undefined) throw new Error(`no call for ${route}`);
          const cells: Cell[] = [];
          for (const actor of A_ACTORS) {
            const prepared = await spec.prepare(world, actor);
            cells.push(await runCell(world, route, actor, expectation(route, actor), prepared));
          }
          check(cells);
        });
      }
    });
  });
}
