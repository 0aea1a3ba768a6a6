import Database from 'better-sqlite3';
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import type { InteractionResponse } from '@yomiage/local-discord/types';
import { standardRequests } from '../support/bot-harness.ts';
import { scriptCommand, startChildBot, type ChildBot } from '../support/child-bot.ts';

// Backup and restore as docs/operating.md tells an operator to do them, through the real entry
// points: `npm start` as a child process keeps replacing the server's dictionary with one import
// after another (each one transaction), `npm run backup` copies the database meanwhile, and the
// bot, stopped and given a copy in place of its database, starts again and reads with it. Copies
// against a writer whose commits wait in the write-ahead log, where a `cp` would miss them:
// test/ops/backup.test.ts.
const bob = { id: DEFAULT_IDS.bob, username: 'bob' }; // Manage Server: imports the dictionary
const WORDS = 100;
const word = (generation: number, i: number) => `bk${generation}w${i}`;
const reading = (generation: number, i: number) => `ばっくあっぷ${generation}の${i}`;

let emulator: Emulator;
let discord: FakeDiscord;
let dataDir: string;
let work: string;
let bot: ChildBot;
beforeAll(async () => {
  [emulator, discord] = await Promise.all([startEmulator(), startFakeDiscord()]);
  dataDir = mkdtempSync(join(tmpdir(), 'yomiage-backup-'));
  work = mkdtempSync(join(tmpdir(), 'yomiage-backup-work-'));
  bot = await startChildBot({ discord, emulator, dataDir });
}, 60_000);
afterAll(async () => {
  await bot?.stop('SIGKILL');
  await Promise.all([emulator?.close(), discord?.close()]);
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

async function run(name: string, options: unknown[]) {
  const i = await discord.sendInteraction({ channelId: DEFAULT_IDS.general, user: bob, name, locale: 'en-US', options: options as never });
  return { i, first: await i.waitForResponse((r) => r.kind === 'callback', 15_000) };
}

async function click(messageId: string, r: InteractionResponse, label: string) {
  const button = ((r.data?.components as Array<{ components: Array<{ custom_id: string; label: string }> }>) ?? [])
    .flatMap((row) => row.components)
    .find((b) => b.label === label)!;
  const c = await discord.sendInteraction({
    type: 3,
    channelId: DEFAULT_IDS.general,
    user: bob,
    name: '',
    locale: 'en-US',
    component: { messageId, customId: button.custom_id },
  });
  return c.waitForResponse((x) => x.kind === 'callback', 15_000);
}

/** `/dictionary import` of generation `g`'s words, then Replace: the whole dictionary in one transaction. */
async function importGeneration(g: number): Promise<void> {
  const csv = ['word,reading', ...Array.from({ length: WORDS }, (_, i) => `${word(g, i)},${reading(g, i)}`)].join('\n');
  const upload = discord.uploadAttachment({ filename: `g${g}.csv`, data: Buffer.from(csv, 'utf8') });
  const { i } = await run('dictionary', [{ name: 'import', type: 1, options: [{ name: 'file', type: 11, value: upload.id }] }]);
  const summary = await i.waitForResponse((r) => r.kind === 'editOriginal', 15_000);
  const replaced = await click(i.original()!.id, summary, 'Replace');
  expect(String(replaced.data?.content)).toBe(`Replaced the dictionary with the file's ${WORDS} entries. It has ${WORDS} entries.`);
}

/** `npm run backup -- FILE` as an operator runs it, in a folder without a .env. */
async function backup(file: string): Promise<string> {
  const { command, args } = scriptCommand('backup');
  const { stdout } = await promisify(execFile)(command, [...args, file], {
    cwd: work,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? work, DATA_DIR: dataDir },
  });
  return stdout;
}

/** The generations of the server's dictionary in a database file, with how many words each. */
function generationsIn(file: string): { generation: number; words: number }[] {
  const db = new Database(file, { readonly: true });
  try {
    const words = db.prepare('SELECT word FROM dictionary_entries WHERE guild_id = ?').pluck().all(DEFAULT_IDS.guild) as string[];
    const counts = new Map<number, number>();
    for (const w of words) {
      const g = Number(/^bk(\d+)w/.exec(w)![1]);
      counts.set(g, (counts.get(g) ?? 0) + 1);
    }
    return [...counts].map(([generation, n]) => ({ generation, words: n }));
  } finally {
    db.close();
  }
}

const copies: { file: string; answeredBefore: number }[] = [];
let lastAnswered = 0;

describe('npm run backup and a restore, with the bot running as npm start runs it', () => {
  it('each copy taken while the bot writes holds one whole import, none older than the last answered before it, owner-only', async () => {
    let stop = false;
    const importing = (async () => {
      for (let g = 1; !stop; g += 1) {
        await importGeneration(g);
        lastAnswered = g;
      }
    })();
    try {
      while (lastAnswered < 1) await new Promise((resolve) => setTimeout(resolve, 20));
      for (let k = 0; k < 2; k += 1) {
        const file = join(work, `copy-${k}.sqlite3`);
        const answeredBefore = lastAnswered;
        const said = await backup(file);
        expect(said).toMatch(new RegExp(`^backed up .* to ${file} \\(\\d+ bytes, schema version \\d+, integrity ok\\)\\n$`));
        copies.push({ file, answeredBefore });
      }
    } finally {
      stop = true;
      await importing;
    }
    for (const { file, answeredBefore } of copies) {
      const [only, ...others] = generationsIn(file);
      expect(others).toEqual([]);
      expect(only!.words).toBe(WORDS);
      expect(only!.generation).toBeGreaterThanOrEqual(answeredBefore);
      expect((statSync(file).mode & 0o777).toString(8)).toBe('600');
    }
  }, 60_000);

  it('the documented restore (stop, the copy in place of bot.sqlite3 and without its -wal and -shm, start) brings back the dictionary of the copy', async () => {
    const restored = copies[0]!;
    const { generation } = generationsIn(restored.file)[0]!;
    // One more import after every copy: what the restore takes back.
    const live = lastAnswered + 1;
    await importGeneration(live);

    await bot.stop('SIGTERM');
    const aside = join(dataDir, 'before-restore');
    mkdirSync(aside);
    for (const name of ['bot.sqlite3', 'bot.sqlite3-wal', 'bot.sqlite3-shm']) {
      try {
        renameSync(join(dataDir, name), join(aside, name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    copyFileSync(restored.file, join(dataDir, 'bot.sqlite3'));
    bot = await startChildBot({ discord, emulator, dataDir });

    const before = standardRequests(emulator).length;
    const { i } = await run('say', [{ name: 'text', type: 3, value: `${word(generation, 7)} ${word(live, 7)}` }]);
    await i.waitForResponse((r) => r.files.length > 0, 20_000);
    const sent = standardRequests(emulator)
      .slice(before)
      .map((r) => r.text);
    // The copy's word is read as the copy says; the word imported after the copy is not known any more.
    expect(sent).toEqual([`${reading(generation, 7)} ${word(live, 7)}`]);
  }, 60_000);
});
