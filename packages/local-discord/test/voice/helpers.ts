/**
 * Test helpers: drive the real @discordjs/voice against the fake voice server without the main
 * Discord fake. The adapter plays the main gateway's part: on each op 4 join it answers
 * VOICE_STATE_UPDATE then VOICE_SERVER_UPDATE (Discord's order of a voice join).
 */
import { execFile } from 'node:child_process';
import { joinVoiceChannel, type DiscordGatewayAdapterCreator, type VoiceConnection } from '@discordjs/voice';
import type { FakeVoiceServer } from '../../src/voice/server.ts';

export const BOT_USER_ID = '100000000000000001';
/** The simulated listener `join` puts in each call, so the audio is end-to-end encrypted (DAVE). */
export const LISTENER_USER_ID = '100000000000000002';
export const VOICE_TOKEN = 'fake-voice-token';

/** Payloads the bot sent to the (simulated) main gateway, for assertions on rejoin behaviour. */
export interface AdapterLog {
  joins: { guild_id: string; channel_id: string | null }[];
}

/** An adapter creator answering every join with the fake's endpoint, like the main gateway would. */
export function loopbackAdapter(server: FakeVoiceServer, guildId: string, log: AdapterLog): DiscordGatewayAdapterCreator {
  return (methods) => ({
    sendPayload(payload) {
      const d = (payload as { d: { guild_id: string; channel_id: string | null } }).d;
      log.joins.push({ guild_id: d.guild_id, channel_id: d.channel_id });
      if (d.channel_id === null) return true;
      const channelId = d.channel_id;
      setImmediate(() => {
        methods.onVoiceStateUpdate({
          session_id: `gateway-session-${guildId}`,
          channel_id: channelId,
          user_id: BOT_USER_ID,
          guild_id: guildId,
          deaf: false,
          mute: false,
          self_deaf: true,
          self_mute: false,
          self_video: false,
          suppress: false,
          request_to_speak_timestamp: null,
        } as Parameters<typeof methods.onVoiceStateUpdate>[0]);
        methods.onVoiceServerUpdate({ token: VOICE_TOKEN, guild_id: guildId, endpoint: server.endpoint });
      });
      return true;
    },
    destroy() {},
  });
}

/**
 * Joins `guildId` through the fake, recording every connection status in `statuses`. A simulated
 * listener (LISTENER_USER_ID) is in the channel first, so the call runs DAVE with the bot.
 */
export function join(server: FakeVoiceServer, guildId: string): { connection: VoiceConnection; statuses: string[]; log: AdapterLog } {
  const log: AdapterLog = { joins: [] };
  const channelId = `${guildId}9`;
  if (server.dave.listeners(guildId).length === 0) server.simulateListener({ guildId, channelId, userId: LISTENER_USER_ID });
  const connection = joinVoiceChannel({
    channelId,
    guildId,
    adapterCreator: loopbackAdapter(server, guildId, log),
  });
  const statuses: string[] = [connection.state.status];
  connection.on('stateChange', (_old, next) => {
    if (statuses.at(-1) !== next.status) statuses.push(next.status);
  });
  // An unhandled 'error' would crash the test process.
  connection.on('error', () => {});
  return { connection, statuses, log };
}

/** Runs ffmpeg with `args`, rejecting with its stderr on failure. */
export function ffmpeg(args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args], (error, _stdout, stderr) =>
      error ? reject(new Error(`ffmpeg failed: ${stderr || error.message}`)) : resolve(),
    );
  });
}

/** Makes the fixtures: a 1 s 440 Hz sine as MP3 (24 kHz mono, like TTS output) and as Ogg Opus (short: the suite plays them in real time). */
export async function makeSineFiles(dir: string): Promise<{ mp3: string; ogg: string }> {
  const mp3 = `${dir}/sine.mp3`;
  const ogg = `${dir}/sine.ogg`;
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '24000', '-ac', '1', mp3]);
  await ffmpeg(['-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-ar', '48000', '-ac', '2', '-c:a', 'libopus', '-b:a', '64k', ogg]);
  return { mp3, ogg };
}
