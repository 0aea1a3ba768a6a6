import type { AttemptOutcome, BillingEvent, BillingHooks } from './attempts.ts';
import type { Charge, ChargeState, Reservation } from './ledger.ts';
import type { ReserveResult } from './policy.ts';
import { BudgetRefusedError } from './errors.ts';

/** The parts of CharacterBudget a charge session uses. */
export interface LedgerLike {
  reserve(charges: readonly Charge[], options?: { audioKey?: string }): Promise<ReserveResult>;
  markSent(reservation: Reservation): Promise<ReserveResult>;
  charge(reservation: Reservation, info?: { pk?: number; jobId?: string }): Promise<'charged' | 'free'>;
  uncertain(reservation: Reservation): Promise<void>;
  release(reservation: Reservation): Promise<void>;
  refundJob(jobId: string): Promise<boolean>;
}

/** The hold a session has in hand: its reservation, held or already sent (none once settled). */
type Hold = { state: Extract<ChargeState, 'held' | 'sent'>; reservation: Reservation };

interface ChargeSessionOptions {
  guildId: string;
  endpoint: 'standard' | 'advanced';
  /** Standard: the cache key of the audio (history repeats are free). */
  audioKey?: string;
  /** A ledger write failed: the request goes on (the audio is paid for), the cause is reported here. */
  onError?: (err: unknown) => void;
}

/**
 * Turns what the client reports about one request (src/billing/attempts.ts) into ledger entries, so
 * each possible charge by the service is recorded exactly once (docs/operating.md, "Characters are money"):
 *
 * - standard: one hold covers every attempt, since the account's history serves a repeat of the
 *   same audio free: charged on a 200 with our text (or free when already paid), uncertain when
 *   an attempt may have been charged and none succeeded, released otherwise;
 * - advanced: every job creation is a charge of its own; each attempt needs a hold, taken before
 *   it is sent (a resubmit can be refused by the budget); a failed job is refunded.
 */
export class ChargeSession implements BillingHooks {
  readonly #ledger: LedgerLike;
  readonly #charges: readonly Charge[];
  readonly #options: ChargeSessionOptions;
  #hold: Hold | null;
  #maybe = false;
  #chain: Promise<void> = Promise.resolve();
  #closed = false;
  /** What the request cost in the end, once closed. */
  outcome: 'charged' | 'free' | 'uncertain' | 'released' | 'mixed' = 'released';
  #outcomes = new Set<'charged' | 'free' | 'uncertain' | 'released'>();

  private constructor(ledger: LedgerLike, charges: readonly Charge[], options: ChargeSessionOptions, held: Reservation | null) {
    this.#ledger = ledger;
    this.#charges = charges;
    this.#options = options;
    this.#hold = held ? { state: 'held', reservation: held } : null;
  }

  /** Holds the characters for the first attempt; throws BudgetRefusedError when a limit says no. */
  static async open(ledger: LedgerLike, charges: readonly Charge[], options: ChargeSessionOptions): Promise<ChargeSession> {
    const r = await ledger.reserve(charges, options.audioKey ? { audioKey: options.audioKey } : {});
    if (!r.ok) throw new BudgetRefusedError({ refusal: r.refusal, guildId: options.guildId });
    return new ChargeSession(ledger, charges, options, r.reservation);
  }

  /** For a job created earlier (a resume): nothing is held until a resubmit needs it. */
  static forExistingJob(ledger: LedgerLike, charges: readonly Charge[], options: ChargeSessionOptions): ChargeSession {
    return new ChargeSession(ledger, charges, { ...options, endpoint: 'advanced' }, null);
  }

  /** Whether the first hold was free (a repeat the account already paid for). */
  get free(): boolean {
    return this.#hold?.reservation.free === true;
  }

  async beforeSend(): Promise<void> {
    await this.#chain;
    if (this.#hold === null) {
      // Advanced: the previous attempt was settled (charged, uncertain or refunded); this one needs its own hold.
      const r = await this.#ledger.reserve(this.#charges);
      if (!r.ok) throw new BudgetRefusedError({ refusal: r.refusal, guildId: this.#options.guildId });
      this.#hold = { state: 'held', reservation: r.reservation };
    }
    if (this.#hold.state === 'held') {
      const r = await this.#ledger.markSent(this.#hold.reservation);
      if (!r.ok) throw new BudgetRefusedError({ refusal: r.refusal, guildId: this.#options.guildId });
      this.#hold = { state: 'sent', reservation: r.reservation };
    }
  }

  onEvent(e: BillingEvent): void {
    if (e.kind === 'job_refunded') {
      this.#then(async () => {
        if (await this.#ledger.refundJob(e.jobId)) this.#outcomes.add('released');
      });
      return;
    }
    this.#then(() => this.#attempt(e.outcome, e));
  }

  /** Settles whatever is still held; resolves once every ledger write of this request is done. */
  async close(): Promise<void> {
    if (this.#closed) return this.#chain;
    this.#closed = true;
    this.#then(async () => {
      const hold = this.#hold?.reservation;
      this.#hold = null;
      if (!hold) return;
      if (this.#options.endpoint === 'standard' && this.#maybe) {
        await this.#ledger.uncertain(hold);
        this.#outcomes.add('uncertain');
      } else {
        await this.#ledger.release(hold);
        this.#outcomes.add('released');
      }
    });
    await this.#chain;
    const outcomes = [...this.#outcomes].filter((o) => o !== 'released');
    this.outcome = outcomes.length === 0 ? 'released' : outcomes.length === 1 ? outcomes[0]! : 'mixed';
  }

  async #attempt(outcome: AttemptOutcome, e: { pk?: number | undefined; jobId?: string }): Promise<void> {
    const hold = this.#hold?.reservation;
    if (!hold) return;
    if (outcome === 'charged') {
      this.#hold = null;
      const info = { ...(e.pk !== undefined ? { pk: e.pk } : {}), ...(e.jobId !== undefined ? { jobId: e.jobId } : {}) };
      this.#outcomes.add(await this.#ledger.charge(hold, info));
    } else if (outcome === 'maybe_charged') {
      if (this.#options.endpoint === 'standard') {
        this.#maybe = true; // the same hold covers the retries: the audio is charged once at most
      } else {
        this.#hold = null; // a job may exist that we will never hear of
        await this.#ledger.uncertain(hold);
        this.#outcomes.add('uncertain');
      }
    }
    // not_charged: the hold stays for the next attempt.
  }

  #then(op: () => Promise<void>): void {
    this.#chain = this.#chain.then(op).catch((err: unknown) => this.#options.onError?.(err));
  }
}
