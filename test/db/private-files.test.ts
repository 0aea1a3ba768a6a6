import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { AudioCache } from '../../src/speech/synthesis/cache.ts';
import { makePrivate, type ModeChange } from '../../src/util/private-files.ts';

// DATA_DIR holds interaction tokens, queued chat text and speech made from chat: only the bot's
// own user may read it. What another local user would see is the mode of each path.
const root = mkdtempSync(join(tmpdir(), 'yomiage-modes-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const mode = (path: string) => statSync(path).mode & 0o777;

describe('the data directory and the database are owner-only', () => {
  it('GIVEN a new DATA_DIR THEN it is 0700 and the database with its -wal and -shm 0600; cached audio 0600 in 0700', async () => {
    const dir = join(root, 'new', 'data');
    expect(makePrivate(dir, 'dir', { create: true })).toBeUndefined();
    const db = openDatabase(join(dir, 'bot.sqlite3'));
    db.prepare('INSERT INTO dictionary_versions (guild_id, version) VALUES (?, 1)').run('g');
    const cache = new AudioCache({ db, dir: join(dir, 'audio'), transcode: async (mp3) => mp3 });
    const entry = await cache.put('a'.repeat(64), Buffer.from('ID3 chat-derived speech'));
    expect(mode(dir)).toBe(0o700);
    expect(
      readdirSync(dir)
        .filter((f) => f.startsWith('bot.sqlite3'))
        .sort()
        .map((f) => [f, mode(join(dir, f))]),
    ).toEqual([
      ['bot.sqlite3', 0o600],
      ['bot.sqlite3-shm', 0o600],
      ['bot.sqlite3-wal', 0o600],
    ]);
    expect([mode(join(dir, 'audio', 'aa')), mode(entry.mp3Path), mode(entry.oggPath)]).toEqual([0o700, 0o600, 0o600]);
    db.close();
  });

  it('GIVEN a DATA_DIR and database files made earlier with wider modes THEN they are narrowed at open and each is reported', () => {
    const dir = join(root, 'old');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    const file = join(dir, 'bot.sqlite3');
    openDatabase(file).close();
    for (const f of [file, `${file}-wal`]) {
      writeFileSync(f, '', { flag: 'a' });
      chmodSync(f, 0o644);
    }
    const changes: ModeChange[] = [];
    const dirChange = makePrivate(dir, 'dir', { create: true });
    const db = openDatabase(file, { onModes: (c) => changes.push(...c) });
    expect(dirChange).toEqual({ path: dir, from: '0755', to: '0700' });
    expect(changes).toEqual([
      { path: file, from: '0644', to: '0600' },
      { path: `${file}-wal`, from: '0644', to: '0600' },
    ]);
    expect([mode(dir), mode(file), mode(`${file}-wal`), mode(`${file}-shm`)]).toEqual([0o700, 0o600, 0o600, 0o600]);
    db.close();
  });

  it('GIVEN a shared directory (sticky, like /tmp) as DATA_DIR THEN it is left as it is and reported', () => {
    const shared = join(root, 'shared');
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    expect(makePrivate(shared, 'dir')).toEqual({ path: shared, refused: '0777, shared or not owned by this user: not changed' });
    expect(statSync(shared).mode & 0o7777).toBe(0o1777);
  });
});
