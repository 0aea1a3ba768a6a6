// `npm run bench:memory`: what the bot keeps in memory. First, of the chat it reads: the local Discord
// delivers BENCH_CHANNELS (1,000) text channels x BENCH_MESSAGES (200) messages over the gateway to the
// real bot, alone in a child process (this file with --bot), twice in one run: with discord.js's default
// caches (the last 200 messages of every channel: the bot before), and with the bot's own client
// options (no message cache). Prints, per run, the messages the client holds and its resident
// memory and heap after a forced GC. No voice session, no auto-read channel: every message arrives
// and is ignored, as in a server's busy channels the bot does not read. Then its dictionaries
// (bench-memory-dictionaries.ts): 40 members' 5,000-entry personal dictionaries of long words against
// the 64 MiB target, and what each server costs beside a 2,000-entry global list, now and before.
// BENCH_PART=chat or dictionaries runs one of the two. Asserts nothing (shared machine); takes a few
// minutes.
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Events, Options } from 'discord.js';
import { loadConfig } from '../src/config.ts';
import { createBot } from '../src/bot.ts';
import { DEFAULT_TOKEN, startEmulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeGuild } from '@yomiage/local-discord';
import { createLogger } from '../src/util/log.ts';
import { benchDictionaries } from './bench-memory-dictionaries.ts';

const CHANNELS = Number(process.env.BENCH_CHANNELS ?? 1_000);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200);
const IN_FLIGHT = 200;
/** A chat line of ordinary length. */
const TEXT = 'きょうの予定は午後三時からの打ち合わせです。資料は共有フォルダに置いてあります。';
type Mode = 'discordjs-default' | 'bot';

interface Report {
  received: number;
  cachedMessages: number;
  rss: number;
  heapUsed: number;
}

if (process.argv.includes('--bot')) await runBot(process.env.BENCH_MODE as Mode);
else await main();

/** The child: the real bot, counting what it received; answers 'measure' once all of it arrived. */
async function runBot(mode: Mode): Promise<void> {
  const config = loadConfig();
  const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
  // "Before": discord.js's own default cache factory, over the bot's options.
  const clientOptions = mode === 'discordjs-default' ? { makeCache: Options.cacheWithLimits(Options.DefaultMakeCacheSettings) } : {};
  const bot = await createBot({ config, logger, clientOptions });
  let received = 0;
  bot.client.on(Events.MessageCreate, () => void received++);
  await bot.start();
  const gc = (globalThis as { gc?: () => void }).gc;
  process.on('message', (message: { cmd: string; expect?: number }) => {
    if (message.cmd === 'measure') {
      const answer = () => {
        if (received < (message.expect ?? 0)) return void setTimeout(answer, 50);
        gc?.();
        gc?.();
        let cachedMessages = 0;
        for (const channel of bot.client.channels.cache.values()) if ('messages' in channel) cachedMessages += channel.messages.cache.size;
        const { rss, heapUsed } = process.memoryUsage();
        process.send?.({ report: { received, cachedMessages, rss, heapUsed } satisfies Report });
      };
      answer();
    } else if (message.cmd === 'stop') void bot.stop().then(() => process.exit(0));
  });
  process.send?.({ ready: true });
}

/** The default guild with CHANNELS more text channels. */
function busyGuild(): FakeGuild {
  const guild = defaultGuild();
  for (let i = 0; i < CHANNELS; i++) {
    guild.channels.push({ id: `12000000000000${String(i).padStart(5, '0')}`, name: `chat-${i}`, type: 0, position: 10 + i });
  }
  return guild;
}

async function main(): Promise<void> {
  const part = process.env.BENCH_PART;
  if (part !== 'dictionaries') await benchChat();
  if (part !== 'chat') await benchDictionaries();
}

async function benchChat(): Promise<void> {
  const emulator = await startEmulator({ control: true });
  const rows: Array<{ mode: Mode; before: Report; after: Report; seconds: number }> = [];
  try {
    for (const mode of ['discordjs-default', 'bot'] as const) rows.push(await measure(mode, emulator.baseUrl));
  } finally {
    await emulator.close();
  }
  const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
  console.log(`\n${CHANNELS} channels x ${MESSAGES} messages (${CHANNELS * MESSAGES} MESSAGE_CREATE) to the bot over the gateway`);
  console.log('caches                         cached msgs   RSS idle   RSS after   heap after GC   (heap idle)   delivery');
  for (const r of rows) {
    const label = r.mode === 'bot' ? "the bot's (no message cache)" : 'discord.js default (200/chan)';
    const cells = [
      label.padEnd(30),
      String(r.after.cachedMessages).padStart(11),
      mib(r.before.rss).padStart(10),
      mib(r.after.rss).padStart(11),
      mib(r.after.heapUsed).padStart(15),
      `(${mib(r.before.heapUsed)})`.padStart(13),
      `${r.seconds.toFixed(1)} s`.padStart(10),
    ];
    console.log(cells.join(' '));
  }
}

/** One run: a fresh local Discord and data directory, the bot in a child process, every message delivered. */
async function measure(mode: Mode, ttsBaseUrl: string): Promise<{ mode: Mode; before: Report; after: Report; seconds: number }> {
  const discord = await startFakeDiscord({ guilds: [busyGuild()] });
  const dataDir = mkdtempSync(join(tmpdir(), 'yomiage-bench-memory-'));
  const child = fork(import.meta.filename, ['--bot'], {
    execArgv: ['--experimental-strip-types', '--expose-gc', '--max-old-space-size=6144'],
    env: {
      ...process.env,
      BENCH_MODE: mode,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      TTS_TOKEN: DEFAULT_TOKEN,
      TTS_BASE_URL: ttsBaseUrl,
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = <T>(key: string) =>
    new Promise<T>((resolve, reject) => {
      const onMessage = (m: Record<string, unknown>) => {
        if (!(key in m)) return;
        child.off('message', onMessage);
        resolve(m[key] as T);
      };
      child.on('message', onMessage);
      child.once('exit', (code) => reject(new Error(`the bot exited (${code}) before answering ${key}`)));
    });
  try {
    await next('ready');
    child.send({ cmd: 'measure', expect: 0 });
    const before = await next<Report>('report');
    const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
    const channels = busyGuild()
      .channels.slice(-CHANNELS)
      .map((c) => c.id);
    const started = performance.now();
    const inFlight = new Set<Promise<unknown>>();
    for (let round = 0; round < MESSAGES; round++) {
      for (const [i, channelId] of channels.entries()) {
        const content = `round ${round} in channel ${i}: ${TEXT}`;
        const sent = discord.sendMessage({ channelId, author: alice, content }).finally(() => inFlight.delete(sent));
        inFlight.add(sent);
        if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
      }
    }
    await Promise.all(inFlight);
    child.send({ cmd: 'measure', expect: CHANNELS * MESSAGES });
    const after = await next<Report>('report');
    const seconds = (performance.now() - started) / 1000;
    console.log(`${mode}: ${after.received} messages received in ${seconds.toFixed(1)} s`);
    return { mode, before, after, seconds };
  } finally {
    child.send({ cmd: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));
    await discord.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
