/**
 * The playground: the bot, started exactly as `npm start` starts it, in a local server
 * that needs no Discord account, speaking through the emulator, with a web page in front. Starts,
 * on 127.0.0.1 only: the TTS emulator, the local Discord (REST + gateway) and its voice server (in
 * this process), then registers the commands with `npm run deploy-commands` and starts the bot as
 * a child process configured by environment variables alone, then serves the page.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_TOKEN, startEmulator, type Emulator, type SpeechOption } from '@yomiage/tts-emulator';
import {
  listenOnLoopback,
  LOOPBACK_HOST,
  startFakeDiscord,
  startFakeVoiceServer,
  type FakeDiscord,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import { BotProcess, deployCommands } from './bot-process.ts';
import { ClipIndex } from './clips.ts';
import { PageServer } from './page-server.ts';
import { VoiceTap } from './voice-tap.ts';
import { playgroundGuild, PLAYGROUND_CURATED_DICTIONARY, PLAYGROUND_EXTRA_BOT, PLAYGROUND_IDS, PLAYGROUND_VOICE_POOL } from './world.ts';

interface PlaygroundOptions {
  /** The page's port (0: any free one). */
  port: number;
  /** The emulator's audio: `auto` is espeak-ng's reading when it is installed, else tones. */
  speech?: SpeechOption;
  /** Progress lines while starting. */
  progress?: (line: string) => void;
  /** Extra environment for the bot (tests: a shorter auto-read age, say). */
  botEnv?: Record<string, string>;
}

interface Playground {
  readonly url: string;
  readonly emulator: Emulator;
  readonly discord: FakeDiscord;
  readonly voice: FakeVoiceServer;
  readonly bot: BotProcess;
  /** The bot's web dashboard (signed in through the local Discord's OAuth2), when it serves one. */
  readonly dashboardUrl: string | undefined;
  close(): Promise<void>;
}

/** About a minute of the bot's voice packets; the page gets them as they come, so none is needed later. */
const RETAINED_PACKETS = 3000;
/** Environment a child keeps from the playground's (everything else comes from the playground). */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'TZ', 'FFMPEG_PATH', 'TMPDIR'];

export async function startPlayground(options: PlaygroundOptions): Promise<Playground> {
  const progress = options.progress ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), 'yomiage-playground-'));
  const cleanups: Array<() => Promise<void> | void> = [() => rmSync(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve(cleanup()).catch(() => {});
  };
  try {
    // A taken port fails now, not after the bot has started.
    if (options.port !== 0) await portIsFree(options.port);
    progress('starting the TTS emulator and the local Discord (127.0.0.1 only)');
    const voice = await startFakeVoiceServer({ maxRetainedPackets: RETAINED_PACKETS });
    cleanups.push(() => voice.close());
    // Two accounts of the bot: each voice channel is its own call (the voice server learns who is where).
    const discord = await startFakeDiscord({
      guilds: [playgroundGuild()],
      voiceServer: voice,
      extraBots: [{ user: PLAYGROUND_EXTRA_BOT, guildIds: [PLAYGROUND_IDS.guild] }],
    });
    cleanups.push(() => discord.close());
    const clips = new ClipIndex();
    const emulator = await startEmulator({
      host: LOOPBACK_HOST,
      port: 0,
      control: true,
      speech: options.speech ?? 'auto',
      onAudio: (made) => void clips.add(made),
    });
    cleanups.push(() => emulator.close());

    // The bot's configuration, as a deployment would give it: environment variables only.
    const caFile = join(dir, 'voice-ca.pem');
    writeFileSync(caFile, voice.caCertPem);
    // The operator's curated dictionaries: one list, a TSV file named for it, as an operator writes one.
    const curatedDir = join(dir, 'curated');
    mkdirSync(curatedDir);
    const { name, entries } = PLAYGROUND_CURATED_DICTIONARY;
    writeFileSync(join(curatedDir, `${name}.tsv`), entries.map(([word, reading]) => `${word}\t${reading}\n`).join(''));
    const env: Record<string, string> = {};
    for (const name of INHERITED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name]!;
    Object.assign(env, {
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      EXTRA_DISCORD_TOKENS: discord.bots
        .slice(1)
        .map((b) => b.token)
        .join(','),
      TTS_TOKEN: DEFAULT_TOKEN,
      TTS_BASE_URL: emulator.baseUrl,
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'info',
      // The voice server's self-signed certificate, trusted the standard way.
      NODE_EXTRA_CA_CERTS: caFile,
      // Keeps the bot's voice UDP socket on 127.0.0.1 (see bot-loopback.ts); the bot's code is unchanged.
      NODE_OPTIONS: `--import ${pathToFileURL(join(import.meta.dirname, 'bot-loopback.ts')).href}`,
      // The web dashboard on any free port, signing in with the local Discord's OAuth2.
      DASHBOARD_PORT: '0',
      DISCORD_CLIENT_SECRET: discord.bots[0]!.clientSecret,
      CURATED_DICTIONARIES_DIR: curatedDir,
      ...options.botEnv,
    });

    progress('registering the slash commands (npm run deploy-commands)');
    await deployCommands({ cwd: dir, env, guildId: PLAYGROUND_IDS.guild });

    progress('starting the bot (npm start)');
    const bot = new BotProcess({ cwd: dir, env });
    cleanups.push(() => bot.stop());
    await bot.waitForReady();
    // Logged before "bot ready"; its callback is registered as the application's redirect.
    const listening = bot.logs.find((l) => l.msg === 'dashboard listening');
    const dashboardUrl = typeof listening?.url === 'string' ? listening.url : undefined;
    if (dashboardUrl) discord.bots[0]!.redirectUris.push(`${dashboardUrl}/auth/callback`);

    const tap = new VoiceTap(voice, { guildId: PLAYGROUND_IDS.guild, identify: (contour, complete) => clips.match(contour, complete) });
    cleanups.push(() => tap.close());
    const page = new PageServer({ port: options.port, guildId: PLAYGROUND_IDS.guild, discord, voice, emulator, bot, tap, dashboardUrl });
    cleanups.push(() => page.close());
    progress("setting the server's voice pool (はるか: /config voice-pool)");
    await setVoicePool(page, discord);
    await page.listen();
    return { url: page.url, emulator, discord, voice, bot, dashboardUrl, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The admin's own set-up, before the page opens: はるか adds the voice pool's voices in #general
 * with /config voice-pool, as an admin would, so members sound different from the first message
 * (the page shows her commands and the bot's answers). Throws when the bot does not add one.
 */
async function setVoicePool(page: PageServer, discord: FakeDiscord): Promise<void> {
  for (const voice of PLAYGROUND_VOICE_POOL) {
    const options = [{ name: 'action', type: 3, value: 'add' } as const, { name: 'voice', type: 3, value: voice } as const];
    const { id } = await page.members.command({
      userId: PLAYGROUND_IDS.haruka,
      channelId: PLAYGROUND_IDS.text,
      name: 'config',
      options: [{ name: 'voice-pool', type: 1, options }],
      locale: 'ja',
    });
    // Added: a reply for everyone (a refusal is private).
    const added = discord.messages.some((m) => m.interactionId === id && (m.flags & 64) === 0 && m.content.includes(voice));
    if (!added) {
      const said = discord.messages.find((m) => m.interactionId === id)?.content;
      throw new Error(`the bot did not add ${voice} to the voice pool${said ? `: ${said}` : ' (no answer)'}`);
    }
  }
}

/** Resolves when `port` can be listened on at 127.0.0.1 (then lets it go); rejects with EADDRINUSE otherwise. */
async function portIsFree(port: number): Promise<void> {
  const probe = createServer();
  await listenOnLoopback(probe, port);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
}
