/**
 * Running the real `invigil` binary as long-lived processes (serve, worker) for the suites that
 * test what only whole processes show: a database outage, several processes on one database.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import net from 'node:net';
import { INVIGIL_BIN, runCli } from './cli.ts';
import type { Credentials } from './client.ts';
import { httpRequest } from './http.ts';

/** Most of a process's output kept for assertions and failure messages (the newest part). */
const KEEP_CHARS = 4 * 1024 * 1024;

export interface InvigilProcess {
  readonly child: ChildProcess;
  /** Resolves when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** True while the process runs. */
  alive(): boolean;
  /** Everything it wrote to stdout and stderr so far (the last 4 MiB). */
  output(): string;
  /** SIGTERM, then SIGKILL after `graceMs`. Resolves with how it ended. */
  stop(graceMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `invigil ARGS` with exactly `env`. Returns it at once (it may still be starting). */
export function launchInvigil(args: string[], env: NodeJS.ProcessEnv): InvigilProcess {
  const child = spawn(INVIGIL_BIN, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const keep = (chunk: Buffer) => {
    text += chunk.toString('utf8');
    if (text.length > KEEP_CHARS) text = text.slice(-KEEP_CHARS);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const alive = () => child.exitCode === null && child.signalCode === null;
  return {
    child,
    exited,
    alive,
    output: () => text,
    async stop(graceMs = 15_000) {
      if (alive()) child.kill('SIGTERM');
      const timer = setTimeout(() => {
        if (alive()) child.kill('SIGKILL');
      }, graceMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** A loopback port nothing listens on right now. */
export async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const address = probe.address();
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Polls `check` every 50 ms until it answers true; rejects naming `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The status `GET /healthz` answers, or 0 when nothing answers. */
export async function healthStatus(baseUrl: string): Promise<number> {
  try {
    return (await httpRequest({ url: `${baseUrl}/healthz` })).status;
  } catch {
    return 0;
  }
}

/**
 * Waits until `process` answers `/healthz` with 200; rejects with its output when it exits first or
 * does not answer within a minute.
 */
export async function waitUntilServing(process: InvigilProcess, baseUrl: string): Promise<void> {
  await waitUntil(
    `${baseUrl} to serve`,
    async () => {
      if (!process.alive()) throw new Error(`invigil exited while starting:\n${process.output()}`);
      return (await healthStatus(baseUrl)) === 200;
    },
    60_000,
  );
}

function parseJson(text: string, what: string): Record<string, unknown> {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`${what} printed no JSON: ${text}`);
  }
}

/**
 * Creates an institute and an administrator in it with the CLI (`env` names the database; the
 * migrations are applied by the first command). Returns the institute id and the user's credentials.
 */
export async function createAdministrator(
  env: Record<string, string>,
): Promise<{ instituteId: number; userId: number; credentials: Credentials }> {
  const made = await runCli(
    ['institute', 'create', '--name', 'Process Institute', '--short-name', 'PI'],
    env,
  );
  if (made.code !== 0) throw new Error(`institute create failed: ${made.stderr}`);
  const institute = parseJson(made.stdout, 'institute create').institute as { id: number };
  const args = ['user', 'create', '--institute', String(institute.id), '--email', 'office@example.org'];
  const created = await runCli([...args, '--name', 'Office', '--role', 'administrator'], env);
  if (created.code !== 0) throw new Error(`user create failed: ${created.stderr}`);
  const user = parseJson(created.stdout, 'user create').user as {
    id: number;
    api_token: string;
    secret_key: string;
  };
  return {
    instituteId: institute.id,
    userId: user.id,
    credentials: { apiToken: user.api_token, secretKey: user.secret_key },
  };
}
