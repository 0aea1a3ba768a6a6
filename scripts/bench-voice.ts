// `npm run bench:voice`: latency from MESSAGE_CREATE to the first non-silent RTP packet at the fake
// voice server (emulator synthesis delay 0), for a cache miss, a cache hit, and the plain baseline
// (ffmpeg on the MP3 for every play), all in one run; then the bot's resident memory with 1 and
// with 50 guilds connected to voice. Prints numbers and targets; asserts nothing (shared machine).
// Every call is end-to-end encrypted (DAVE v1) with a simulated listener in it, as on Discord.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TOKEN, startEmulator } from '../src/emulator/index.ts';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord, type FakeGuild } from '../src/local-discord/server.ts';
import { startFakeVoiceServer, type FakeVoiceServer } from '../src/local-discord/voice/server.ts';

const TRIALS = Number(process.env.BENCH_TRIALS ?? 15);
const GUILDS = Number(process.env.BENCH_GUILDS ?? 50);
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };

/** The default test guild with every guild-scoped id made unique for guild number n. */
function guildNumber(n: number): FakeGuild {
  // Guild-scoped ids of the fixture are 1100000000000000NNN; give each guild its own 19-digit range.
  const json = JSON.stringify(defaultGuild()).replace(/"1100000000000000(\d{3})"/g, (_m, tail: string) => `"11${String(n).padStart(4, '0')}0000000000${tail}"`);
  return JSON.parse(json) as FakeGuild;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const ids = (g: FakeGuild) => ({
  guild: g.id,
  general: g.channels.find((c) => c.name === 'general')!.id,
  voice: g.channels.find((c) => c.type === 2)!.id,
});

interface BotChild {
  child: ChildProcess;
  ask(cmd: string): Promise<{ rss: number; voiceGuilds: number }>;
  stop(): Promise<void>;
}

async function startBot(discord: FakeDiscord, emulatorUrl: string, voice: FakeVoiceServer, playback: 'cached' | 'mp3'): Promise<BotChild> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-voice-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, voice.caCertPem);
  const child = fork(join(import.meta.dirname, 'bench-voice-bot.ts'), [], {
    execArgv: ['--experimental-strip-types', '--expose-gc'],
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: caFile,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      TTS_TOKEN: DEFAULT_TOKEN,
      TTS_BASE_URL: emulatorUrl,
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'silent',
      BENCH_PLAYBACK: playback,
      USER_MONTHLY_CHARS: '1000000',
      GUILD_MONTHLY_CHARS: '1000000',
      ACCOUNT_MONTHLY_CHARS: '1000000',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code) => reject(new Error(`bot exited with ${code}`)));
  });
  return {
    child,
    ask: (cmd) => new Promise((resolve) => { child.once('message', (m) => resolve(m as { rss: number; voiceGuilds: number })); child.send({ cmd }); }),
    async stop() {
      child.send({ cmd: 'stop' });
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** /join in `g` with alice's client in the call, so the bot speaks DAVE as on Discord. */
async function join_(discord: FakeDiscord, voice: FakeVoiceServer, g: FakeGuild): Promise<void> {
  const { general } = ids(g);
  voice.simulateListener({ guildId: g.id, channelId: ids(g).voice, userId: alice.id });
  const interaction = await discord.sendInteraction({ guildId: g.id, channelId: general, user: alice, name: 'join', locale: 'en-US' });
  await interaction.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
  await voice.waitForDave(g.id);
}

interface Trial {
  /** MESSAGE_CREATE -> first non-silent RTP packet (what the issue measures). */
  audible: number;
  /** MESSAGE_CREATE -> first RTP packet of the utterance (the bot's own share; the rest is the clip's lead-in). */
  firstPacket: number;
}

/** One trial: message in, wait for the first non-silent packet, then for the utterance to end. */
async function trial(discord: FakeDiscord, voice: FakeVoiceServer, g: FakeGuild, text: string): Promise<Trial> {
  const t0 = performance.now();
  const anyPacket = voice.waitForEvent('packet', (p) => p.guildId === g.id && p.receivedAt >= t0, 30_000);
  const audible = voice.waitForEvent('packet', (p) => p.guildId === g.id && !p.silent && p.receivedAt >= t0, 30_000);
  await discord.sendMessage({ guildId: g.id, channelId: ids(g).general, author: alice, content: text });
  const [[first], [loud]] = await Promise.all([anyPacket, audible]);
  await voice.waitForAudio({ guildId: g.id, startedAfter: t0, timeoutMs: 30_000 });
  return { audible: loud.receivedAt - t0, firstPacket: first.receivedAt - t0 };
}

async function measure(mode: 'cached' | 'mp3') {
  const emulator = await startEmulator({ synthesisDelayMs: 0, rate: { standard: { limit: 10_000, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } } });
  const voice = await startFakeVoiceServer();
  const guilds = Array.from({ length: GUILDS }, (_, i) => guildNumber(i + 1));
  const discord = await startFakeDiscord({ guilds, voiceEndpoint: () => voice.endpoint });
  const bot = await startBot(discord, emulator.baseUrl, voice, mode);
  try {
    const g = guilds[0]!;
    await discord.setVoiceState(alice.id, g.id, ids(g).voice);
    await join_(discord, voice, g);
    // The bot reads alice's name once; warm up so every trial is a plain message.
    await trial(discord, voice, g, 'ウォームアップ');
    const miss: Trial[] = [];
    const hit: Trial[] = [];
    for (let i = 0; i < TRIALS; i++) miss.push(await trial(discord, voice, g, `テスト番号${i}の読み上げ`));
    await trial(discord, voice, g, 'おはようございます'); // puts it in the cache
    for (let i = 0; i < TRIALS; i++) hit.push(await trial(discord, voice, g, 'おはようございます'));
    let memory: { one: number; all: number } | undefined;
    if (mode === 'cached') {
      const one = (await bot.ask('rss')).rss;
      for (const other of guilds.slice(1)) {
        await discord.setVoiceState(alice.id, other.id, ids(other).voice);
        await join_(discord, voice, other);
      }
      const all = await bot.ask('rss');
      if (all.voiceGuilds !== GUILDS) throw new Error(`only ${all.voiceGuilds} guilds connected`);
      memory = { one, all: all.rss };
    }
    return { miss, hit, memory };
  } finally {
    await bot.stop();
    await discord.close();
    await voice.close();
    await emulator.close();
  }
}

const fmt = (trials: Trial[]) => {
  const a = trials.map((t) => t.audible);
  const f = trials.map((t) => t.firstPacket);
  return `p50 ${percentile(a, 50).toFixed(1)} ms, p95 ${percentile(a, 95).toFixed(1)} ms (first packet p50 ${percentile(f, 50).toFixed(1)} ms; n=${trials.length})`;
};
console.log(`bench:voice — ${TRIALS} trials per case, MESSAGE_CREATE -> first non-silent RTP packet, emulator synthesis delay 0\n`);
const cached = await measure('cached');
const baseline = await measure('mp3');
console.log(`cache miss  (synthesise + Ogg Opus once + play):   ${fmt(cached.miss)}`);
console.log(`cache hit   (Ogg Opus from the cache, no ffmpeg):  ${fmt(cached.hit)}`);
console.log(`baseline    (cache hit, ffmpeg on the MP3 each play): ${fmt(baseline.hit)}`);
const audibleP50 = percentile(cached.hit.map((t) => t.audible), 50);
const overhead = percentile(cached.hit.map((t) => t.firstPacket), 50);
// The bot's overhead ends when audio starts flowing (the first RTP packet of the clip); the first
// frame after that is the clip's own start (Opus priming and the attack of the first syllable).
console.log(`\ncache-hit overhead p50 (message -> first RTP packet of the clip): ${overhead.toFixed(1)} ms (target <= 30 ms: ${overhead <= 30 ? 'PASS' : 'MISS'})`);
console.log(`cache hit to first non-silent packet p50: ${audibleP50.toFixed(1)} ms; baseline ${percentile(baseline.hit.map((t) => t.audible), 50).toFixed(1)} ms (${(percentile(baseline.hit.map((t) => t.audible), 50) - audibleP50).toFixed(1)} ms saved per play)`);
if (cached.memory) {
  const mb = (b: number) => b / 1024 / 1024;
  const perGuild = (mb(cached.memory.all) - mb(cached.memory.one)) / (GUILDS - 1);
  console.log(`bot RSS: ${mb(cached.memory.one).toFixed(1)} MB with 1 voice guild, ${mb(cached.memory.all).toFixed(1)} MB with ${GUILDS}`);
  console.log(`per extra voice guild: ${perGuild.toFixed(2)} MB (target <= 3 MB: ${perGuild <= 3 ? 'PASS' : 'MISS'})`);
}
