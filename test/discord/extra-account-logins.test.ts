import { Client, Events, GatewayIntentBits } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { BotAccounts } from '../../src/discord/voice-control/accounts.ts';
import { ExtraLogins } from '../../src/discord/voice-control/account-logins.ts';
import { chooseAccount } from '../../src/discord/voice-control/account-choice.ts';
import { discordRestAgent } from '../../src/discord/rest-agent.ts';
import { createLogger } from '../../src/util/log.ts';
import { FakeClock } from '../support/clock.ts';

// The extra accounts' logins against the local Discord with real discord.js clients, on a clock the
// test moves: a wrong token (at start) and a token reset at runtime (the gateway closes with 4004)
// each cost only their own account: reported once, left out of /join's choice, tried again after
// a wait that doubles (to its ceiling), serving again once Discord takes the token.
const B = { id: '1200000000000000002', username: 'yomiage-2' };
const C = { id: '1200000000000000003', username: 'yomiage-3' };
const WRONG = 'MTIwMDAwMDAwMDAwMDAwMDA5.wrong.token-that-discord-does-not-know';

let fake: FakeDiscord;
let main: Client;
let accounts: BotAccounts;
let logins: ExtraLogins;
const clock = new FakeClock();
const lines: Array<{
  level: number;
  msg: string;
  extraAccount?: number;
  accountId?: string;
  retryInS?: number;
  err?: { message: string };
}> = [];
const made: Client[] = [];

function makeClient(): Client {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates],
    rest: { api: fake.apiUrl, agent: discordRestAgent() },
  });
  made.push(client);
  return client;
}
const states = () => accounts.extras.map((e) => e.state);
const choosable = () => accounts.facts(DEFAULT_IDS.guild, { ofAccount: () => undefined, countOf: () => 0 }).map((f) => f.id);
const reported = () => lines.filter((l) => l.level >= 50);

beforeAll(async () => {
  fake = await startFakeDiscord({ extraBots: [{ user: B }, { user: C }] });
  main = makeClient();
  const ready = new Promise((resolve) => main.once(Events.ClientReady, resolve));
  await main.login(fake.token);
  await ready;
  const tokens = [WRONG, fake.bots[1]!.token, fake.bots[2]!.token];
  accounts = new BotAccounts(
    main,
    tokens.map(() => makeClient()),
  );
  const logger = createLogger({
    level: 'info',
    secrets: tokens,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  logins = new ExtraLogins({ accounts, tokens, makeClient, wire: () => {}, logger, clock, firstRetryMs: 1_000, maxRetryMs: 4_000 });
}, 30_000);
afterAll(async () => {
  logins?.stop();
  await Promise.all(made.map((c) => c.destroy()));
  await fake?.close();
});

describe('extra accounts that cannot log in', () => {
  it('a wrong token at start: start() resolves, the others serve, it is reported once and retried after 1, 2, 4, 4 s', async () => {
    await logins.start();
    expect(states()).toEqual(['down', 'serving', 'serving']);
    expect(choosable()).toEqual([DEFAULT_IDS.bot, B.id, C.id]);
    expect(reported()).toEqual([expect.objectContaining({ extraAccount: 1, retryInS: 1 })]);
    for (const wait of [1_000, 2_000, 4_000, 4_000]) {
      const before = lines.length;
      await clock.advance(wait);
      await vi.waitUntil(() => lines.length > before, { timeout: 10_000 });
    }
    expect(lines.filter((l) => l.extraAccount === 1).map((l) => [l.level, l.retryInS])).toEqual([
      [50, 1],
      [40, 2],
      [40, 4],
      [40, 4],
      [40, 4],
    ]);
    expect(reported()).toHaveLength(1);
    expect(JSON.stringify(lines)).not.toContain(WRONG);
  });

  it('a token reset at runtime (4004): reported once, out of the choice at once, back once Discord takes it again', async () => {
    const choice = () =>
      chooseAccount(
        accounts.facts(DEFAULT_IDS.guild, { ofAccount: () => undefined, countOf: (id) => (id === DEFAULT_IDS.bot ? 1 : 0) }),
        DEFAULT_IDS.voice,
      );
    expect(choice()).toEqual({ kind: 'join', accountId: B.id });
    fake.revokeToken(B.id);
    await vi.waitUntil(() => states()[1] === 'down', { timeout: 10_000 });
    expect(choosable()).toEqual([DEFAULT_IDS.bot, C.id]);
    expect(choice()).toEqual({ kind: 'join', accountId: C.id });
    expect(reported()).toHaveLength(2);
    expect(reported()[1]).toMatchObject({
      extraAccount: 2,
      accountId: B.id,
      retryInS: 1,
      err: { message: expect.stringContaining('4004') },
    });

    // Still reset at the first retry: logged, not reported; taken again before the second one.
    await clock.advance(1_000);
    await vi.waitUntil(() => lines.some((l) => l.extraAccount === 2 && l.retryInS === 2), { timeout: 10_000 });
    fake.reinstateToken(B.id);
    await clock.advance(2_000);
    await vi.waitUntil(() => states()[1] === 'serving', { timeout: 10_000 });
    expect(lines.at(-1)).toMatchObject({ level: 30, extraAccount: 2, accountId: B.id, msg: expect.stringContaining('logged in again') });
    expect(choice()).toEqual({ kind: 'join', accountId: B.id });
    expect(reported()).toHaveLength(2);
    expect(states()[0]).toBe('down');
  });
});
