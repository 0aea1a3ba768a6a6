// The rate window's shapes: what a grant decision (pacing.ts) reads and answers, and what a process
// tells the others sharing the window. Declared here, by the limiter; the stores (src/db/rate-window.ts
// in SQLite, postgres.ts) keep them.

/** One audience waiting for a grant: its key and since when its oldest waiter waits. */
export interface Demand {
  key: string;
  since: number;
  /**
   * What a grant buys it now: the speech still fresh that would ride on it (pacing.ts `grantOrder`).
   * Absent where unknown (another process's demand: the stores keep only key and since).
   */
  worth?: number;
}

/** A grant still inside the window. */
export interface WindowGrant {
  at: number;
  key: string;
}

/** What a grant decision reads from the store, in one transaction. */
export interface WindowSnapshot {
  /** Grants inside the window, oldest first (some may be stamped after `now`: another process's clock read). */
  grants: readonly WindowGrant[];
  /** Nothing may be granted before this time (0 when never blocked). */
  blockedUntil: number;
  /** Live demand of other processes sharing the store (empty for an in-process store). */
  others: readonly Demand[];
  /** Per key, the id of its latest grant still remembered (ids grow with every grant). */
  lastGrant: ReadonlyMap<string, number>;
}

export type GrantDecision = { ok: true; key: string } | { ok: false; retryInMs: number };

/** What one process tells the others when it looks at the window: who it has waiting. */
export interface DemandReport {
  owner: string;
  waiting: readonly Demand[];
  /** Other processes' demand not refreshed since this time is ignored (and pruned). */
  liveSince: number;
  /** false: only read the others' demand (a one-off look), leave this process's rows as they are. */
  record?: boolean;
}
