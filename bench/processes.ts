import { type ChildProcess, execFile, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { ROOT } from './benchmark.ts';

/** The Invigil executable, exactly as an operator runs it. */
export const INVIGIL = path.join(ROOT, 'bin', 'invigil');

/** The Node the project pins (what bin/invigil runs), for benchmark helper children. */
export const NODE = path.join(ROOT, 'node_modules', '.bin', 'node');

/** A server running in a child process, so it never shares an event loop with the load generator. */
export interface ServerChild {
  readonly label: string;
  readonly url: string;
  readonly pid: number;
  /** Sends SIGTERM and waits for a clean exit (SIGKILL after 15 s). Returns the exit code. */
  stop(): Promise<number | null>;
}

/** Asks the kernel for a free loopback port (released at once; the child binds it next). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

/** Keeps the last few kilobytes of a child's output, to explain a failure. */
function tail(child: ChildProcess): () => string {
  let text = '';
  const keep = (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return () => text.trim();
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/**
 * Spawns a server and waits until `readyPath` answers 200. Returns the running child; throws with
 * the child's output when it exits or is not ready within 30 s.
 */
export async function startServer(options: {
  label: string;
  command: string;
  args: readonly string[];
  env: NodeJS.ProcessEnv;
  port: number;
  readyPath: string;
}): Promise<ServerChild> {
  const child = spawn(options.command, options.args, {
    cwd: ROOT,
    env: options.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = tail(child);
  const url = `http://127.0.0.1:${options.port}`;
  const deadline = Date.now() + 30_000;
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });
  for (;;) {
    if (spawnError !== undefined) throw new Error(`${options.label} could not start: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(
        `${options.label} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${output()}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${options.label} was not ready within 30 s:\n${output()}`);
    }
    try {
      const answer = await fetch(`${url}${options.readyPath}`);
      await answer.arrayBuffer();
      if (answer.status === 200) break;
    } catch {
      // not listening yet
    }
    await delay(100);
  }
  const pid = child.pid ?? 0;
  return {
    label: options.label,
    url,
    pid,
    async stop() {
      const done = exited(child);
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await done;
      clearTimeout(timer);
      return code;
    },
  };
}

/**
 * Runs an administrative `invigil` command with the given environment. Returns its stdout parsed as
 * JSON; throws with stderr when it fails or prints something else.
 */
export function invigilCommand(args: readonly string[], env: NodeJS.ProcessEnv): Promise<unknown> {
  return new Promise((resolve, reject) => {
    execFile(INVIGIL, args, { cwd: ROOT, env }, (error, stdout, stderr) => {
      if (error !== null) {
        reject(new Error(`invigil ${args.join(' ')} failed: ${error.message}\n${stderr}`));
        return;
      }
      try {
        resolve(JSON.parse(stdout));
      } catch {
        reject(new Error(`invigil ${args.join(' ')} printed no JSON:\n${stdout}\n${stderr}`));
      }
    });
  });
}

/** Reads `a.b.c` from parsed JSON. Returns the value; throws naming the path when it is missing. */
export function pick(value: unknown, dotted: string): unknown {
  let current = value;
  for (const key of dotted.split('.')) {
    if (typeof current !== 'object' || current === null || !(key in current)) {
      throw new Error(`expected ${dotted} in ${JSON.stringify(value)}`);
    }
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** Like pick, for a string. */
export function pickString(value: unknown, dotted: string): string {
  const found = pick(value, dotted);
  if (typeof found !== 'string')
    throw new Error(`expected ${dotted} to be a string in ${JSON.stringify(value)}`);
  return found;
}

/** Like pick, for a number. */
export function pickNumber(value: unknown, dotted: string): number {
  const found = pick(value, dotted);
  if (typeof found !== 'number')
    throw new Error(`expected ${dotted} to be a number in ${JSON.stringify(value)}`);
  return found;
}
