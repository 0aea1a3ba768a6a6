import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import {
  DEFAULT_IDS,
  guildOnShard,
  startFakeDiscord,
  type FakeDiscord,
  type FakeGuild,
  type FakeInteraction,
} from '@yomiage/local-discord';
import { startChildBot, type ChildBot } from '../support/child-bot.ts';
import { startPostgres, type TestPostgres } from '../support/postgres.ts';

// Several hosts sharing one account, end to end: two bot processes started as `npm start` starts them, as two "hosts"
// (each its own DATA_DIR, SHARD_IDS 0 and 1 of SHARD_COUNT 2), sharing the account's characters
// through ACCOUNT_LEDGER_URL and their one IP's rate window through RATE_STORE_URL, on a real
// PostgreSQL this file starts. A concurrent burst from both asks for far more than the
// account's allowance: the service never charges a character more than the allowance.
const LIMIT = 100;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const [G0, G1] = [guildOnShard(0, 2), guildOnShard(1, 2)] as [FakeGuild, FakeGuild];
const general = (g: FakeGuild) => g.channels.find((c) => c.name === 'general')!.id;

let postgres: TestPostgres;
let emulator: Emulator;
let discord: FakeDiscord;
const dirs: string[] = [];
const hosts: ChildBot[] = [];

function startHost(shard: number): Promise<ChildBot> {
  const dataDir = mkdtempSync(join(tmpdir(), `yomiage-host${shard}-`));
  dirs.push(dataDir);
  return startChildBot({
    discord,
    emulator,
    dataDir,
    env: {
      SHARD_COUNT: '2',
      SHARD_IDS: String(shard),
      ACCOUNT_LEDGER_URL: postgres.url,
      RATE_STORE_URL: postgres.url,
      ACCOUNT_MONTHLY_CHARS: String(LIMIT),
    },
  });
}

beforeAll(async () => {
  [postgres, emulator, discord] = await Promise.all([
    startPostgres(),
    startEmulator({ control: true }),
    startFakeDiscord({ shardCount: 2, guilds: [G0, G1] }),
  ]);
  hosts.push(...(await Promise.all([startHost(0), startHost(1)])));
}, 60_000);
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.stop('SIGKILL')));
  await Promise.all([emulator?.close(), discord?.close()]);
  await postgres?.stop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const spoken = (i: FakeInteraction) => i.responses().some((r) => r.files.length > 0);
const refused = (i: FakeInteraction) => i.responses().some((r) => /allowance is used up/.test(String(r.data?.content ?? '')));

describe('two hosts, one account pool (ACCOUNT_LEDGER_URL) and one rate window (RATE_STORE_URL)', () => {
  it('each host serves only its shard', () => {
    expect(hosts.map((h) => h.logs.find((l) => l.msg === 'bot ready') as unknown as { shards: number[]; guilds: number })).toMatchObject([
      { shards: [0], guilds: 1 },
      { shards: [1], guilds: 1 },
    ]);
  });

  it(
    'a concurrent burst from both hosts, 2.4 times the allowance: the bill never goes over it by a single character',
    { timeout: 60_000 },
    async () => {
      const perGuild = 12; // 24 texts of 10 characters against an allowance of 100
      const asked = await Promise.all(
        [G0, G1].flatMap((g, h) =>
          Array.from({ length: perGuild }, (_, i) =>
            discord.sendInteraction({
              channelId: general(g),
              user: alice,
              name: 'say',
              locale: 'en-US',
              options: [{ name: 'text', type: 3, value: `あいうえおか${h}${String(i).padStart(3, '0')}` }],
            }),
          ),
        ),
      );
      await vi.waitFor(() => expect(asked.filter((i) => spoken(i) || refused(i))).toHaveLength(asked.length), {
        timeout: 45_000,
        interval: 200,
      });

      const bill = emulator.charged(DEFAULT_TOKEN);
      expect(bill).toBeLessThanOrEqual(LIMIT);
      // The allowance was used, not left idle: refusals came only once fewer than 10 characters were left.
      expect(bill).toBeGreaterThan(LIMIT - 10);
      // Both hosts spent from the pool, and both were refused by it.
      const [ofHost0, ofHost1] = [asked.slice(0, perGuild), asked.slice(perGuild)];
      expect(ofHost0.some(spoken) && ofHost1.some(spoken)).toBe(true);
      expect(asked.filter(refused).length).toBeGreaterThan(0);
      // The pool's own count agrees with the service's bill.
      const client = new pg.Client({ connectionString: postgres.url });
      await client.connect();
      try {
        const { rows } = await client.query<{ used: string; charged: string }>(
          'SELECT SUM(reserved + charged + uncertain) AS used, SUM(charged) AS charged FROM yomiage_pool_totals',
        );
        expect(Number(rows[0]!.charged)).toBe(bill);
        expect(Number(rows[0]!.used)).toBeLessThanOrEqual(LIMIT);
      } finally {
        await client.end();
      }
      // One IP, one window: the service never answered 429.
      expect(emulator.requests().filter((r) => r.target === 'standard' && r.status === 429)).toEqual([]);
    },
  );
});
