/**
 * Two calls read by the bot as `npm start` runs it, for voice recovery stories and `npm run
 * bench:recovery`: the main account in #Voice (bound to #general, alice listening), the extra
 * account in #Voice 2 (bound to #text-2, bob listening), both calls in one voice worker
 * (VOICE_WORKERS=1) and end-to-end encrypted. The bot is started with YOMIAGE_TEST_VOICE_FAULTS, so
 * `fault` makes its voice worker crash or hang for real (a word in a file, then SIGUSR2), and with
 * METRICS_PORT=0. Each call's lines carry a mark (赤 in #general, 青 in #text-2), so the emulator's
 * request log says which call asked for what.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_TOKEN, startEmulator, type Emulator } from '@yomiage/tts-emulator';
import {
  DEFAULT_IDS,
  defaultGuild,
  startFakeDiscord,
  startFakeVoiceServer,
  type FakeDiscord,
  type FakeVoiceServer,
} from '@yomiage/local-discord';
import { probeDurationMs } from '../../src/audio/mp3-frames.ts';
import { startChildBot, type ChildBot } from './child-bot.ts';
import { OPUS_SILENCE_FRAME } from '@yomiage/local-discord/voice/dave/frame';
import { decodedMs, e2eeProblems } from './dave-check.ts';

export const guildId = DEFAULT_IDS.guild;
export const EXTRA = { id: '1200000000000000002', username: 'yomiage-2' };
const VOICE_B = '1100000000000000104';
const TEXT_B = '1100000000000000105';
const alice = { id: DEFAULT_IDS.alice, username: 'alice' };
const bob = { id: DEFAULT_IDS.bob, username: 'bob' };
export const epochNow = (): number => performance.timeOrigin + performance.now();

/** One call: its voice channel, the text channel read there, the account reading it, who listens, and its lines' mark. */
export interface Call {
  name: string;
  voice: string;
  text: string;
  account: string;
  listener: { id: string; username: string };
  mark: string;
}

export const CALLS: readonly Call[] = [
  { name: '#Voice', voice: DEFAULT_IDS.voice, text: DEFAULT_IDS.general, account: DEFAULT_IDS.bot, listener: alice, mark: '赤' },
  { name: '#Voice 2', voice: VOICE_B, text: TEXT_B, account: EXTRA.id, listener: bob, mark: '青' },
];

/** What one fault did to one call. */
export interface CallOutcome {
  call: string;
  /** From the fault to the first sound of the call's new voice session (ms); undefined when it never came. */
  resumedMs: number | undefined;
  /** The bot's requests for this call since the trial began, each with its clip's length. */
  requests: Array<{ text: string; clipMs: number }>;
  /** How often each request was heard whole (within a tenth of its length, at least 200 ms). */
  wholeTimes: number[];
  /** Utterances heard that are no request's whole clip: the one the fault cut short, or something wrong. */
  partial: number[];
  /** Whole utterances not end-to-end encrypted to the listener (should be none). */
  e2ee: string[];
}

/** What a trial says in each call. */
export interface TrialOptions {
  /** Long lines (default 2; more at once are a backlog the bot's keep-up rule cuts). */
  long?: number;
  /** Each long line's sentence this many times (default 1: about 2 s at speed 4). */
  repeat?: number;
  /** A short line after them (default true). */
  short?: boolean;
  timeoutMs?: number;
}

export interface RecoveryWorld {
  emulator: Emulator;
  discord: FakeDiscord;
  voice: FakeVoiceServer;
  /** A second voice server, for Discord moving the calls (`discord.moveVoiceServer`). */
  otherVoice: FakeVoiceServer;
  bot: ChildBot;
  dataDir: string;
  metricsUrl: string;
  /** Makes the bot's voice worker fail for real; resolves when (epoch ms) the bot injected it. */
  fault(kind: 'crash' | 'hang'): Promise<number>;
  /**
   * Says `long` long lines (default 2) then a short one in each call, makes the worker fail as
   * `kind` says once both calls are speaking, and waits until every request of the trial was heard
   * whole (or `timeoutMs`).
   */
  trial(kind: 'crash' | 'hang', options?: TrialOptions): Promise<CallOutcome[]>;
  /**
   * Says `text` in `call` and waits until its request was heard whole there (on `on`, default the
   * first voice server); resolves what the call heard meanwhile.
   */
  speak(call: Call, text: string, on?: FakeVoiceServer): Promise<CallOutcome>;
  /** The bot's standard requests (not the clip lengths this world asks for itself). */
  botTexts(): string[];
  close(): Promise<void>;
}

/** Polls `check` every 50 ms until it returns something, or rejects after `timeoutMs` with `what` (a function: said at the time). */
export async function until<T>(check: () => T | undefined | false, timeoutMs: number, what: string | (() => string)): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const found = check();
    if (found !== undefined && found !== false) return found;
    if (Date.now() > end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export async function startRecoveryWorld(options: { env?: Record<string, string> } = {}): Promise<RecoveryWorld> {
  const guild = defaultGuild();
  guild.channels.push(
    { id: VOICE_B, name: 'Voice 2', type: 2, position: 1 },
    { id: TEXT_B, name: 'text-2', type: 0, position: 2, parentId: '1100000000000000100' },
  );
  // Packet times in epoch milliseconds, so they compare with the moment the bot logs for a fault.
  const [voice, otherVoice] = await Promise.all([startFakeVoiceServer({ now: epochNow }), startFakeVoiceServer({ now: epochNow })]);
  const [emulator, discord] = await Promise.all([
    // Tones, not espeak-ng: made at once however busy the machine, so both calls speak together.
    // An allowance for a bench's twenty trials (and this world's own length checks, on the same account).
    startEmulator({ control: true, speech: 'tones', accounts: [{ token: DEFAULT_TOKEN, plan: 'free', allowance: 1_000_000 }] }),
    startFakeDiscord({ guilds: [guild], voiceServer: voice, extraBots: [{ user: EXTRA, guildIds: [guildId] }] }),
  ]);
  const dataDir = mkdtempSync(join(tmpdir(), 'yomiage-recovery-'));
  const faultDir = mkdtempSync(join(tmpdir(), 'yomiage-fault-'));
  const faultFile = join(faultDir, 'fault');
  const bot = await startChildBot({
    discord,
    emulator,
    dataDir,
    caCertPem: `${voice.caCertPem}\n${otherVoice.caCertPem}`,
    env: {
      AUTO_READ_MAX_AGE_SECONDS: '600',
      // Room for a bench's twenty trials: a member over their allowance would not be read at all.
      USER_MONTHLY_CHARS: '100000',
      GUILD_MONTHLY_CHARS: '200000',
      ACCOUNT_MONTHLY_CHARS: '400000',
      EXTRA_DISCORD_TOKENS: discord.bots[1]!.token,
      VOICE_WORKERS: '1',
      METRICS_PORT: '0',
      YOMIAGE_TEST_VOICE_FAULTS: faultFile,
      ...options.env,
    },
  });
  const metricsUrl = String((await bot.waitForLog((l) => l.msg === 'metrics and health checks listening')).url);

  const command = async (user: Call['listener'], channelId: string, name: string, opts: unknown[] = []) => {
    const i = await discord.sendInteraction({ channelId, user, name, locale: 'en-US', options: opts as never });
    const answer = await i.waitForResponse(
      (r) => (r.kind === 'callback' || r.kind === 'editOriginal') && r.data?.content !== undefined,
      30_000,
    );
    return String(answer.data?.content);
  };
  // Speed 4: the emulator's clips are a quarter as long (voice plays in real time).
  await command(bob, DEFAULT_IDS.general, 'config', [{ name: 'speed', type: 1, options: [{ name: 'value', type: 10, value: 4 }] }]);
  // Each clip is its request's alone (no author's name before it), so what is heard matches what was asked.
  await command(bob, DEFAULT_IDS.general, 'config', [{ name: 'read-names', type: 1, options: [{ name: 'value', type: 5, value: false }] }]);
  for (const call of CALLS) {
    await discord.setVoiceState(call.listener.id, guildId, call.voice);
    voice.simulateListener({ guildId, channelId: call.voice, userId: call.listener.id });
    const joined = await command(call.listener, call.text, 'join');
    if (!joined.includes('Joined')) throw new Error(`/join in ${call.name} answered: ${joined}`);
  }
  await Promise.all(CALLS.map((c) => voice.waitForDave(guildId, 20_000, c.voice)));

  const botTexts = () =>
    emulator
      .requests()
      .filter((r) => r.target === 'standard' && r.headers['x-forwarded-for'] === undefined)
      .map((r) => (r.body as { text: string }).text);
  const clipMs = new Map<string, Promise<number>>();
  // Asked again from another address: the bot's rate window is untouched.
  const lengthOf = (text: string) => {
    if (!clipMs.has(text)) {
      const body = emulator.requests().find((r) => r.target === 'standard' && (r.body as { text: string }).text === text)?.body;
      clipMs.set(
        text,
        fetch(`${emulator.baseUrl}/text_to_speech_api/`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', token: DEFAULT_TOKEN, 'x-forwarded-for': '10.1.1.1' },
          body: JSON.stringify(body),
        })
          .then((res) => res.json() as Promise<{ url: string }>)
          .then(async ({ url }) => probeDurationMs(Buffer.from(await (await fetch(url)).arrayBuffer()))),
      );
    }
    return clipMs.get(text)!;
  };

  let trials = 0;
  const world: RecoveryWorld = {
    emulator,
    discord,
    voice,
    otherVoice,
    bot,
    dataDir,
    metricsUrl,
    botTexts,
    async fault(kind) {
      writeFileSync(faultFile, kind);
      // This fault's line, not an earlier one's.
      const from = bot.logs.length;
      process.kill(bot.pid, 'SIGUSR2');
      const line = await bot.waitForLog(
        (l) => l.msg === 'voice worker fault injected on purpose' && bot.logs.indexOf(l) >= from,
        10_000,
        `the ${kind} injected`,
      );
      return Number(line.at);
    },
    async trial(kind, { long = 2, repeat = 1, short = true, timeoutMs = 30_000 } = {}) {
      let trial = 0;
      let since = 0;
      let asked = 0;
      const soundOf = (call: Call) => voice.packets.filter((p) => p.channelId === call.voice && !p.silent && p.receivedAt >= since);
      const lastLine = (call: Call) => (short ? `${call.mark}${trial}おわり` : `${call.mark}${trial}の${long}`);
      const allAsked = (call: Call) => botTexts().slice(asked).join('').includes(lastLine(call));
      // The fault must fall while both calls speak. On a busy machine one call's lines can come so
      // late (the scheduler holding them for company while requests are scarce) that the other has
      // already said everything: then the trial starts again with new lines once both are quiet,
      // up to three times, before any fault is injected.
      for (let attempt = 1; ; attempt++) {
        trial = ++trials;
        since = epochNow();
        asked = botTexts().length;
        for (const call of CALLS) {
          // Each about 2 s at speed 4: the calls overlap however late one starts, and the fault falls
          // inside a clip. Then a short line. Two long ones at most: more at once, and the bot's
          // keep-up rule (/reading) skips part of the backlog as too far behind.
          for (let i = 1; i <= long; i++) {
            const sentence =
              'この長めの発言の途中でボイスの処理が止まっても、止まったところからではなく、最初からもう一度聞こえるはずです。';
            const line = `${call.mark}${trial}の${i}、${sentence.repeat(repeat)}`;
            await discord.sendMessage({ channelId: call.text, author: call.listener, content: line });
          }
          if (short) await discord.sendMessage({ channelId: call.text, author: call.listener, content: `${call.mark}${trial}おわり` });
          // The next call's lines once this call's first request went out: two audiences asking the
          // limiter at the same moment see each other waiting, and the second then holds its lines
          // for company (up to 14 s, src/speech/queue/pacing.ts `scarce`), which is not what is tested here.
          await until(
            () =>
              botTexts()
                .slice(asked)
                .some((t) => t.startsWith(`${call.mark}${trial}の1`)),
            20_000,
            `${call.name}'s first line requested`,
          );
        }
        // Both calls speaking at the same moment, each half a second into its first clip; or one
        // call done before the other began.
        const met = await until(
          () => {
            const now = epochNow();
            const speaking = (call: Call) => {
              const sound = soundOf(call);
              return sound.length >= 25 && sound.at(-1)!.receivedAt >= now - 150;
            };
            if (CALLS.every(speaking)) return 'together';
            // A call with every line asked for and two seconds of quiet has said all it will.
            const done = (call: Call) => allAsked(call) && (soundOf(call).at(-1)?.receivedAt ?? now) < now - 2_000;
            return CALLS.some(done) ? 'apart' : false;
          },
          30_000,
          () => {
            const heard = CALLS.map((call) => {
              const sound = soundOf(call);
              const last = sound.at(-1);
              return `${call.name} ${sound.length} sound packets${last ? `, the last ${Math.round(epochNow() - last.receivedAt)} ms ago` : ''}`;
            });
            const asks = botTexts()
              .slice(asked)
              .map((t) => t.slice(0, 4));
            return `both calls speaking (${heard.join('; ')}; requested: ${asks.join(' ') || 'nothing'})`;
          },
        );
        if (met === 'together') break;
        if (attempt === 3) throw new Error(`the two calls never spoke at the same moment in ${attempt} tries`);
        // Everything of this try said in both calls, and a second of quiet, before the next.
        await until(
          () => {
            const now = epochNow();
            return CALLS.every((call) => allAsked(call) && (soundOf(call).at(-1)?.receivedAt ?? 0) < now - 1_000);
          },
          30_000,
          'both calls done with the try before',
        );
      }
      const before = new Map(CALLS.map((c) => [c.voice, lastSsrc(voice, c.voice)]));
      const at = await world.fault(kind);
      return Promise.all(
        CALLS.map(async (call): Promise<CallOutcome> => {
          const mine = () =>
            botTexts()
              .slice(asked)
              .filter((t) => t.includes(`${call.mark}${trial}`));
          // Every line of the trial requested (merged or not)...
          await until(() => allAsked(call), timeoutMs, `${call.name}'s lines requested`);
          const requests = await Promise.all(mine().map(async (text) => ({ text, clipMs: await lengthOf(text) })));
          // ...and each heard whole, or the time is up.
          const outcome = () => account(voice, call, since, requests, { at, ssrc: before.get(call.voice) });
          await until(() => outcome().wholeTimes.every((n) => n >= 1), timeoutMs, `${call.name}'s requests heard whole`).catch(
            () => undefined,
          );
          const resumed = voice.packets.find(
            (p) => p.channelId === call.voice && !p.silent && p.receivedAt > at && p.ssrc !== before.get(call.voice),
          );
          return { ...outcome(), resumedMs: resumed ? resumed.receivedAt - at : undefined };
        }),
      );
    },
    async speak(call, text, on = voice) {
      const since = epochNow();
      const asked = botTexts().length;
      await discord.sendMessage({ channelId: call.text, author: call.listener, content: text });
      const requested = await until(
        () =>
          botTexts()
            .slice(asked)
            .find((t) => t.includes(text)),
        20_000,
        `"${text}" requested`,
      );
      const requests = [{ text: requested, clipMs: await lengthOf(requested) }];
      const outcome = () => account(on, call, since, requests, { at: Infinity, ssrc: undefined });
      await until(() => outcome().wholeTimes[0]! >= 1, 20_000, `"${text}" heard whole in ${call.name}`);
      return { ...outcome(), resumedMs: undefined };
    },
    async close() {
      await bot.stop('SIGKILL');
      await Promise.all([emulator.close(), discord.close(), voice.close(), otherVoice.close()]);
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(faultDir, { recursive: true, force: true });
    },
  };
  return world;
}

/** The ssrc that last sent sound in `channelId`. */
function lastSsrc(voice: FakeVoiceServer, channelId: string): number | undefined {
  return voice.packets.findLast((p) => p.channelId === channelId && !p.silent)?.ssrc;
}

/**
 * What `call` heard since `since`, against the requests made for it, clip by clip: each run of a
 * voice session's packets up to its speaking off is one clip played, as long as its decoded frames
 * (@discordjs/voice's own silence frames aside). One within 100 ms of a request's length is that
 * request heard whole; the clip the fault cut (its voice session's, sounding at the fault), or any
 * other, is partial.
 */
function account(
  voice: FakeVoiceServer,
  call: Call,
  since: number,
  requests: Array<{ text: string; clipMs: number }>,
  cut: { at: number; ssrc: number | undefined },
): Omit<CallOutcome, 'resumedMs'> {
  const packets = voice.packets.filter((p) => p.channelId === call.voice && p.receivedAt >= since);
  const clips = Map.groupBy(packets, (p) => `${p.ssrc}:${p.speakingOffCount}`);
  const wholeTimes = requests.map(() => 0);
  const partial: number[] = [];
  const e2ee: string[] = [];
  const speaking = new Map(voice.sessions.map((s) => [s.ssrc, s.speakingOffCount]));
  for (const clip of clips.values()) {
    const frames = clip.filter((p) => !p.frame.equals(OPUS_SILENCE_FRAME));
    if (!frames.some((p) => !p.silent)) continue;
    const first = clip[0]!;
    const last = clip.at(-1)!;
    // Still playing (its voice session has not said speaking off since): not judged yet.
    if (speaking.get(first.ssrc) === first.speakingOffCount && last.ssrc !== cut.ssrc) continue;
    const ms = decodedMs(frames);
    const wasCut = first.ssrc === cut.ssrc && last.receivedAt >= cut.at - 100;
    const i = wasCut ? -1 : requests.findIndex((r) => Math.abs(ms - r.clipMs) <= 100);
    if (i < 0) {
      partial.push(Math.round(ms));
      continue;
    }
    wholeTimes[i]!++;
    e2ee.push(...e2eeProblems(frames, [call.listener.id]));
  }
  return { call: call.name, requests, wholeTimes, partial, e2ee };
}
