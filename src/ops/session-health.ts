// How well each voice session reads its chat lately: of the auto-read messages whose fate was
// decided in its call over the last few minutes, the share heard within 20 s of being written, and
// the 95th percentile of the wait to be heard. A message dropped as too old, or whose speech
// failed, counts as not heard; one refused for a member's limit, skipped or cleared by a member does
// not count (the call was not at fault). /metrics, the dashboard and /diagnose read it.

/** The window the figures cover. */
export const HEALTH_WINDOW_MS = 5 * 60_000;
/** "Heard within" this long of being written. */
const HEARD_WITHIN_MS = 20_000;
/** Fewer messages than this in the window say little: such a session is not judged unhealthy. */
const HEALTH_MIN_MESSAGES = 5;
/** A session hearing fewer than this share within 20 s is unhealthy (with at least HEALTH_MIN_MESSAGES). */
const HEALTHY_RATIO = 0.8;

/** One voice session's figures over the window. */
export interface SessionFigures {
  guildId: string;
  /** Its voice channel. */
  channelId: string;
  /** Messages whose fate was decided in the window: heard, or not (dropped, failed). */
  messages: number;
  /** Of those, heard within HEARD_WITHIN_MS. */
  heardWithin: number;
  /** heardWithin / messages; null without messages. */
  ratio: number | null;
  /** The 95th percentile of the wait of those heard (ms); null when none was heard. */
  p95WaitMs: number | null;
}

interface Sample {
  at: number;
  /** Wait until heard; null: not heard. */
  waitMs: number | null;
}

/** At most this many samples per session (the newest). */
const MAX_SAMPLES = 2_000;

/** Per-session samples of the last HEALTH_WINDOW_MS. */
export class SessionHealth {
  readonly #windowMs: number;
  readonly #sessions = new Map<string, { guildId: string; channelId: string; samples: Sample[] }>();

  constructor(options: { windowMs?: number } = {}) {
    this.#windowMs = options.windowMs ?? HEALTH_WINDOW_MS;
  }

  /** A message was heard in the session of `channelId`, `waitMs` after it was written. */
  heard(guildId: string, channelId: string, waitMs: number, at: number): void {
    this.#add(guildId, channelId, { at, waitMs: Math.max(0, waitMs) });
  }

  /** A message meant for the session of `channelId` was never heard (dropped as too old, failed). */
  missed(guildId: string, channelId: string, at: number): void {
    this.#add(guildId, channelId, { at, waitMs: null });
  }

  /** The figures of one session at `now`. */
  of(guildId: string, channelId: string, now: number): SessionFigures {
    const entry = this.#sessions.get(`${guildId}:${channelId}`);
    return figures(guildId, channelId, entry ? this.#recent(entry.samples, now) : []);
  }

  /** The figures of every session with a message in the window at `now` (others are forgotten). */
  all(now: number): SessionFigures[] {
    const out: SessionFigures[] = [];
    for (const [k, entry] of this.#sessions) {
      const recent = this.#recent(entry.samples, now);
      if (recent.length === 0) this.#sessions.delete(k);
      else out.push(figures(entry.guildId, entry.channelId, recent));
    }
    return out;
  }

  #add(guildId: string, channelId: string, sample: Sample): void {
    const k = `${guildId}:${channelId}`;
    let entry = this.#sessions.get(k);
    if (!entry) this.#sessions.set(k, (entry = { guildId, channelId, samples: [] }));
    entry.samples.push(sample);
    if (entry.samples.length > MAX_SAMPLES) entry.samples.splice(0, entry.samples.length - MAX_SAMPLES);
  }

  /** The samples inside the window (older ones are dropped). */
  #recent(samples: Sample[], now: number): Sample[] {
    const since = now - this.#windowMs;
    let stale = 0;
    while (stale < samples.length && samples[stale]!.at < since) stale++;
    if (stale > 0) samples.splice(0, stale);
    return samples;
  }
}

function figures(guildId: string, channelId: string, samples: readonly Sample[]): SessionFigures {
  const waits = samples.flatMap((s) => (s.waitMs === null ? [] : [s.waitMs])).sort((a, b) => a - b);
  const heardWithin = waits.filter((w) => w <= HEARD_WITHIN_MS).length;
  return {
    guildId,
    channelId,
    messages: samples.length,
    heardWithin,
    ratio: samples.length > 0 ? heardWithin / samples.length : null,
    // Nearest rank: the smallest wait at or above 95% of those heard.
    p95WaitMs: waits.length > 0 ? waits[Math.ceil(0.95 * waits.length) - 1]! : null,
  };
}

/** A session hearing too little of its chat in time (with enough messages to judge). */
export function unhealthy(f: SessionFigures): boolean {
  return f.messages >= HEALTH_MIN_MESSAGES && f.ratio !== null && f.ratio < HEALTHY_RATIO;
}
