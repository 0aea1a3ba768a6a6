/** How a voice worker's liveness is judged (src/voice/worker-pool.ts). */
interface LivenessPolicy {
  /** How often it is asked whether it is there. */
  pingEveryMs: number;
  /** No answer for this long, once it answered before: hung. */
  hangAfterMs: number;
  /** No first answer for this long after its start (it is loading): hung. */
  startupGraceMs: number;
}

/**
 * Whether one voice worker answers: the pool ticks it every `pingEveryMs` and tells it each answer;
 * a tick says whether to ping it or that it is hung. A tick that comes late (this thread was busy:
 * a stall, a long GC, and the answer may be waiting in its queue) starts the wait over, so a worker
 * is judged hung only for a silence this thread could have heard.
 */
export class WorkerLiveness {
  readonly #policy: LivenessPolicy;
  readonly #startedAt: number;
  #answered = false;
  /** Since when a ping waits for its answer (undefined: none waits). */
  #waitingSince: number | undefined;
  #lastTick: number;

  constructor(policy: LivenessPolicy, startedAt: number) {
    this.#policy = policy;
    this.#startedAt = startedAt;
    this.#lastTick = startedAt;
  }

  /** The worker said something (any message): it is there. */
  answered(): void {
    this.#answered = true;
    this.#waitingSince = undefined;
  }

  /** At a tick (`now`, ms): 'ping' to ask it (again), or 'hung' when it has been silent too long. */
  tick(now: number): 'ping' | 'hung' {
    const late = now - this.#lastTick > 4 * this.#policy.pingEveryMs;
    this.#lastTick = now;
    if (late && this.#waitingSince !== undefined) this.#waitingSince = now;
    const silentMs = now - (this.#answered ? (this.#waitingSince ?? now) : this.#startedAt);
    if (silentMs >= (this.#answered ? this.#policy.hangAfterMs : this.#policy.startupGraceMs)) return 'hung';
    this.#waitingSince ??= now;
    return 'ping';
  }

  /** How long it has been silent at `now` (for the log). */
  silentFor(now: number): number {
    return now - (this.#answered ? (this.#waitingSince ?? now) : this.#startedAt);
  }
}
