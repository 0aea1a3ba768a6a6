import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { createBot, type Bot, type BotOptions } from '../../src/bot.ts';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type EmulatorOptions } from '@yomiage/tts-emulator';
import { probeDurationMs } from '../../src/audio/mp3-frames.ts';
import { createLogger } from '../../src/util/log.ts';
import { startFakeDiscord, type FakeDiscord, type FakeDiscordOptions } from '@yomiage/local-discord';

export interface Harness {
  emulator: Emulator;
  discord: FakeDiscord;
  bot: Bot;
  dataDir: string;
  /**
   * Stops the bot cleanly and starts a new one on the same data directory (a process restart),
   * optionally with other bot options from then on; `meanwhile` runs while no bot is running (the
   * world changing during the restart).
   */
  restart(bot?: Partial<BotOptions>, meanwhile?: () => Promise<void>): Promise<Bot>;
  close(): Promise<void>;
}

/**
 * The whole bot, end to end on loopback: the real discord.js client logged into the fake Discord,
 * the real TTS client talking to the emulator, real SQLite and audio cache in a temp directory.
 */
export async function startHarness(
  options: {
    env?: Record<string, string>;
    emulator?: Partial<EmulatorOptions>;
    discord?: FakeDiscordOptions;
    bot?: Partial<BotOptions>;
  } = {},
): Promise<Harness> {
  const emulator = await startEmulator({ control: true, ...options.emulator });
  const discord = await startFakeDiscord(options.discord);
  const dataDir = mkdtempSync(join(tmpdir(), 'yomiage-e2e-'));
  const config = loadConfig({
    DISCORD_TOKEN: discord.token,
    DISCORD_API_URL: discord.apiUrl,
    TTS_TOKEN: DEFAULT_TOKEN,
    TTS_BASE_URL: emulator.baseUrl,
    DATA_DIR: dataDir,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    ...options.env,
  });
  const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
  let botOptions = options.bot;
  const start = async () => {
    const bot = await createBot({ config, logger, ...botOptions });
    await bot.start();
    return bot;
  };
  const harness: Harness = {
    emulator,
    discord,
    bot: await start(),
    dataDir,
    async restart(bot, meanwhile) {
      if (bot) botOptions = { ...botOptions, ...bot };
      await harness.bot.stop();
      await meanwhile?.();
      harness.bot = await start();
      return harness.bot;
    },
    async close() {
      await harness.bot.stop().catch(() => {});
      await discord.close();
      await emulator.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return harness;
}

/**
 * Emulator options for a story about what becomes of texts, not how long they play: tones a quarter
 * of the default length. Every second of audio the emulator makes is transcoded by the bot, and
 * played when it reads in voice, so long clips are the tests' largest audio cost.
 */
export const SHORT_TONES = { secondsPerChar: 0.03 } as const;

/** The standard-endpoint requests the emulator received (its request log). */
export function standardRequests(emulator: Emulator): Array<{ text: string; voice: string; speed: number; pitch: number }> {
  return emulator
    .requests()
    .filter((r) => r.target === 'standard')
    .map((r) => r.body as { text: string; voice: string; speed: number; pitch: number });
}

/**
 * Duration of the MP3 the emulator made for the standard request that spoke `text` (asked again
 * from another address, so the bot's rate window is untouched).
 */
export async function mp3DurationOf(emulator: Emulator, text: string): Promise<number> {
  const entry = emulator.requests().find((r) => r.target === 'standard' && (r.body as { text: string }).text === text && r.status === 200);
  if (!entry) throw new Error(`no successful standard request spoke ${JSON.stringify(text)}`);
  const res = await fetch(`${emulator.baseUrl}/text_to_speech_api/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', token: DEFAULT_TOKEN, 'x-forwarded-for': '10.1.1.1' },
    body: JSON.stringify(entry.body),
  });
  const { url } = (await res.json()) as { url: string };
  return probeDurationMs(Buffer.from(await (await fetch(url)).arrayBuffer()));
}
