import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_IDS, PERMISSIONS, defaultGuild, type FakeGuild } from '../src/fixtures.ts';
import { startFakeDiscord, type FakeDiscord } from '../src/server.ts';

// Stage speakers and voice channel statuses over REST, with Discord's permission checks
// (https://discord.com/developers/docs/resources/voice#modify-current-user-voice-state;
// the voice-status endpoint of discord-api-docs PR 6400).
const STAGE = '1100000000000000160';
const MOD_STAGE = '1100000000000000161';
const VOICE_ALLOWED = '1100000000000000162';
const bot = DEFAULT_IDS.bot;
const allow = (flag: bigint) => [{ id: bot, type: 1 as const, allow: String(flag), deny: '0' }];

let fake: FakeDiscord;
const guild = (): FakeGuild => fake.guilds[0]!;
const botVoice = () => guild().voiceStates.find((v) => v.userId === bot)!;

async function call(method: string, path: string, body: unknown): Promise<{ status: number; code?: number }> {
  const response = await fetch(`${fake.apiUrl}/v10${path}`, {
    method,
    headers: { authorization: `Bot ${fake.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, ...(text ? { code: (JSON.parse(text) as { code: number }).code } : {}) };
}

beforeAll(async () => {
  const world = defaultGuild();
  world.channels.push(
    { id: STAGE, name: 'Stage', type: 13 },
    { id: MOD_STAGE, name: 'Moderated', type: 13, permissionOverwrites: allow(PERMISSIONS.MuteMembers) },
    { id: VOICE_ALLOWED, name: 'Status', type: 2, permissionOverwrites: allow(PERMISSIONS.SetVoiceChannelStatus) },
  );
  world.voiceStates.push({ userId: bot, channelId: STAGE, sessionId: 's', selfMute: false, selfDeaf: true, suppress: true });
  fake = await startFakeDiscord({ guilds: [world] });
});
afterAll(() => fake?.close());

describe('GIVEN the bot in the audience of a stage where it lacks Mute Members', () => {
  it('THEN it may ask to speak but not make itself a speaker; a moderator invites it', async () => {
    const path = `/guilds/${DEFAULT_IDS.guild}/voice-states/@me`;
    expect(await call('PATCH', path, { channel_id: STAGE, suppress: false })).toEqual({ status: 403, code: 50013 });
    expect(
      await call('PATCH', path, { channel_id: DEFAULT_IDS.voice, request_to_speak_timestamp: new Date().toISOString() }),
    ).toMatchObject({
      status: 400,
    });
    expect((await call('PATCH', path, { channel_id: STAGE, request_to_speak_timestamp: new Date().toISOString() })).status).toBe(204);
    expect(botVoice()).toMatchObject({ suppress: true, requestToSpeakTimestamp: expect.any(String) });
    fake.setStageSpeaker(DEFAULT_IDS.guild, bot, true);
    expect(botVoice().suppress).toBe(false);
  });
});

describe('GIVEN the bot in a stage where it has Mute Members', () => {
  it('THEN it becomes a speaker itself', async () => {
    botVoice().channelId = MOD_STAGE;
    botVoice().suppress = true;
    expect((await call('PATCH', `/guilds/${DEFAULT_IDS.guild}/voice-states/@me`, { channel_id: MOD_STAGE, suppress: false })).status).toBe(
      204,
    );
    expect(botVoice().suppress).toBe(false);
  });
});

describe('GIVEN voice channels with and without Set Voice Channel Status', () => {
  it('THEN the status is kept where the bot is connected with the permission, cleared with "", refused elsewhere', async () => {
    expect(await call('PUT', `/channels/${DEFAULT_IDS.voice}/voice-status`, { status: 'x' })).toEqual({ status: 403, code: 50013 });
    // Not connected there: Manage Channels is needed as well.
    expect(await call('PUT', `/channels/${VOICE_ALLOWED}/voice-status`, { status: 'x' })).toEqual({ status: 403, code: 50013 });
    botVoice().channelId = VOICE_ALLOWED;
    expect((await call('PUT', `/channels/${VOICE_ALLOWED}/voice-status`, { status: '📖 #chat' })).status).toBe(204);
    expect(guild().channels.find((c) => c.id === VOICE_ALLOWED)?.status).toBe('📖 #chat');
    expect((await call('PUT', `/channels/${VOICE_ALLOWED}/voice-status`, { status: '' })).status).toBe(204);
    expect(guild().channels.find((c) => c.id === VOICE_ALLOWED)?.status).toBeNull();
  });
});
