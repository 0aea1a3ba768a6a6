// `npm run bench:voice`: the voice path, measured at the local voice server. Three processes: this
// one (the emulator with synthesis delay 0 and the local Discord), the real bot
// (bench-voice-bot.ts) and the voice server with DAVE (bench-voice-server.ts). Every call is
// end-to-end encrypted (DAVE v1) with a simulated listener in it, as on Discord. Prints numbers and
// targets (PASS/MISS); asserts nothing (shared machine). Measures:
// 1. latency from MESSAGE_CREATE to the first RTP packet: cache miss, cache hit, and the plain
//    baseline (ffmpeg on the MP3 for every play); for the miss, first RTP packet minus the moment
//    the MP3 download completed, and how much of that was the wait for DAVE;
// 2. the bot's resident memory with 1 and with 50 guilds in voice;
// 3. how many guilds can speak at once: 10, 50, 100, 200 and 400 guilds sent the same cached clip
//    at the same moment; per stream, the interval between consecutive packets at the server, over
//    the whole run and within the stretch when every stream plays (the targets are judged there: a
//    run without such a stretch is not N at once, and its targets print MISS; BENCH_DEBUG=1 prints
//    when the streams started and ended);
//    each count twice: as is, and with the bot's main thread stressed (kept busy 50 ms out of
//    every 500, test/support/stall.ts);
// 4. both designs side by side in the same run: voice in worker threads (VOICE_WORKERS, the
//    default) and voice on the main thread (VOICE_WORKERS=0, the design before), so the gain is a
//    ratio measured at the same moment.
// BENCH_TRIALS (15), BENCH_GUILDS (50, memory), BENCH_LOAD ("10,50,100,200,400") change the sizes;
// BENCH_VOICE_WORKERS sets VOICE_WORKERS for the workers design (default: the bot's default);
// BENCH_VOICE_HOLD=0 has the voice server process every packet as it arrives instead of after the
// run (the timing before, to compare); BENCH_MAIN_THREAD=0 skips the main-thread design;
// BENCH_BOT_PROFILE=dir writes a CPU profile of the bot; BENCH_CLOCK_TRACE_MS=5000 has each
// voice worker print its packet clock's ticks every 5 s (late, sending and preparing per packet, GC).
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TOKEN, startEmulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord, type FakeGuild } from '@yomiage/local-discord';
import { Child, loadRun, percentile, printLoadHeader, printLoadRow, type LoadResult } from './bench-voice-load.ts';

const TRIALS = Number(process.env.BENCH_TRIALS ?? 15);
const GUILDS = Number(process.env.BENCH_GUILDS ?? 50);
const LOAD = (process.env.BENCH_LOAD ?? '10,50,100,200,400')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const debug = process.env.BENCH_DEBUG ? (...args: unknown[]) => console.error(new Date().toISOString(), ...args) : () => {};
const epochNow = () => performance.timeOrigin + performance.now();
/** A stretch with every stream playing shorter than this is no measure of N at once. */
const MIN_SPAN_MS = 5_000;
/** The stressed main thread: busy this long out of every `everyMs`. */
const STRESS = { busyMs: 50, everyMs: 500 };
/** Where the bot runs voice: in worker threads (the default), or on its main thread (the design before). */
type Design = 'workers' | 'main';
/** About 7 s of speech from the emulator (0.12 s a character). */
const LONG_TEXT = 'みなさんこんにちは、今日はとても良い天気ですね。これから一緒に音声の読み上げを試してみましょう。';

/** The default test guild with every guild-scoped id made unique for guild number n. */
function guildNumber(n: number): FakeGuild {
  // Guild-scoped ids of the fixture are 1100000000000000NNN; give each guild its own 19-digit range.
  const json = JSON.stringify(defaultGuild()).replace(
    /"1100000000000000(\d{3})"/g,
    (_m, tail: string) => `"11${String(n).padStart(4, '0')}0000000000${tail}"`,
  );
  return JSON.parse(json) as FakeGuild;
}

const ids = (g: FakeGuild) => ({
  guild: g.id,
  general: g.channels.find((c) => c.name === 'general')!.id,
  voice: g.channels.find((c) => c.type === 2)!.id,
});

async function startVoiceServer(): Promise<{ server: Child; endpoint: string; caCertPem: string }> {
  const child = fork(join(import.meta.dirname, 'bench-voice-server.ts'), [], {
    execArgv: ['--experimental-strip-types'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const server = new Child(child);
  const hello = await server.next((m) => (m.ready ? (m as { endpoint: string; caCertPem: string }) : undefined));
  return { server, endpoint: hello.endpoint, caCertPem: hello.caCertPem };
}

interface Moment {
  moment: 'downloaded' | 'play' | 'encrypting';
  guildId: string;
  at: number;
  canEncrypt?: boolean;
  source?: string;
}

async function startBot(discord: FakeDiscord, emulatorUrl: string, caCertPem: string, playback: 'cached' | 'mp3', design: Design) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-voice-'));
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, caCertPem);
  const child = fork(join(import.meta.dirname, 'bench-voice-bot.ts'), [], {
    // BENCH_BOT_PROFILE=dir: a V8 CPU profile of the bot process, written there when it stops.
    execArgv: [
      '--experimental-strip-types',
      '--expose-gc',
      ...(process.env.BENCH_BOT_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_BOT_PROFILE}`] : []),
    ],
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
      VOICE_WORKERS: design === 'main' ? '0' : (process.env.BENCH_VOICE_WORKERS ?? ''),
      USER_MONTHLY_CHARS: '10000000',
      GUILD_MONTHLY_CHARS: '10000000',
      ACCOUNT_MONTHLY_CHARS: '10000000',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const bot = new Child(child);
  const moments: Moment[] = [];
  bot.onOther = (m) => {
    if (typeof m.moment === 'string') moments.push(m as unknown as Moment);
  };
  await Promise.race([
    bot.next((m) => (m.ready ? true : undefined)),
    new Promise((_, reject) => child.once('exit', (code) => reject(new Error(`bot exited with ${code}`)))),
  ]);
  return {
    bot,
    moments,
    rss: () => {
      child.send({ cmd: 'rss' });
      return bot.next((m) => (typeof m.rss === 'number' ? (m as { rss: number; voiceGuilds: number }) : undefined));
    },
    stall: (busyMs: number) => {
      child.send({ cmd: 'stall', busyMs, everyMs: STRESS.everyMs });
      return bot.next((m) => (m.stall !== undefined ? true : undefined));
    },
    load: <T>(start: boolean) => {
      child.send({ cmd: 'load', start });
      return bot.next((m) => (m.load !== undefined ? (m.load as T) : undefined));
    },
    async stop() {
      child.send({ cmd: 'stop' });
      await bot.exited();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** /join in `g` with alice's client in the call, so the bot speaks DAVE as on Discord. */
/**
 * /join in `g`; whether the call settled on DAVE (a call that did not is left out of the load runs,
 * and said so). A join the bot answered with an error is tried again after a pause, up to 3 times:
 * past ~100 joins a minute discord.js holds the voice state updates back (the gateway allows 120
 * sends a minute), and the bot's join times out meanwhile, as it would on Discord.
 */
async function join_(discord: FakeDiscord, server: Child, g: FakeGuild): Promise<boolean> {
  const { general, voice } = ids(g);
  await discord.setVoiceState(alice.id, g.id, voice);
  await server.ask('listen', { guildId: g.id, channelId: voice, userId: alice.id });
  debug('listener', g.id);
  let content = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const interaction = await discord.sendInteraction({ guildId: g.id, channelId: general, user: alice, name: 'join', locale: 'en-US' });
    content = String((await interaction.waitForResponse((r) => r.kind === 'editOriginal', 60_000)).data?.content ?? '');
    debug('join answered', g.id, content);
    if (/joined/i.test(content)) break;
    await new Promise((r) => setTimeout(r, 20_000));
  }
  return server.ask('dave', { guildId: g.id }).then(
    () => true,
    (error: Error) => {
      console.error(`  guild ${g.id} (join answered ${JSON.stringify(content)}): ${error.message}`);
      return false;
    },
  );
}

interface Trial {
  /** MESSAGE_CREATE -> first non-silent RTP packet. */
  audible: number;
  /** MESSAGE_CREATE -> first RTP packet of the utterance. */
  firstPacket: number;
  /** Cache miss only: download complete -> first RTP packet, and its parts. */
  miss?: { overhead: number; toPlay: number; daveWait: number; source: string };
}

/** One trial: message in, wait for the first (and first audible) packet, then for the utterance to end. */
async function trial(discord: FakeDiscord, server: Child, moments: Moment[], g: FakeGuild, text: string): Promise<Trial> {
  const t0 = epochNow();
  const first = server.ask<{ at: number }>('firstPacket', { guildId: g.id, after: t0, loud: false });
  const loud = server.ask<{ at: number }>('firstPacket', { guildId: g.id, after: t0, loud: true });
  await discord.sendMessage({ guildId: g.id, channelId: ids(g).general, author: alice, content: text });
  const [{ at: firstAt }, { at: loudAt }] = await Promise.all([first, loud]);
  await server.ask('audioEnded', { guildId: g.id, after: t0 });
  const result: Trial = { audible: loudAt - t0, firstPacket: firstAt - t0 };
  const mine = moments.filter((m) => m.guildId === g.id && m.at >= t0);
  const downloaded = mine.find((m) => m.moment === 'downloaded');
  const play = mine.find((m) => m.moment === 'play');
  if (downloaded && play) {
    // The player is held back (unsubscribed) until DAVE can encrypt: that wait, if any, is counted apart.
    const encrypting = play.canEncrypt ? undefined : mine.find((m) => m.moment === 'encrypting' && m.at >= play.at);
    result.miss = {
      overhead: firstAt - downloaded.at,
      toPlay: play.at - downloaded.at,
      daveWait: encrypting ? encrypting.at - play.at : 0,
      source: play.source ?? '?',
    };
  }
  return result;
}

/** Joins `guilds` a few at a time (each join is a gateway round trip and a DAVE handshake). */
async function joinAll(discord: FakeDiscord, server: Child, guilds: FakeGuild[]): Promise<FakeGuild[]> {
  const settled: FakeGuild[] = [];
  for (let i = 0; i < guilds.length; i += 10) {
    const batch = guilds.slice(i, i + 10);
    const ok = await Promise.all(batch.map((g) => join_(discord, server, g)));
    settled.push(...batch.filter((_, j) => ok[j]));
  }
  return settled;
}

async function measure(mode: 'cached' | 'mp3', design: Design) {
  const emulator = await startEmulator({
    synthesisDelayMs: 0,
    rate: { standard: { limit: 100_000, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } },
  });
  const { server, endpoint, caCertPem } = await startVoiceServer();
  const most = mode === 'cached' ? Math.max(GUILDS, ...LOAD) : 1;
  const guilds = Array.from({ length: most }, (_, i) => guildNumber(i + 1));
  const discord = await startFakeDiscord({ guilds, voiceEndpoint: () => endpoint });
  debug('voice server and discord up');
  const bot = await startBot(discord, emulator.baseUrl, caCertPem, mode, design);
  debug('bot up');
  try {
    const g = guilds[0]!;
    await join_(discord, server, g);
    debug('joined');
    // The bot reads alice's name once; warm up so every trial is a plain message.
    await trial(discord, server, bot.moments, g, 'ウォームアップ');
    const miss: Trial[] = [];
    const hit: Trial[] = [];
    for (let i = 0; i < TRIALS; i++) miss.push(await trial(discord, server, bot.moments, g, `テスト番号${i}の読み上げ`));
    await trial(discord, server, bot.moments, g, 'おはようございます'); // puts it in the cache
    for (let i = 0; i < TRIALS; i++) hit.push(await trial(discord, server, bot.moments, g, 'おはようございます'));
    let memory: { one: number; all: number } | undefined;
    const load: LoadResult[] = [];
    if (mode === 'cached') {
      // The memory figure is the workers design's (the default); the other design is here for its load runs.
      debug('trials done');
      const one = (await bot.rss()).rss;
      const inCall = [guilds[0]!, ...(await joinAll(discord, server, guilds.slice(1, GUILDS)))];
      const all = await bot.rss();
      if (all.voiceGuilds !== GUILDS) throw new Error(`only ${all.voiceGuilds} guilds connected`);
      if (design === 'workers') memory = { one, all: all.rss };
      debug('memory measured');
      // The long clip is cached in both forms it is read in (alice named or not, by how long ago
      // she spoke in that guild), so every load run plays cached Ogg Opus as repeated clips do.
      await trial(discord, server, bot.moments, guilds[0]!, LONG_TEXT);
      await trial(discord, server, bot.moments, guilds[1]!, LONG_TEXT);
      let joined = GUILDS;
      printLoadHeader();
      for (const n of LOAD) {
        if (n > joined) {
          inCall.push(...(await joinAll(discord, server, guilds.slice(joined, n))));
          joined = n;
        }
        const playing = inCall.slice(0, n);
        const send = () =>
          Promise.all(
            playing.map((g) => discord.sendMessage({ guildId: g.id, channelId: ids(g).general, author: alice, content: LONG_TEXT })),
          );
        for (const stressed of [false, true]) {
          debug('load run', design, n, stressed ? 'stressed' : '');
          await bot.stall(stressed ? STRESS.busyMs : 0);
          const run = await loadRun(
            server,
            bot,
            playing.map((g) => g.id),
            send,
          );
          await bot.stall(0);
          load.push({ ...run, guilds: n, design, stressed });
          printLoadRow(load.at(-1)!);
        }
      }
    }
    return { miss, hit, memory, load };
  } catch (error) {
    console.error(`bench:voice (${mode}) failed:`, error);
    throw error;
  } finally {
    debug('cleaning up');
    await bot.stop();
    debug('bot stopped');
    await discord.close();
    debug('discord closed');
    await server.ask('stop').catch(() => {});
    await server.exited();
    debug('voice server stopped');
    await emulator.close();
  }
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const fmt = (trials: Trial[]) => {
  const a = trials.map((t) => t.audible);
  const f = trials.map((t) => t.firstPacket);
  return `p50 ${ms(percentile(a, 50))}, p95 ${ms(percentile(a, 95))} (first packet p50 ${ms(percentile(f, 50))}; n=${trials.length})`;
};
const mb = (b: number) => b / 1024 / 1024;
console.log(`bench:voice — ${TRIALS} trials per case, MESSAGE_CREATE -> first RTP packet at the voice server, emulator synthesis delay 0`);
console.log(
  `load average at start: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')} (2 cores shared with other work)\n`,
);
const cached = await measure('cached', 'workers');
const mainThread = process.env.BENCH_MAIN_THREAD === '0' ? undefined : await measure('cached', 'main');
const baseline = await measure('mp3', 'workers');
console.log(`cache miss  (download, play the MP3 decoded in-process, Ogg Opus cached meanwhile): ${fmt(cached.miss)}`);
console.log(`baseline    (cache miss, ffmpeg on the MP3):             ${fmt(baseline.miss)}`);
console.log(`cache hit   (Ogg Opus from the cache, no ffmpeg):  ${fmt(cached.hit)}`);
console.log(`baseline    (cache hit, ffmpeg on the MP3 each play): ${fmt(baseline.hit)}`);

const parts = cached.miss.flatMap((t) => (t.miss ? [t.miss] : []));
if (parts.length > 0) {
  const overhead = percentile(
    parts.map((p) => p.overhead),
    50,
  );
  const daveWaits = parts.filter((p) => p.daveWait > 0);
  console.log(
    `\ncache-miss overhead p50 (MP3 download complete -> first RTP packet): ${ms(overhead)}, p95 ${ms(
      percentile(
        parts.map((p) => p.overhead),
        95,
      ),
    )} (target <= 30 ms: ${overhead <= 30 ? 'PASS' : 'MISS'})`,
  );
  console.log(
    `  of which: download -> clip handed to the player p50 ${ms(
      percentile(
        parts.map((p) => p.toPlay),
        50,
      ),
    )}; ` +
      `waiting for DAVE: ${daveWaits.length} of ${parts.length} trials${
        daveWaits.length
          ? ` (p50 ${ms(
              percentile(
                daveWaits.map((p) => p.daveWait),
                50,
              ),
            )})`
          : ', 0 ms'
      }; ` +
      `player -> first packet p50 ${ms(
        percentile(
          parts.map((p) => p.overhead - p.toPlay - p.daveWait),
          50,
        ),
      )} (@discordjs/voice prepares a frame on one 20 ms tick and sends it on the next); ` +
      `played from: ${[...new Set(parts.map((p) => p.source))].join(', ')}`,
  );
  const base = baseline.miss.flatMap((t) => (t.miss ? [t.miss.overhead] : []));
  // What common bots do on every clip: createAudioResource(mp3) spawns ffmpeg to decode it.
  if (base.length > 0)
    console.log(
      `  baseline (ffmpeg child per clip, as createAudioResource does): p50 ${ms(percentile(base, 50))}, p95 ${ms(percentile(base, 95))}`,
    );
} else {
  console.log('\ncache-miss overhead: MISS (no download/play moments were reported by the bot)');
}
const audibleP50 = percentile(
  cached.hit.map((t) => t.audible),
  50,
);
const hitOverhead = percentile(
  cached.hit.map((t) => t.firstPacket),
  50,
);
// The bot's overhead ends when audio starts flowing (the first RTP packet of the clip); the first
// frame after that is the clip's own start (Opus priming and the attack of the first syllable).
console.log(
  `cache-hit overhead p50 (message -> first RTP packet of the clip): ${ms(hitOverhead)} (target <= 30 ms: ${hitOverhead <= 30 ? 'PASS' : 'MISS'})`,
);
console.log(
  `cache hit to first non-silent packet p50: ${ms(audibleP50)}; baseline ${ms(
    percentile(
      baseline.hit.map((t) => t.audible),
      50,
    ),
  )} (${(
    percentile(
      baseline.hit.map((t) => t.audible),
      50,
    ) - audibleP50
  ).toFixed(1)} ms saved per play)`,
);
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');
if (cached.memory) {
  const perGuild = (mb(cached.memory.all) - mb(cached.memory.one)) / (GUILDS - 1);
  console.log(`bot RSS: ${mb(cached.memory.one).toFixed(1)} MB with 1 voice guild, ${mb(cached.memory.all).toFixed(1)} MB with ${GUILDS}`);
  console.log(`per extra voice guild: ${perGuild.toFixed(2)} MB (target <= 1 MB: ${verdict(perGuild <= 1)})`);
}
const hitFirst = (trials: Trial[]) =>
  percentile(
    trials.map((t) => t.firstPacket),
    50,
  );
if (mainThread)
  console.log(
    `cache hit, message -> first RTP packet p50: workers ${ms(hitFirst(cached.hit))}, main thread ${ms(hitFirst(mainThread.hit))} ` +
      `(target: no slower than the main-thread design, within 2 ms: ${verdict(hitFirst(cached.hit) <= hitFirst(mainThread.hit) + 2)})`,
  );
if (cached.load.length > 0) {
  // Side by side: the same guild count and stress, one design after the other in this run.
  console.log('\nboth designs side by side (p99 packet interval; ratio = main thread / workers):');
  console.log(
    'guilds | stressed | workers p99 | main p99 | ratio | workers worst stream p99 | main worst stream p99 | bare timer p99 (w/m)',
  );
  for (const w of cached.load) {
    const m = mainThread?.load.find((r) => r.guilds === w.guilds && r.stressed === w.stressed);
    console.log(
      `${String(w.guilds).padStart(6)} | ${(w.stressed ? 'yes' : 'no').padEnd(8)} | ${w.p99.toFixed(1).padStart(8)} ms | ${m ? `${m.p99.toFixed(1)} ms` : '-'} | ` +
        `${m ? (m.p99 / w.p99).toFixed(2) : '-'} | ${w.worstStreamP99.toFixed(1)} ms | ${m ? `${m.worstStreamP99.toFixed(1)} ms` : '-'} | ` +
        `${w.floorP99.toFixed(1)}/${m ? m.floorP99.toFixed(1) : '-'} ms`,
    );
  }
  console.log('\ntargets (voice in workers):');
  for (const stressed of [false, true]) {
    const at200 = cached.load.find((r) => r.guilds === 200 && r.stressed === stressed);
    const label = stressed ? 'stressed main thread' : 'as is';
    if (!at200) {
      console.log(`  200 guilds, ${label}: not measured (BENCH_LOAD has no 200)`);
      continue;
    }
    if (at200.overlapMs < MIN_SPAN_MS) {
      console.log(
        `  200 guilds, ${label}: MISS (all 200 played together for ${(at200.overlapMs / 1000).toFixed(1)} s only: not measured at once)`,
      );
      continue;
    }
    console.log(
      `  200 guilds, ${label}, while all 200 play (${(at200.overlapMs / 1000).toFixed(1)} s): p99 packet interval ${at200.overlapP99.toFixed(1)} ms <= bare timer p99 ${at200.floorP99.toFixed(1)} + 3 ms: ` +
        `${verdict(at200.overlapP99 <= at200.floorP99 + 3)}; worst stream p99 ${at200.overlapWorstStreamP99.toFixed(1)} ms <= 30 ms: ${verdict(at200.overlapWorstStreamP99 <= 30)}`,
    );
  }
  const lost = cached.load.reduce((n, r) => n + r.lost, 0);
  console.log(`  packets lost over every workers run: ${lost} (target 0: ${verdict(lost === 0)})`);
  console.log(
    `every audible frame end-to-end encrypted (DAVE), both designs: ${
      [...cached.load, ...(mainThread?.load ?? [])].every((r) => r.plain === 0 && r.undecryptable === 0) ? 'yes' : 'NO'
    }`,
  );
}
console.log(
  `load average at end: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(', ')}`,
);
