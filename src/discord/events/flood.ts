import { FLOOD_LIMITS } from '../../domain/filters.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import type { UtteranceInput } from '../../speech/queue/utterance.ts';
import { WORDS, type ReadLang } from '../../speech/text/words.ts';
import type { Clock } from '../../util/clock.ts';
import type { Logger } from '../../util/log.ts';

// The flood limit (/filter flood): a member's messages read one by one are at most the server's
// limit in any 10 s; those past it are not sent to the service at all, only counted, and once the
// member pauses one line says how many ("Aliceさんの連投3件を省略しました。"), in the audience the
// last of them was for. The summary reads no message's text, only the member's name as it is read
// before their messages, and is paid like their messages: by its author.

/** The summary of one member's flood as it will be queued: everything but its text, and how it names them. */
export interface FloodSummary {
  input: Omit<UtteranceInput, 'text'>;
  lang: ReadLang;
  /** The member's name as spoken (the server's dictionary and filters applied); '' when it has none. */
  name: string;
}

const FLOOD_DEFAULTS = {
  /** The summary is spoken once the member wrote nothing past the limit for this long… */
  quietMs: 2_000,
  /** …or at the latest this long after the first message it counts (a flood that does not stop is summarised every window). */
  longestMs: FLOOD_LIMITS.windowMs,
  /** Members remembered at most (their counts are forgotten oldest first past it). */
  maxKeys: 100_000,
} as const;

/** Counts each member's messages in the window, and summarises those past the limit. */
export class FloodGate {
  readonly #scheduler: SpeechScheduler;
  readonly #clock: Clock;
  readonly #logger: Logger | undefined;
  readonly #o: { quietMs: number; longestMs: number; maxKeys: number };
  /** guild:member -> when their messages read one by one were written, oldest first (within the window). */
  readonly #read = new Map<string, number[]>();
  /** guild:member:audience -> the summary being counted. */
  readonly #pending = new Map<string, { summary: FloodSummary; count: number; firstAt: number; lastAt: number }>();
  readonly #closed = new AbortController();

  constructor(options: {
    scheduler: SpeechScheduler;
    clock: Clock;
    logger?: Logger;
    quietMs?: number | undefined;
    longestMs?: number | undefined;
    maxKeys?: number;
  }) {
    this.#scheduler = options.scheduler;
    this.#clock = options.clock;
    this.#logger = options.logger;
    this.#o = {
      quietMs: options.quietMs ?? FLOOD_DEFAULTS.quietMs,
      longestMs: options.longestMs ?? FLOOD_DEFAULTS.longestMs,
      maxKeys: options.maxKeys ?? FLOOD_DEFAULTS.maxKeys,
    };
  }

  /**
   * One message of the member that would be read: counted and false while the member has had fewer
   * than `max` read in the window (null: no limit), else true (not counted: it is summarised instead).
   */
  over(guildId: string, userId: string, max: number | null): boolean {
    if (max === null) return false;
    const key = `${guildId}:${userId}`;
    const now = this.#clock.now();
    const times = (this.#read.get(key) ?? []).filter((at) => at > now - FLOOD_LIMITS.windowMs);
    if (times.length >= max) {
      this.#read.set(key, times);
      return true;
    }
    times.push(now);
    this.#read.delete(key);
    this.#read.set(key, times);
    for (const [k, kept] of this.#read) {
      if (this.#read.size <= this.#o.maxKeys && kept[kept.length - 1]! > now - FLOOD_LIMITS.windowMs) break;
      this.#read.delete(k);
    }
    return false;
  }

  /** A message past the limit: counted in its member's summary for `summary.input.audience`, spoken once they pause. */
  count(summary: FloodSummary): void {
    if (this.#closed.signal.aborted) return;
    const key = `${summary.input.guildId}:${summary.input.userId}:${summary.input.audience ?? ''}`;
    const now = this.#clock.now();
    const pending = this.#pending.get(key);
    if (pending) {
      pending.count++;
      pending.lastAt = now;
      pending.summary = summary; // the latest message's channel and voice
      return;
    }
    this.#pending.set(key, { summary, count: 1, firstAt: now, lastAt: now });
    void this.#speakWhenQuiet(key);
  }

  /** Pending summaries (for tests and /diagnose-like questions). */
  get pending(): number {
    return this.#pending.size;
  }

  /** Stops: summaries not yet spoken are dropped (the messages they count were never accepted). */
  close(): void {
    this.#closed.abort();
    this.#pending.clear();
  }

  async #speakWhenQuiet(key: string): Promise<void> {
    for (;;) {
      const pending = this.#pending.get(key);
      if (!pending) return;
      const now = this.#clock.now();
      const due = Math.min(pending.lastAt + this.#o.quietMs, pending.firstAt + this.#o.longestMs);
      if (now >= due) break;
      try {
        await this.#clock.sleep(due - now, this.#closed.signal);
      } catch {
        return; // closed
      }
    }
    const pending = this.#pending.get(key)!;
    this.#pending.delete(key);
    const { summary, count } = pending;
    const result = this.#scheduler.enqueue({ ...summary.input, text: WORDS[summary.lang].floodSummary(summary.name, count) });
    if (!result.ok) this.#logger?.info({ guildId: summary.input.guildId, reason: result.reason }, 'flood summary not queued');
  }
}
