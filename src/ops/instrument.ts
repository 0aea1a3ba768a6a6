import type { Charge } from '../billing/ledger.ts';
import type { SpeechScheduler } from '../speech/queue/scheduler.ts';
import { audienceOf, type ReadyUtterance, type Sink, type Utterance } from '../speech/queue/utterance.ts';
import type { SessionClipStarted } from '../voice/manager.ts';
import type { BotMetrics, MessageOutcome } from './metrics.ts';
import type { SessionHealth } from './session-health.ts';

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
interface SinkMeterDeps {
  metrics: BotMetrics;
  /** The voice layer's 'clipStarted' (first packet of a clip sent, in which session's call). */
  voice: { on(event: 'clipStarted', listener: (started: SessionClipStarted) => void): unknown };
  /** Clock time, as the scheduler stamps `enqueuedAt`. */
  now: () => number;
  /** Each voice session's heard-within-20-s share and wait (session-health.ts). */
  health?: SessionHealth;
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
  const { metrics, now, health } = deps;
  // One delivery per audience at a time (the scheduler's single advancing point): keyed by the
  // guild and the voice channel it plays in (a server may have a session in several).
  const awaiting = new Map<string, { items: readonly Utterance[]; started: boolean }>();
  deps.voice.on('clipStarted', ({ guildId, channelId, ms }) => {
    metrics.firstPacket(ms / 1000);
    const clip = awaiting.get(`${guildId}:${channelId}`);
    if (!clip || clip.started) return;
    clip.started = true;
    waited(clip.items, now(), true);
  });
  const waited = (items: readonly Utterance[], at: number, inVoice: boolean) => {
    for (const u of items) {
      metrics.waited((at - u.enqueuedAt) / 1000);
      const channelId = inVoice ? voiceChannelOf(u) : null;
      if (channelId && isChat(u)) health?.heard(u.guildId, channelId, at - u.enqueuedAt, at);
    }
  };
  return async (ready, signal) => {
    if (ready.error) {
      const refused = ready.error.code === 'budget_refused';
      metrics.messages(refused ? 'refused' : 'failed', ready.items.length);
      // A member's limit is not the call's fault; speech that could not be made is a message not heard.
      if (!refused) missed(health, ready.items, now());
      await deliver(ready, signal);
      return;
    }
    for (const part of ready.audio.parts ?? [ready.audio]) metrics.cache(part.fromCache);
    const clip = { items: ready.items, started: false };
    const key = `${ready.guildId}:${voiceChannelOf(ready.items[0]!) ?? ''}`;
    awaiting.set(key, clip);
    const startedAt = now();
    let delivered: Delivered | undefined;
    try {
      delivered = await deliver(ready, signal);
    } finally {
      if (awaiting.get(key) === clip) awaiting.delete(key);
      const outcome = outcomeOf(delivered, clip.started, signal);
      if (outcome) metrics.messages(outcome, ready.items.length);
      if (outcome === 'spoken') {
        metrics.merged(ready.items.length - 1);
        // Not played (attached only): the clip starts for its listeners when it is posted.
        if (!clip.started) waited(ready.items, delivered?.played ? startedAt : now(), delivered?.played === true);
      } else if (outcome === 'failed') missed(health, ready.items, now());
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

/** Counts what the scheduler drops or clears without delivering it (a drop as too old is chat its call did not hear). */
export function meterScheduler(
  scheduler: Pick<SpeechScheduler, 'on'>,
  metrics: BotMetrics,
  options: { health?: SessionHealth; now?: () => number } = {},
): void {
  scheduler.on('dropped', ({ items }) => {
    metrics.messages('dropped_stale', items.length);
    missed(options.health, items, options.now?.() ?? Date.now());
  });
  scheduler.on('cleared', ({ items }) => metrics.messages('skipped', items.length));
}

/** The voice channel a voice audience's utterance was queued for, or null. */
function voiceChannelOf(u: Utterance): string | null {
  const audience = audienceOf(u);
  return audience.startsWith('voice:') ? audience.slice('voice:'.length) : null;
}

/** Chat read aloud (auto-read), not the bot's own clips (announcements). */
function isChat(u: Utterance): boolean {
  return u.kind === 'auto' && !(u.meta as { botClip?: boolean } | undefined)?.botClip;
}

/** Chat meant for a voice session that was never heard there. */
function missed(health: SessionHealth | undefined, items: readonly Utterance[], at: number): void {
  for (const u of items) {
    const channelId = voiceChannelOf(u);
    if (health && channelId && isChat(u)) health.missed(u.guildId, channelId, at);
  }
}

/** The budget's onCharged: account characters by endpoint. */
export function meterCharges(metrics: BotMetrics): (charges: readonly Charge[]) => void {
  return (charges) => {
    for (const c of charges) metrics.charged(c.endpoint, c.chars);
  };
}
