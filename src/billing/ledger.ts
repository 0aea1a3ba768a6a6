// The character ledger's domain (docs/operating.md, "Characters are money"): what a charge is, the states a
// possible charge by the service goes through, and what the budget asks of a store. src/db keeps
// it in SQL (src/db/sqlite-ledger.ts, pooled-ledger.ts); the rules are policy.ts, the requests' side of
// it attempts.ts.

/** The service's two endpoints that charge characters. */
export type Endpoint = 'standard' | 'advanced';

/**
 * Where one possible charge by the service stands. A reservation is `held` (its characters count,
 * nothing has left for the service: a crash releases it), then `sent` (an attempt left: a crash
 * leaves it uncertain), and ends in exactly one of `charged` (the service charged it), `uncertain`
 * (it may have: counted like charged, never refunded by guesswork) or `released` (nothing was
 * charged, or the service gave it back).
 */
export type ChargeState = 'held' | 'sent' | 'charged' | 'uncertain' | 'released';

/** The states a charge ends in. */
export type SettledState = Exclude<ChargeState, 'held' | 'sent'>;

/**
 * Where a hold settles when the service may have charged it (aborted in flight, 5xx, timeout):
 * uncertain, unless its audio is already paid for (the account's history serves a repeat free).
 */
export function settleMaybeCharged(audioPaid: boolean): SettledState {
  return audioPaid ? 'released' : 'uncertain';
}

/** Where a hold (held or sent) left by a crashed process settles: released if nothing was sent, else as maybe charged. */
export function settleStale(state: ChargeState, audioPaid: boolean): SettledState {
  return state === 'sent' ? settleMaybeCharged(audioPaid) : 'released';
}

/** Whether a failed job's charge in `state` is given back (the service refunds what it charged). */
export function refundable(state: ChargeState): boolean {
  return state === 'charged' || state === 'uncertain';
}

/** One author's share of a request (a coalesced request charges several authors at once). */
export interface Charge {
  guildId: string;
  userId: string;
  endpoint: Endpoint;
  /** Counted by the caller with `countChars` (src/tts/chars.ts). */
  chars: number;
  /**
   * The text channels these characters were spent for, split exactly (the parts sum to `chars`):
   * a request merging several channels' messages. Absent: no channel (shown as other/unknown).
   */
  channels?: readonly ChannelChars[];
}

/** A charge's characters spent for one text channel. */
interface ChannelChars {
  channelId: string;
  chars: number;
}

/** Characters held for one possible charge by the service. Plain data: another process may settle it. */
export interface Reservation {
  readonly id: string;
  readonly periodStart: number;
  readonly charges: readonly Charge[];
  readonly total: number;
  readonly createdAt: number;
  /** Standard requests: the audio's cache key, to recognise history repeats. */
  readonly audioKey?: string;
  /** A repeat of audio the account already paid for: the service serves it free, nothing is held. */
  readonly free?: boolean;
}

export interface Period {
  start: number;
  end: number;
}

/** Characters counted against the limits (reserved + charged + uncertain) in each scope this period. */
export interface ScopeUsage {
  user(guildId: string, userId: string): number;
  guild(guildId: string): number;
  account(): number;
}

/** A scope's totals this period, by endpoint. */
export interface EndpointTotals {
  endpoint: Endpoint;
  reserved: number;
  charged: number;
  uncertain: number;
}

export type ReserveOutcome<R> = { ok: true; reservation: Reservation } | { ok: false; refusal: R };

/**
 * What the budget asks of a ledger: every operation atomic on its own, every total moved by
 * deltas. Implemented in SQL by src/db: SqliteLedger (this host) and PooledLedger (an account
 * shared by several hosts through PostgreSQL).
 */
export interface LedgerStore {
  usage(period: Period): Promise<ScopeUsage>;
  reserve<R>(
    request: { charges: readonly Charge[]; period: Period; now: number; staleBefore: number; audioKey?: string },
    refuse: (usage: ScopeUsage) => R | undefined,
  ): Promise<ReserveOutcome<R>>;
  markSent(reservation: Reservation, now: number): Promise<boolean>;
  charge(reservation: Reservation, info: { pk?: number; jobId?: string }, now: number): Promise<'charged' | 'free'>;
  uncertain(reservation: Reservation, now: number): Promise<void>;
  release(reservation: Reservation, now: number): Promise<void>;
  refundJob(jobId: string, now: number): Promise<boolean>;
  recordJobCharge(jobId: string, charges: readonly Charge[], period: Period, now: number): Promise<boolean>;
  settleStale(before: number, now: number): Promise<number>;
  totals(scope: { guildId?: string; userId?: string }, period: Period): Promise<EndpointTotals[]>;
  topSpenders(guildId: string, period: Period, n: number): Promise<{ userId: string; used: number }[]>;
}

/** Characters that count against the limits (held, charged or possibly charged) per day of a period. */
export interface DailySpend {
  /** Start of the day (ms), days counted from the period's start. */
  dayStart: number;
  chars: number;
}

/** Characters that count against the limits spent for one text channel; channelId null: rows without one (older rows). */
export interface ChannelSpend {
  channelId: string | null;
  chars: number;
}
