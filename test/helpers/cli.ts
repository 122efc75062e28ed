import { spawn } from 'node:child_process';
import path from 'node:path';

/** The `invigil` executable, as users run it (on the pinned Node). */
export const INVIGIL_BIN = path.resolve(import.meta.dirname, '..', '..', 'bin', 'invigil');

/** How a finished command ended, with everything it printed. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `invigil ARGS` with the process environment plus `env` (logging at warn unless `env` says
 * otherwise), `stdin` piped to it, and waits for it to exit. Returns its exit code and output;
 * rejects only when it cannot be started.
 */
export function runCli(args: string[], env: Record<string, string>, stdin?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(INVIGIL_BIN, args, { env: { ...process.env, LOG_LEVEL: 'warn', ...env } });
    // Without input, standard input is closed at once, as for a command run with nothing piped in.
    child.stdin.end(stdin);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
