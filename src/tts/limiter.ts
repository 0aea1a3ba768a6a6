/** The two rate budgets of the service (spec: Limits): 30 standard / 10 advanced per 60 s per IP. */
export type RateKind = 'standard' | 'advanced';

export const RATE_LIMITS = {
  standard: { limit: 30, windowMs: 60_000 },
  advanced: { limit: 10, windowMs: 60_000 },
} as const satisfies Record<RateKind, { limit: number; windowMs: number }>;

export interface AcquireOptions {
  /** Who the request is for (a guild id); limiters that are fair hand out grants round-robin by key. */
  key?: string;
  signal?: AbortSignal;
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
