/**
 * The two modes of `npm run bench:queue` as they replay a trace, whatever serves them (the emulator
 * on a scaled clock, bench-queue.ts, or the service model in virtual time, bench-queue-sim.ts):
 *
 *   scheduler  the bot's SpeechScheduler with the fair, paced limiter and a synthesizer;
 *   naive      what common read-aloud bots do: one request per message as it arrives, played in
 *              arrival order by its voice channel's player, no merging, no cache, no limiter.
 */
import type { SchedulerOptions } from '../src/speech/queue/options.ts';
import { SpeechScheduler } from '../src/speech/queue/scheduler.ts';
import type { Synthesizer } from '../src/speech/synthesis/synthesize.ts';
import type { FairRateLimiter } from '../src/tts/limiter/fair.ts';
import type { Clock } from '../src/util/clock.ts';
import { wordStarts } from './bench-queue-report.ts';
import { emptyOutcome, type Outcome } from './bench-queue-stats.ts';
import { asInput, type TraceMessage } from './bench-queue-traces.ts';

/** Sleeps on `clock` until each message's time and hands it over. */
async function replay(
  trace: readonly TraceMessage[],
  clock: Clock,
  onMessage: (m: TraceMessage, arrivedAt: number) => void,
): Promise<void> {
  const t0 = clock.now();
  for (const m of trace) {
    const wait = t0 + m.at_ms - clock.now();
    if (wait > 0) await clock.sleep(wait);
    onMessage(m, clock.now());
  }
}

/** Resolves once `cond` holds (the caller's way of letting time pass: real polling, or a virtual clock's run). */
export type Until = (cond: () => boolean, what: string) => Promise<void>;

interface SchedulerRun {
  clock: Clock;
  limiter: FairRateLimiter;
  synth: Synthesizer;
  until: Until;
  /** Options for the scheduler beyond its collaborators (the bench's sensitivity mode varies its policy). */
  options?: Partial<SchedulerOptions>;
  debug?: (...a: unknown[]) => void;
  /** Filled before the trace starts (`--names-cached`). */
  outcome?: Outcome;
}

/** Replays `trace` through the scheduler; each audience's player speaks one thing at a time, as long as the audio lasts. */
export async function driveScheduler(trace: readonly TraceMessage[], run: SchedulerRun): Promise<Outcome> {
  const { clock, limiter, synth } = run;
  const o = run.outcome ?? emptyOutcome();
  const debug = run.debug ?? (() => {});
  const q = new SpeechScheduler({ ...run.options, synthesize: synth, clock, limiter });
  const audienceOf = new Map(trace.map((m) => [m.index, m.audience]));
  let settled = 0;
  q.on('ready', ({ guildId, ready }) => debug('ready', guildId, ready.items.length, ready.audio?.durationMs, ready.error?.code ?? ''));
  q.on('dropped', ({ items, guildId, at }) => {
    debug('dropped', guildId, items.length, at);
    o.droppedStale += items.length;
    if (at === 'speaking') o.droppedSpeaking += items.length;
    const now = clock.now();
    for (const u of items) o.droppedAt.set(u.meta as number, now);
    settled += items.length;
  });
  q.setDefaultSink(async (r, signal) => {
    const at = clock.now();
    const offsets = r.audio ? wordStarts(r, r.audio.durationMs) : [];
    r.items.forEach((u, i) => {
      const index = u.meta as number;
      if (r.error) o.failed++;
      else {
        o.spoken++;
        o.waits.set(index, at + offsets[i]! - o.arrived.get(index)!);
      }
      settled++;
    });
    if (r.audio && !r.error) {
      // Each request read after the first message it carries costs a pause: count them (clips from the cache cost nothing).
      const clips = r.audio.parts ?? [r.audio];
      const carries = r.carries ?? [r.items];
      clips.forEach((c, k) => {
        if (!c.fromCache) o.merged += Math.max(0, carries[k]!.length - 1);
      });
    }
    if (r.audio) {
      const audience = audienceOf.get(r.items[0]!.meta as number)!;
      const plays = o.plays.get(audience) ?? [];
      plays.push([at, at + r.audio.durationMs]);
      o.plays.set(audience, plays);
      await clock.sleep(r.audio.durationMs, signal).catch(() => {});
    }
  });
  let replayed = false;
  const replaying = replay(trace, clock, (m, now) => {
    o.arrived.set(m.index, now);
    const r = q.enqueue(asInput(m));
    if (!r.ok) {
      o.refused++;
      settled++;
    }
  }).then(() => void (replayed = true));
  try {
    await run.until(() => replayed && settled === trace.length, 'scheduler mode');
    await replaying;
  } finally {
    q.close();
  }
  return o;
}

/**
 * What common read-aloud bots do (one request per message as it arrives, played in arrival order
 * by the voice player of its channel; no merging, no cache, no limiter of their own). `audio` makes
 * one message's audio and says how long it lasts (it rejects when the request was given up).
 */
export async function driveNaive(
  trace: readonly TraceMessage[],
  run: { clock: Clock; until: Until; audio: (m: TraceMessage) => Promise<number> },
): Promise<Outcome> {
  const { clock } = run;
  const o = emptyOutcome();
  const players = new Map<string, Promise<void>>();
  let settled = 0;
  let replayed = false;
  const replaying = replay(trace, clock, (m, arrivedAt) => {
    o.arrived.set(m.index, arrivedAt);
    // Synthesised as soon as the message arrives, played in arrival order per voice channel.
    const audio = run.audio(m);
    audio.catch(() => {});
    const previous = players.get(m.audience) ?? Promise.resolve();
    players.set(
      m.audience,
      previous.then(async () => {
        try {
          const durationMs = await audio;
          const at = clock.now();
          o.spoken++;
          o.waits.set(m.index, at - arrivedAt);
          const plays = o.plays.get(m.audience) ?? [];
          plays.push([at, at + durationMs]);
          o.plays.set(m.audience, plays);
          await clock.sleep(durationMs);
        } catch {
          o.failed++;
        } finally {
          settled++;
        }
      }),
    );
  }).then(() => void (replayed = true));
  await run.until(() => replayed && settled === trace.length, 'naive mode');
  await replaying;
  return o;
}
