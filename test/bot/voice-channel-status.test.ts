import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_IDS, PERMISSIONS, defaultGuild } from '@yomiage/local-discord';
import { startFakeVoiceServer, trustCertificate, type FakeVoiceServer } from '@yomiage/local-discord';
import { startHarness, type Harness } from '../support/bot-harness.ts';
import { createLogger } from '../../src/util/log.ts';

// The voice channel status while the bot reads, in process against the local Discord: set in the
// server's language naming the text channel read, cleared on /leave; where the bot lacks Set Voice
// Channel Status, nothing is sent and nothing is logged at warn level.
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const guildId = DEFAULT_IDS.guild;
const bot = DEFAULT_IDS.bot;
const PLAIN_VOICE = '1100000000000000170';
const logs: Array<{ level: number; msg?: string }> = [];

let voice: FakeVoiceServer;
let h: Harness;

beforeAll(async () => {
  voice = await startFakeVoiceServer();
  trustCertificate(voice.caCertPem);
  const guild = defaultGuild();
  const allowStatus = { id: bot, type: 1 as const, allow: String(PERMISSIONS.SetVoiceChannelStatus), deny: '0' };
  guild.channels.find((c) => c.id === DEFAULT_IDS.voice)!.permissionOverwrites = [allowStatus];
  guild.channels.push({ id: PLAIN_VOICE, name: 'Plain', type: 2, position: 1 });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logs.push(JSON.parse(line) as { level: number; msg?: string });
      done();
    },
  });
  h = await startHarness({
    discord: { voiceEndpoint: () => voice.endpoint, guilds: [guild] },
    bot: { logger: createLogger({ level: 'debug', destination }) },
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
  await voice?.close();
});

const channel = (id: string) => h.discord.guilds[0]!.channels.find((c) => c.id === id)!;
async function run(name: string): Promise<string> {
  const interaction = await h.discord.sendInteraction({ channelId: DEFAULT_IDS.chat, user: alice, name, locale: 'en-US' });
  const reply = await interaction.waitForResponse((r) => r.kind === 'editOriginal' || (r.kind === 'callback' && r.type === 4), 30_000);
  return String(reply.data?.content ?? '');
}

describe('the voice channel status', () => {
  it('shows which text channel is read, in the server language, and is cleared on /leave', async () => {
    await h.discord.setVoiceState(alice.id, guildId, DEFAULT_IDS.voice);
    expect(await run('join')).toContain('Joined');
    await vi.waitFor(() => expect(channel(DEFAULT_IDS.voice).status).toBe('📖 #chat を読み上げ中'), { timeout: 10_000 });
    expect(await run('leave')).toContain('Left');
    await vi.waitFor(() => expect(channel(DEFAULT_IDS.voice).status ?? null).toBeNull(), { timeout: 10_000 });
    expect(h.discord.guilds[0]!.voiceStates.some((v) => v.userId === bot)).toBe(false);
  });

  it('without Set Voice Channel Status: joins and leaves as usual, sends no status and warns about nothing', async () => {
    await h.discord.setVoiceState(alice.id, guildId, PLAIN_VOICE);
    const warnsBefore = logs.filter((l) => l.level >= 40).length;
    expect(await run('join')).toContain('Joined');
    expect(await run('leave')).toContain('Left');
    expect(h.discord.requests.some((r) => r.path === `/channels/${PLAIN_VOICE}/voice-status`)).toBe(false);
    expect(channel(PLAIN_VOICE).status ?? null).toBeNull();
    expect(logs.filter((l) => l.level >= 40).slice(warnsBefore)).toEqual([]);
  });
});
