import { randomBytes } from 'node:crypto';
import { AccountPool, type PoolCounts } from './account-pool.ts';
import type { Db } from './database.ts';
import { SharedStoreError } from './errors.ts';
import type { Charge, EndpointTotals, LedgerStore, Period, Reservation, ReserveOutcome, ScopeUsage, Endpoint } from '../billing/ledger.ts';
import { SqliteLedger, type OutboxEntry } from './sqlite-ledger.ts';
import type { PgPool } from './postgres.ts';

// The ledger of a host that shares the account's characters with other hosts
// (ACCOUNT_LEDGER_URL). Members and servers live on one host, so their limits are checked in this
// host's SQLite ledger, as on a single host; the account limit is checked in the shared pool (PostgreSQL,
// src/db/account-pool.ts), atomically with every other host's reservations.
//
// Money fails closed: a reservation, and the step that lets a request leave (markSent), need the
// pool to answer; when it does not, nothing is sent (SharedStoreError). Settlements (charged,
// uncertain, released, refunds) are the host's own truth first: they are written to SQLite with an
// outbox entry in the same transaction and copied to the pool right away, or later when it is
// down (every `renewEveryMs`, and after a restart), so no change is ever lost.

interface PooledLedgerOptions {
  db: Db;
  pg: PgPool;
  /** A hold not renewed for this long is a dead host's: freed, or uncertain if its request left. */
  holdMs?: number;
  /** How often holds are renewed and pending copies retried. */
  renewEveryMs?: number;
  /** A copy to the pool failed (it is retried); for the log. */
  onError?: (err: unknown) => void;
}

const POOLED_LEDGER_DEFAULTS = {
  holdMs: 120_000,
  renewEveryMs: 20_000,
  onError: () => {},
} as const satisfies Omit<Required<PooledLedgerOptions>, 'db' | 'pg'>;

/** A LedgerStore whose account scope is the pool every host shares. */
export class PooledLedger implements LedgerStore {
  readonly #local: SqliteLedger;
  readonly #pool: AccountPool;
  readonly #owner = `${process.pid}-${randomBytes(6).toString('hex')}`;
  readonly #onError: (err: unknown) => void;
  readonly #timer: NodeJS.Timeout;
  #copying: Promise<void> = Promise.resolve();

  constructor(options: PooledLedgerOptions) {
    this.#local = new SqliteLedger(options.db, { outbox: true });
    this.#pool = new AccountPool(options.pg, { holdMs: options.holdMs ?? POOLED_LEDGER_DEFAULTS.holdMs });
    this.#onError = options.onError ?? POOLED_LEDGER_DEFAULTS.onError;
    this.#timer = setInterval(() => void this.#tick(), options.renewEveryMs ?? POOLED_LEDGER_DEFAULTS.renewEveryMs);
    this.#timer.unref();
  }

  /**
   * Call once at start: what this host spent in `period` before it used the pool is handed to it
   * (once), then whatever a previous process left uncopied is copied.
   */
  async start(period: Period): Promise<void> {
    await this.#local.seedCopies(period);
    await this.#copyPending().catch(this.#onError);
  }

  /** Stops renewing; copies what it can. Holds still open expire back into the pool. */
  async close(): Promise<void> {
    clearInterval(this.#timer);
    await this.#copyPending().catch(this.#onError);
  }

  async usage(period: Period): Promise<ScopeUsage> {
    const local = await this.#local.usage(period);
    const account = sum(await this.#poolTotals(period));
    return { user: local.user, guild: local.guild, account: () => account };
  }

  async reserve<R>(
    request: { charges: readonly Charge[]; period: Period; now: number; staleBefore: number; audioKey?: string },
    refuse: (usage: ScopeUsage) => R | undefined,
  ): Promise<ReserveOutcome<R>> {
    // Members and the server here; the account below, in the pool.
    const local = await this.#local.reserve(request, (usage) => refuse({ user: usage.user, guild: usage.guild, account: () => 0 }));
    if (!local.ok || local.reservation.free || local.reservation.total === 0) return this.#settled(local);
    const reservation = local.reservation;
    let refusal: R | undefined;
    try {
      refusal = await this.#pool.hold(
        { id: reservation.id, owner: this.#owner, periodStart: reservation.periodStart, byEndpoint: byEndpoint(reservation.charges) },
        (used) => refuse({ user: () => 0, guild: () => 0, account: () => used }),
      );
    } catch (cause) {
      await this.#local.release(reservation, request.now).catch(this.#onError);
      throw new SharedStoreError('account_pool_unavailable', { cause });
    }
    // Copies what the local step changed besides (holds it settled as stale).
    if (refusal === undefined) return this.#settled(local);
    await this.#local.release(reservation, request.now);
    return this.#settled({ ok: false, refusal });
  }

  async markSent(reservation: Reservation, now: number): Promise<boolean> {
    if (!reservation.free && reservation.total > 0) {
      let held: boolean;
      try {
        held = await this.#pool.markSent(reservation.id);
      } catch (cause) {
        throw new SharedStoreError('account_pool_unavailable', { cause });
      }
      if (!held) {
        // The pool let the hold expire (this host could not renew it): not sent under it.
        await this.#local.release(reservation, now);
        await this.#copyPending().catch(this.#onError);
        return false;
      }
    }
    const sent = await this.#local.markSent(reservation, now);
    if (!sent) await this.#copyPending().catch(this.#onError);
    return sent;
  }

  async charge(reservation: Reservation, info: { pk?: number; jobId?: string }, now: number): Promise<'charged' | 'free'> {
    return this.#settled(await this.#local.charge(reservation, info, now));
  }

  async uncertain(reservation: Reservation, now: number): Promise<void> {
    return this.#settled(await this.#local.uncertain(reservation, now));
  }

  async release(reservation: Reservation, now: number): Promise<void> {
    return this.#settled(await this.#local.release(reservation, now));
  }

  async refundJob(jobId: string, now: number): Promise<boolean> {
    return this.#settled(await this.#local.refundJob(jobId, now));
  }

  async recordJobCharge(jobId: string, charges: readonly Charge[], period: Period, now: number): Promise<boolean> {
    return this.#settled(await this.#local.recordJobCharge(jobId, charges, period, now));
  }

  async settleStale(before: number, now: number): Promise<number> {
    return this.#settled(await this.#local.settleStale(before, now));
  }

  async totals(scope: { guildId?: string; userId?: string }, period: Period): Promise<EndpointTotals[]> {
    if (scope.guildId !== undefined) return this.#local.totals(scope, period);
    return this.#poolTotals(period);
  }

  async topSpenders(guildId: string, period: Period, n: number): Promise<{ userId: string; used: number }[]> {
    return this.#local.topSpenders(guildId, period, n);
  }

  /** After a settlement in SQLite: copied to the pool now if it answers, else later. */
  async #settled<T>(result: T): Promise<T> {
    await this.#copyPending().catch(this.#onError);
    return result;
  }

  async #poolTotals(period: Period): Promise<EndpointTotals[]> {
    try {
      return await this.#pool.totals(period);
    } catch (cause) {
      throw new SharedStoreError('account_pool_unavailable', { cause });
    }
  }

  /** Copies every outbox entry to the pool; one copy at a time in this process. */
  #copyPending(): Promise<void> {
    const run = this.#copying
      .catch(() => {})
      .then(async () => {
        for (;;) {
          const entries = this.#local.pendingCopies();
          if (entries.length === 0) return;
          const done: OutboxEntry[] = [];
          try {
            for (const e of entries) {
              await this.#pool.copy(e.reservationId, this.#owner, countsOf(this.#local.rowsOf(e.reservationId)));
              done.push(e);
            }
          } finally {
            await this.#local.copied(done);
          }
        }
      });
    this.#copying = run;
    return run;
  }

  async #tick(): Promise<void> {
    try {
      await this.#pool.renew(this.#owner);
      await this.#copyPending();
    } catch (err) {
      this.#onError(err);
    }
  }
}

function byEndpoint(charges: readonly Charge[]): Map<Endpoint, number> {
  const m = new Map<Endpoint, number>();
  for (const c of charges) m.set(c.endpoint, (m.get(c.endpoint) ?? 0) + c.chars);
  return m;
}

function countsOf(rows: ReturnType<SqliteLedger['rowsOf']>): PoolCounts[] {
  const m = new Map<string, PoolCounts>();
  for (const r of rows) {
    const k = `${r.periodStart}:${r.endpoint}`;
    const n = m.get(k) ?? { endpoint: r.endpoint, periodStart: r.periodStart, reserved: 0, charged: 0, uncertain: 0, sent: false };
    if (r.state === 'held' || r.state === 'sent') n.reserved += r.chars;
    else if (r.state !== 'released') n[r.state] += r.chars;
    n.sent ||= r.state === 'sent' || r.state === 'charged' || r.state === 'uncertain';
    m.set(k, n);
  }
  return [...m.values()];
}

function sum(totals: readonly EndpointTotals[]): number {
  return totals.reduce((n, t) => n + t.reserved + t.charged + t.uncertain, 0);
}
