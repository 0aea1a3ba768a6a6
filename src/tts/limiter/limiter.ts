/** The two rate budgets of the service (spec: Limits): 30 standard / 10 advanced per 60 s per IP. */
export type RateKind = 'standard' | 'advanced';

export const RATE_LIMITS = {
  standard: { limit: 30, windowMs: 60_000 },
  advanced: { limit: 10, windowMs: 60_000 },
} as const satisfies Record<RateKind, { limit: number; windowMs: number }>;

/**
 * Permission to send one request, handed out before the request is formed (a guild's
 * batch is formed once the grant is in hand, so the backlog built during the wait rides along).
 * It is spent by the first `acquire` that carries it, or given back unused.
 */
export interface RateGrant {
  readonly kind: RateKind;
  /** Marks the grant spent; false when it already was, or was given back. */
  use(): boolean;
  /** Gives the grant back unused (nothing needed a request after all): its slot frees. No-op once spent. */
  release(): void;
}

export interface AcquireOptions {
  /** Who the request is for (an audience, or a guild id); limiters that are fair order grants by key. */
  key?: string | undefined;
  /**
   * What a grant would buy this key now (the speech still fresh that would ride on it), asked each
   * time grants are handed out: the fair limiter grants where it buys the most (pacing.ts `grantOrder`).
   */
  worth?: (() => number) | undefined;
  signal?: AbortSignal | undefined;
  /** A grant already in hand: spent instead of waiting (once; a retry waits as usual). */
  grant?: RateGrant | undefined;
}

/**
 * Permission to send one request to the service. The client calls `acquire` before every attempt
 * (retries included) and `block` when the service says to wait (`reset_in`, `retry_after`).
 */
export interface RateLimiter {
  /** Resolves once one request of `kind` may be sent; the grant is counted as a request sent. */
  acquire(kind: RateKind, options?: AcquireOptions): Promise<void>;
  /** The service asked us to wait: send nothing of `kind` for `ms`. */
  block(kind: RateKind, ms: number): void;
}

/** A limiter that hands out grants ahead of the request (the scheduler's side of the budget). */
export interface GrantingLimiter extends RateLimiter {
  /** Resolves with a grant for `options.key` when its turn comes; rejects with the signal's reason on abort. */
  reserve(kind: RateKind, options?: Omit<AcquireOptions, 'grant'>): Promise<RateGrant>;
  /** A grant at once when one is to spare now (nobody else waiting, the window nearly empty), else null. */
  tryReserve(kind: RateKind, options?: Pick<AcquireOptions, 'key'>): Promise<RateGrant | null>;
  /** Whether requests of `kind` are scarce now: the window is full or someone waits for a grant. */
  pressured(kind: RateKind): boolean;
}
