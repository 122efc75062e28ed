import type { DialectName, TestClock, TestServer } from './server.ts';
import { startTestServer } from './server.ts';

export type TestUser = Awaited<ReturnType<TestServer['user']>>;

/** The roles below superuser, each of which gets a member in both institutes of the world. */
export const MEMBER_ROLES = ['administrator', 'teacher', 'proctor', 'reviewer', 'auditor'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
export const NON_ADMIN_ROLES = ['teacher', 'proctor', 'reviewer', 'auditor'] as const;

/** A test server with a superuser and two institutes that each have one member of every role. */
export interface InstituteWorld {
  readonly server: TestServer;
  /** The superuser's own institute. */
  readonly homeId: number;
  readonly superuser: TestUser;
  /** The institute most tests act on. */
  readonly mainId: number;
  readonly member: Readonly<Record<MemberRole, TestUser>>;
  /** Another institute, for the "not theirs" cases. */
  readonly otherId: number;
  readonly outsider: Readonly<Record<MemberRole, TestUser>>;
}

/** Starts a test server on `dialect` with the clock and builds the world. Returns it. */
export async function startInstituteWorld(dialect: DialectName, clock: TestClock): Promise<InstituteWorld> {
  const server = await startTestServer(dialect, { clock });
  const homeId = await server.institute();
  const superuser = await server.user(homeId, 'superuser');
  const mainId = await server.institute();
  const otherId = await server.institute();
  const member = {} as Record<MemberRole, TestUser>;
  const outsider = {} as Record<MemberRole, TestUser>;
  for (const role of MEMBER_ROLES) {
    member[role] = await server.user(mainId, role);
    outsider[role] = await server.user(otherId, role);
  }
  return { server, homeId, superuser, mainId, member, otherId, outsider };
}
