import { Client, Events, GatewayIntentBits, Partials } from 'discord.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, defaultGuild, guildOnShard, startFakeDiscord, type FakeDiscord } from '@yomiage/local-discord';
import { accessTo, clientView, VIEW_DEFAULTS, type BotView } from '../../src/dashboard/access.ts';
import { discordRestAgent } from '../../src/discord/rest-agent.ts';

// What the dashboard asks Discord while signed-in browsers name servers and members: a real
// discord.js client (the bot's intents) runs shard 1 of 2 against the local Discord; another
// process of this host runs shard 0 (`other`), another host's dashboard nothing here. Whatever ids a
// browser names, the bot never asks about a server it is not in (Discord counts each refusal
// towards its ban of the address), and what it learnt it does not ask again.
const own = defaultGuild(); // shard 1
const other = guildOnShard(0, 2); // the bot is in it; another process of this host holds it
const absent = guildOnShard(0, 2, 1); // the bot is not in it (the members are)
const bob = DEFAULT_IDS.bob; // Manage Server
const PEER = 'https://b.example.com';

let fake: FakeDiscord;
let client: Client;
let now = 0;
const clock = { now: () => now };
/** What the bot asked Discord (its token on the request) since `from`. */
const asked = (from: number) => fake.requests.slice(from).filter((r) => r.headers.authorization?.startsWith('Bot '));
const random = () => String(BigInt(DEFAULT_IDS.guild) + BigInt(Math.floor(Math.random() * 1e12)) * 4_194_304n);
/** A random id of a server on shard 0 (another process's). */
const randomOnShard0 = (): string => {
  const id = random();
  return (BigInt(id) >> 22n) % 2n === 0n ? id : randomOnShard0();
};

beforeAll(async () => {
  fake = await startFakeDiscord({ shardCount: 2, guilds: [own, other, absent] });
  await fake.removeBotFromGuild(fake.applicationId, absent.id);
  client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers, GatewayIntentBits.GuildVoiceStates],
    partials: [Partials.GuildMember],
    shards: [1],
    shardCount: 2,
    rest: { api: fake.apiUrl, agent: discordRestAgent() },
  });
  const ready = new Promise((resolve) => client.once(Events.ClientReady, resolve));
  await client.login(fake.token);
  await ready;
});
afterAll(async () => {
  await client?.destroy();
  await fake?.close();
});

describe('what the dashboard asks Discord', () => {
  it('GIVEN random ids and a server the bot is not in THEN no request names one; the bot lists its servers at most once a minute', async () => {
    const view = clientView(client, { shardCount: 2, shards: [0, 1] }, [], clock);
    const from = fake.requests.length;
    const names = [absent.id, ...Array.from({ length: 200 }, random)];
    for (const id of names) expect(await accessTo(view, id, bob)).toBeUndefined();
    const requests = asked(from);
    expect(requests.filter((r) => names.some((id) => r.path.includes(id)))).toEqual([]);
    expect(requests.map((r) => r.path)).toEqual(['/users/@me/guilds']);
    now += VIEW_DEFAULTS.listEveryMs;
    await accessTo(view, randomOnShard0(), bob);
    expect(asked(from).map((r) => r.path)).toEqual(['/users/@me/guilds', '/users/@me/guilds']);
  });

  it('GIVEN a server another process holds THEN it and the member are fetched once, then kept while they are fresh', async () => {
    // Asked at once by several requests (a server list): each waits for the one listing of the bot's servers.
    const fresh = clientView(client, { shardCount: 2, shards: [0, 1] }, [], clock);
    expect(await Promise.all([other.id, own.id, other.id].map((id) => accessTo(fresh, id, bob)))).toEqual([
      expect.objectContaining({ manager: true }),
      expect.objectContaining({ manager: true }),
      expect.objectContaining({ manager: true }),
    ]);
    const view = clientView(client, { shardCount: 2, shards: [0, 1] }, [], clock);
    const from = fake.requests.length;
    for (let i = 0; i < 20; i++) expect(await accessTo(view, other.id, bob)).toMatchObject({ manager: true });
    const fetched = () =>
      asked(from)
        .filter((r) => r.path.startsWith(`/guilds/${other.id}`))
        .map((r) => r.path);
    expect(fetched()).toEqual([`/guilds/${other.id}`, `/guilds/${other.id}/members/${bob}`]);
    now += VIEW_DEFAULTS.remoteMs;
    await accessTo(view, other.id, bob);
    expect(fetched()).toHaveLength(4);
  });

  it('GIVEN its own server THEN a member is fetched once and then followed on the gateway; one who is not there is asked once a minute', async () => {
    const view: BotView = clientView(client, { shardCount: 2, shards: [1] }, [{ shards: [0], url: PEER }], clock);
    const stranger = '1000000000000000077';
    client.guilds.cache.get(own.id)!.members.cache.delete(DEFAULT_IDS.alice);
    const from = fake.requests.length;
    for (let i = 0; i < 10; i++) {
      expect(await accessTo(view, own.id, DEFAULT_IDS.alice)).toMatchObject({ manager: false });
      expect(await accessTo(view, own.id, stranger)).toBeUndefined();
    }
    expect(asked(from).map((r) => r.path)).toEqual([
      `/guilds/${own.id}/members/${DEFAULT_IDS.alice}`,
      `/guilds/${own.id}/members/${stranger}`,
    ]);
    now += VIEW_DEFAULTS.absentMs;
    await accessTo(view, own.id, stranger);
    expect(asked(from)).toHaveLength(3);

    // Made a moderator: the gateway says so, and the next answer counts it without asking.
    const updated = new Promise((resolve) => client.once(Events.GuildMemberUpdate, resolve));
    await fake.setMemberRoles(own.id, DEFAULT_IDS.alice, [DEFAULT_IDS.moderatorRole]);
    await updated;
    expect(await accessTo(view, own.id, DEFAULT_IDS.alice)).toMatchObject({ manager: true });
    expect(asked(from)).toHaveLength(3);

    // Another host's server is named with its dashboard only when the bot's list of servers names it.
    expect(await view.elsewhere(other.id)).toBe(PEER);
    expect(await view.elsewhere(absent.id)).toBeUndefined();
    expect(asked(from).filter((r) => r.path.startsWith('/guilds/') && !r.path.startsWith(`/guilds/${own.id}`))).toEqual([]);
  });
});
