import type { Charge } from '../billing/ledger.ts';
import type { ReadyUtterance, SpeechScheduler, Sink, Utterance } from '../speech/queue.ts';
import type { ClipStarted } from '../voice/session.ts';
import type { BotMetrics, MessageOutcome } from './metrics.ts';

// Where the bot's collaborators meet its metrics. Each hook sits at the one place a
// fact is final, so every message is counted once by how it ended:
// - refused before it was queued: the auto-reader and /say, /narrate tell (onNotQueued, onRefused);
// - dropped as stale or cleared (/clear, /leave, /skip of queued speech): the scheduler's events;
// - everything delivered: the scheduler's sink, wrapped here (spoken, refused by the budget while
//   being made, failed, or skipped before its first packet). A delivery cut short by a shutdown is
//   not counted: it is delivered again after the restart.

/** Where one ready utterance's audio went (src/discord/delivery/delivery.ts answers it). */
export interface Delivered {
  played: boolean;
  attached: boolean;
}

/** What the metered sink listens to and reads. */
export interface SinkMeterDeps {
  metrics: BotMetrics;
  /** The voice layer's 'clipStarted' (first packet of a clip sent). */
  voice: { on(event: 'clipStarted', listener: (started: ClipStarted) => void): unknown };
  /** Clock time, as the scheduler stamps `enqueuedAt`. */
  now: () => number;
}

/**
 * The scheduler's sink around `deliver`: counts each delivered message's outcome, merged messages,
 * the wait from arrival to the start of the clip (its first voice packet; its attachment when it
 * is not played), the first-packet time, and each clip as a cache hit or miss. Counted here, where
 * the audio arrives, because the scheduler takes cached clips straight from the cache (its
 * synthesizer's `lookup`) without asking the synthesizer to make them.
 */
export function meteredSink(
  deliver: (ready: ReadyUtterance, signal: AbortSignal) => Promise<Delivered | undefined>,
  deps: SinkMeterDeps,
): Sink {
  const { metrics, now } = deps;
  // One delivery per guild at a time (the scheduler's single advancing point): keyed by guild.
  const awaiting = new Map<string, { items: readonly Utterance[]; started: boolean }>();
  deps.voice.on('clipStarted', ({ guildId, ms }) => {
    metrics.firstPacket(ms / 1000);
    const clip = awaiting.get(guildId);
    if (!clip || clip.started) return;
    clip.started = true;
    waited(clip.items, now());
  });
  const waited = (items: readonly Utterance[], at: number) => {
    for (const u of items) metrics.waited((at - u.enqueuedAt) / 1000);
  };
  return async (ready, signal) => {
    if (ready.error) {
      metrics.messages(ready.error.code === 'budget_refused' ? 'refused' : 'failed', ready.items.length);
      await deliver(ready, signal);
      return;
    }
    for (const part of ready.audio.parts ?? [ready.audio]) metrics.cache(part.fromCache);
    const clip = { items: ready.items, started: false };
    awaiting.set(ready.guildId, clip);
    const startedAt = now();
    let delivered: Delivered | undefined;
    try {
      delivered = await deliver(ready, signal);
    } finally {
      if (awaiting.get(ready.guildId) === clip) awaiting.delete(ready.guildId);
      const outcome = outcomeOf(delivered, clip.started, signal);
      if (outcome) metrics.messages(outcome, ready.items.length);
      if (outcome === 'spoken') {
        metrics.merged(ready.items.length - 1);
        // Not played (attached only): the clip starts for its listeners when it is posted.
        if (!clip.started) waited(ready.items, delivered?.played ? startedAt : now());
      }
    }
  };
}

function outcomeOf(delivered: Delivered | undefined, started: boolean, signal: AbortSignal): MessageOutcome | undefined {
  const reason = signal.reason as { code?: string } | undefined;
  if (signal.aborted && reason?.code === 'closed') return started ? 'spoken' : undefined;
  if (started || delivered?.attached) return 'spoken';
  if (signal.aborted) return 'skipped';
  return delivered?.played ? 'spoken' : 'failed';
}

/** Counts what the scheduler drops or clears without delivering it. */
export function meterScheduler(scheduler: Pick<SpeechScheduler, 'on'>, metrics: BotMetrics): void {
  scheduler.on('dropped', ({ items }) => metrics.messages('dropped_stale', items.length));
  scheduler.on('cleared', ({ items }) => metrics.messages('skipped', items.length));
}

/** The budget's onCharged: account characters by endpoint. */
export function meterCharges(metrics: BotMetrics): (charges: readonly Charge[]) => void {
  return (charges) => {
    for (const c of charges) metrics.charged(c.endpoint, c.chars);
  };
}
