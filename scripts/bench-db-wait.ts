// `npm run bench:dbwait`: does a database lock held by another process stall the audio?
// The real bot (a child process) plays a 12 s clip in guild A's voice channel while guild B,
// in voice too, reads a message every 300 ms (each one writes to SQLite: cache index, rate window,
// ledger, history) and a second process holds SQLite's write lock for 250 ms every 400 ms. The fake
// voice server (this process) records when each of guild A's RTP packets arrives; intervals should
// stay at 20 ms. Runs the bot's policy (writes fail fast and retry asynchronously) and the old one
// (busy_timeout 5000: a write waits for the lock on the audio thread). Prints numbers; asserts nothing.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TOKEN, startEmulator } from '@yomiage/tts-emulator';
import { DEFAULT_IDS, defaultGuild, startFakeDiscord, type FakeDiscord, type FakeGuild } from '@yomiage/local-discord';
import { startFakeVoiceServer, type FakeVoiceServer, type ReceivedPacket } from '@yomiage/local-discord';

const HOLD_MS = Number(process.env.BENCH_HOLD_MS ?? 250);
const GAP_MS = Number(process.env.BENCH_GAP_MS ?? 150);
const WINDOW_MS = 8_000;
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };

function guildNumber(n: number): FakeGuild {
  const json = JSON.stringify(defaultGuild()).replace(
    /"1100000000000000(\d{3})"/g,
    (_m, tail: string) => `"11${String(n).padStart(4, '0')}0000000000${tail}"`,
  );
  return JSON.parse(json) as FakeGuild;
}
const ids = (g: FakeGuild) => ({
  general: g.channels.find((c) => c.name === 'general')!.id,
  voice: g.channels.find((c) => c.type === 2)!.id,
});
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function startBot(
  discord: FakeDiscord,
  emulatorUrl: string,
  voice: FakeVoiceServer,
  dir: string,
  policy: string,
): Promise<ChildProcess> {
  const caFile = join(dir, 'ca.pem');
  writeFileSync(caFile, voice.caCertPem);
  const child = fork(join(import.meta.dirname, 'bench-db-wait-bot.ts'), [], {
    execArgv: ['--experimental-strip-types'],
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: caFile,
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      TTS_TOKEN: DEFAULT_TOKEN,
      TTS_BASE_URL: emulatorUrl,
      DATA_DIR: join(dir, 'data'),
      LOG_LEVEL: 'silent',
      BENCH_DB_POLICY: policy,
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
  return child;
}

async function joinVoice(discord: FakeDiscord, g: FakeGuild): Promise<void> {
  await discord.setVoiceState(alice.id, g.id, ids(g).voice);
  const i = await discord.sendInteraction({ guildId: g.id, channelId: ids(g).general, user: alice, name: 'join', locale: 'en-US' });
  await i.waitForResponse((r) => r.kind === 'editOriginal', 30_000);
}

async function run(policy: 'nonblocking' | 'blocking', contended: boolean) {
  const dir = mkdtempSync(join(tmpdir(), 'bench-dbwait-'));
  const emulator = await startEmulator({
    rate: { standard: { limit: 10_000, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } },
  });
  const voice = await startFakeVoiceServer();
  const [a, b] = [guildNumber(1), guildNumber(2)];
  const discord = await startFakeDiscord({ guilds: [a, b], voiceEndpoint: () => voice.endpoint });
  const bot = await startBot(discord, emulator.baseUrl, voice, dir, policy);
  let holder: ChildProcess | undefined;
  try {
    await joinVoice(discord, a);
    await joinVoice(discord, b);
    const packets: ReceivedPacket[] = [];
    voice.on('packet', (p) => {
      if (p.guildId === a.id) packets.push(p);
    });
    if (contended) {
      holder = spawn(
        process.execPath,
        [
          '--experimental-strip-types',
          join(import.meta.dirname, 'db-lock-holder.ts'),
          join(dir, 'data', 'bot.sqlite3'),
          String(HOLD_MS),
          String(GAP_MS),
          '0',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      await new Promise<void>((resolve) => holder!.stdout!.once('data', () => resolve()));
    }
    const long = 'これは長い読み上げです。'.repeat(9); // ~12 s of audio
    const t0 = performance.now();
    await discord.sendInteraction({
      guildId: a.id,
      channelId: ids(a).general,
      user: alice,
      name: 'say',
      locale: 'ja',
      options: [{ name: 'text', type: 3, value: long }],
    });
    await voice.waitForEvent('packet', (p) => p.guildId === a.id && p.receivedAt >= t0, 30_000);
    const windowStart = performance.now();
    let sent = 0;
    while (performance.now() - windowStart < WINDOW_MS) {
      await discord.sendMessage({ guildId: b.id, channelId: ids(b).general, author: alice, content: `メッセージ番号${sent++}です` });
      await sleep(300);
    }
    const inWindow = packets.filter((p) => p.receivedAt >= windowStart && p.receivedAt <= windowStart + WINDOW_MS);
    const intervals = inWindow.slice(1).map((p, i) => p.receivedAt - inWindow[i]!.receivedAt);
    const bSpoken = voice.utterances(b.id).length;
    return { intervals, packets: inWindow.length, sent, bSpoken };
  } finally {
    holder?.kill('SIGKILL');
    bot.send({ cmd: 'stop' });
    await new Promise((r) => bot.once('exit', r));
    await discord.close();
    await voice.close();
    await emulator.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:dbwait — guild A plays 12 s while guild B reads a message every 300 ms; another process holds the write lock ${HOLD_MS} ms every ${HOLD_MS + GAP_MS} ms`,
);
console.log(`guild A's RTP packet intervals at the voice server over ${WINDOW_MS / 1000} s (ideal: 20 ms)\n`);
for (const [policy, contended] of [
  ['nonblocking', false],
  ['nonblocking', true],
  ['blocking', true],
] as const) {
  const r = await run(policy, contended);
  const over = (ms: number) => r.intervals.filter((i) => i > ms).length;
  const label = `${policy === 'nonblocking' ? 'bot policy (fail fast + async retry)' : 'old policy (busy_timeout 5000)     '} ${contended ? 'lock contended' : 'no contention '}`;
  console.log(
    `${label}: p50 ${percentile(r.intervals, 50).toFixed(1)} ms  p99 ${percentile(r.intervals, 99).toFixed(1)} ms  max ${Math.max(...r.intervals).toFixed(1)} ms  ` +
      `gaps > 60 ms: ${over(60)}  packets ${r.packets}  (guild B: ${r.sent} messages sent, ${r.bSpoken} utterances heard)`,
  );
}
