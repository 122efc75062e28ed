import {
  INVIGIL,
  pickNumber,
  pickString,
  invigilCommand,
  type ServerChild,
  startServer,
} from './processes.ts';
import { type Credentials, signedParams, v3Headers } from './signed-client.ts';

/**
 * The environment an `invigil` child (CLI or server) runs with: its own database and data folder,
 * loopback on `port`, warnings only in the log, no cap on connections per address (every simulated
 * client comes from 127.0.0.1). The rest of the environment is passed through.
 */
export function serviceEnv(databaseUrl: string, dataDir: string, port: number): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    DATA_DIR: dataDir,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    MAX_CONNECTIONS_PER_ADDRESS: '0',
  };
}

/** Starts `invigil serve --no-worker` with `env` (its PORT) and waits until /healthz answers. */
export function serveWithoutWorker(env: NodeJS.ProcessEnv): Promise<ServerChild> {
  return startServer({
    label: 'invigil serve --no-worker',
    command: INVIGIL,
    args: ['serve', '--no-worker'],
    env,
    port: Number(env.PORT),
    readyPath: '/healthz',
  });
}

/** Creates an institute and a teacher with the CLI. Returns the teacher's credentials. */
export async function createTeacher(env: NodeJS.ProcessEnv): Promise<Credentials> {
  const institute = await invigilCommand(
    ['institute', 'create', '--name', 'Benchmark Institute', '--short-name', 'BENCH'],
    env,
  );
  const instituteId = pickNumber(institute, 'institute.id');
  const created = await invigilCommand(
    [
      'user',
      'create',
      '--institute',
      String(instituteId),
      '--email',
      'bench.teacher@example.org',
      '--name',
      'Bench Teacher',
      '--role',
      'teacher',
    ],
    env,
  );
  return {
    apiToken: pickString(created, 'user.api_token'),
    secretKey: pickString(created, 'user.secret_key'),
  };
}

/** Creates one exam through a signed V3 POST. Returns its id; throws unless the answer is 201. */
export async function createExam(
  baseUrl: string,
  credentials: Credentials,
  nextNonce: () => string,
  name = 'Benchmark exam',
): Promise<number> {
  const fields = { name, type: 'classroom', duration_minutes: '60' };
  const signed = signedParams(credentials, fields, nextNonce());
  const answer = await fetch(`${baseUrl}/api/v3/exams`, {
    method: 'POST',
    headers: { ...v3Headers(credentials), 'content-type': 'application/json' },
    body: JSON.stringify({ ...signed, duration_minutes: 60 }),
  });
  const text = await answer.text();
  if (answer.status !== 201) throw new Error(`POST /api/v3/exams answered ${answer.status}: ${text}`);
  return pickNumber(JSON.parse(text), 'exam.id');
}
