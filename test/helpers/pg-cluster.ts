/**
 * A throwaway PostgreSQL cluster of a test's own (initdb in a temporary folder, on a free loopback
 * port, trust authentication), which the test may stop and start again: the shared server on 5432
 * must never be stopped, since other suites use it. The cluster runs as the `postgres` operating
 * system user when the tests run as root, because initdb and pg_ctl refuse to run as root.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.ts';

const run = promisify(execFile);

/** The newest PostgreSQL server installed the Debian way (/usr/lib/postgresql/VERSION/bin). */
function serverBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = fs.existsSync(root)
    ? fs
        .readdirSync(root)
        .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  const newest = versions[0];
  if (newest === undefined) throw new Error(`no PostgreSQL server under ${root} (initdb not found)`);
  return path.join(root, newest, 'bin');
}

export interface PgCluster {
  /** `postgres://postgres@127.0.0.1:PORT/postgres`, for DATABASE_URL. */
  readonly url: string;
  readonly port: number;
  /** Starts the server and resolves once it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (`fast`: clients are told and disconnected; `immediate`: no shutdown checkpoint). */
  stop(mode: 'fast' | 'immediate'): Promise<void>;
  /** Stops the server if it runs and removes every file of the cluster. Never rejects. */
  destroy(): Promise<void>;
}

/**
 * Creates a cluster (initdb) in a new temporary folder and starts it. Returns it running; rejects
 * when no PostgreSQL server is installed or initdb fails.
 */
export async function createPgCluster(): Promise<PgCluster> {
  const bin = serverBin();
  const asRoot = process.getuid?.() === 0;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'invigil-pg-'));
  const data = path.join(folder, 'data');
  const log = path.join(folder, 'server.log');
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    fs.chownSync(folder, Number(stdout.trim()), Number(group.trim()));
  }
  const tool = (name: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, name), ...args])
      : run(path.join(bin, name), args);

  const port = await freePort();
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8']);
  // The socket goes into the cluster's own folder (the system's may not be writable or may clash).
  const serverOptions = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1`;
  let running = false;
  const cluster: PgCluster = {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async start() {
      await tool('pg_ctl', ['start', '-D', data, '-w', '-t', '60', '-l', log, '-o', serverOptions]);
      running = true;
    },
    async stop(mode) {
      await tool('pg_ctl', ['stop', '-D', data, '-w', '-t', '60', '-m', mode]);
      running = false;
    },
    async destroy() {
      if (running) await cluster.stop('immediate').catch(() => undefined);
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
  try {
    await cluster.start();
  } catch (error) {
    await cluster.destroy();
    throw error;
  }
  return cluster;
}
