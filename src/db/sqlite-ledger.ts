import { randomBytes } from 'node:crypto';
import type { Db } from './database.ts';
import { Repo } from './table.ts';
import {
  refundable,
  settleMaybeCharged,
  settleStale,
  type Charge,
  type ChargeState,
  type EndpointTotals,
  type LedgerStore,
  type Period,
  type Reservation,
  type ReserveOutcome,
  type ScopeUsage,
  type SettledState,
} from '../billing/ledger.ts';
import type { Endpoint } from '../billing/ledger.ts';

// The character ledger (migrations/004): character_ledger (one row per member per possible
// charge), ledger_totals (running totals per period and scope, moved by deltas in the same
// transaction as every state change, so a reservation reads a few rows whatever the ledger's
// size) and paid_audio (standard audio the account has certainly paid for). This module keeps
// the rows and totals in step; what may be reserved is the budget's policy (src/billing/policy.ts),
// passed in as a function of the totals read inside the transaction.
//
// Every operation is one transaction and returns a promise, and each total only ever moves by a
// delta: a store answering over the network (the account pool shared by several hosts in PostgreSQL) can
// implement the same operations with `UPDATE ... SET x = x + $1`.

/** The account scope's key in ledger_totals (a member is (guild, user), a guild is (guild, '')). */
const ACCOUNT = '';

// Reservation ids grow with time, so the ledger's index takes each new one at its right edge
// (a random UUID lands anywhere in a million-entry index: more pages touched per commit).
const PROCESS_TAG = randomBytes(4).toString('hex');
let sequence = 0;
function reservationId(now: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `${Math.max(0, Math.floor(now)).toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}-${PROCESS_TAG}`;
}

/** The state column: a held charge is 'reserved', with sent_at set once an attempt left (see chargeState). */
type StateColumn = 'reserved' | 'charged' | 'uncertain' | 'released';

/** A charge's state from its row: the one place the columns become the domain's union. */
function chargeState(row: { state: StateColumn; sent_at: number | null }): ChargeState {
  return row.state === 'reserved' ? (row.sent_at === null ? 'held' : 'sent') : row.state;
}

interface LedgerRow {
  id: number;
  reservation_id: string;
  guild_id: string;
  user_id: string;
  period_start: number;
  endpoint: Endpoint;
  chars: number;
  state: StateColumn;
  sent_at: number | null;
}
type NewRow = Omit<LedgerRow, 'id'> & {
  reservation_id: string;
  channel_id: string | null;
  audio_key: string | null;
  job_id: string | null;
  pk: number | null;
  created_at: number;
  settled_at: number | null;
};
type Deltas = { reserved: number; charged: number; uncertain: number };
type TotalsKey = { guild: string; user: string; period: number; endpoint: Endpoint };
type ScopeQuery = { guild: string; user: string; start: number; end: number };

const ROW = 'id, reservation_id, guild_id, user_id, period_start, endpoint, chars, state, sent_at';
// Periods are matched by range, not equality, so totals survive a corrected anchor.
const SCOPE = 'guild_id = @guild AND user_id = @user AND period_start >= @start AND period_start < @end';

const statements = (db: Db) => ({
  used: db
    .prepare<[ScopeQuery], number>(`SELECT COALESCE(SUM(reserved + charged + uncertain), 0) FROM ledger_totals WHERE ${SCOPE}`)
    .pluck(),
  byEndpoint: db.prepare<[ScopeQuery], EndpointTotals>(
    `SELECT endpoint, SUM(reserved) AS reserved, SUM(charged) AS charged, SUM(uncertain) AS uncertain FROM ledger_totals WHERE ${SCOPE} GROUP BY endpoint`,
  ),
  top: db.prepare<[{ guild: string; start: number; end: number; n: number }], { userId: string; used: number }>(
    `SELECT user_id AS userId, SUM(reserved + charged + uncertain) AS used FROM ledger_totals
     WHERE guild_id = @guild AND user_id != '' AND period_start >= @start AND period_start < @end
     GROUP BY user_id HAVING used > 0 ORDER BY used DESC, user_id LIMIT @n`,
  ),
  // Update first: the CHECK (>= 0) is evaluated on an INSERT's values before any upsert, so a
  // negative delta could not go through ON CONFLICT.
  moveTotals: db.prepare<[TotalsKey & Deltas]>(
    `UPDATE ledger_totals SET reserved = reserved + @reserved, charged = charged + @charged, uncertain = uncertain + @uncertain
     WHERE guild_id = @guild AND user_id = @user AND period_start = @period AND endpoint = @endpoint`,
  ),
  newTotals: db.prepare<[TotalsKey & Deltas]>(
    `INSERT INTO ledger_totals (guild_id, user_id, period_start, endpoint, reserved, charged, uncertain)
     VALUES (@guild, @user, @period, @endpoint, @reserved, @charged, @uncertain)`,
  ),
  insert: db.prepare<[NewRow]>(
    `INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, audio_key, job_id, pk, sent_at, created_at, settled_at, channel_id)
     VALUES (@reservation_id, @guild_id, @user_id, @period_start, @endpoint, @chars, @state, @audio_key, @job_id, @pk, @sent_at, @created_at, @settled_at, @channel_id)`,
  ),
  byReservation: db.prepare<[string], LedgerRow>(`SELECT ${ROW} FROM character_ledger WHERE reservation_id = ?`),
  byJob: db.prepare<[string], LedgerRow>(`SELECT ${ROW} FROM character_ledger WHERE job_id = ?`),
  uncertainFor: db.prepare<[string], LedgerRow>(
    `SELECT ${ROW} FROM character_ledger WHERE audio_key = ? AND audio_key IS NOT NULL AND state = 'uncertain'`,
  ),
  setState: db.prepare<[{ id: number; state: SettledState; at: number; pk: number | null; job: string | null }]>(
    'UPDATE character_ledger SET state = @state, settled_at = @at, pk = COALESCE(@pk, pk), job_id = COALESCE(@job, job_id) WHERE id = @id',
  ),
  markSent: db.prepare<[number, string]>(
    "UPDATE character_ledger SET sent_at = COALESCE(sent_at, ?) WHERE reservation_id = ? AND state = 'reserved'",
  ),
  stale: db.prepare<[number], LedgerRow & { audio_key: string | null }>(
    `SELECT ${ROW}, audio_key FROM character_ledger WHERE state = 'reserved' AND created_at < ?`,
  ),
  paidKey: db.prepare<[string], number>('SELECT 1 FROM paid_audio WHERE audio_key = ?').pluck(),
  paidPk: db.prepare<[number], number>('SELECT 1 FROM paid_audio WHERE pk = ?').pluck(),
  insertPaid: db.prepare<[string, number | null, number]>(
    'INSERT INTO paid_audio (audio_key, pk, paid_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING',
  ),
  hasJob: db.prepare<[string], number>('SELECT 1 FROM character_ledger WHERE job_id = ? LIMIT 1').pluck(),
  // The account pool's outbox (migrations/006, src/db/pooled-ledger.ts).
  touch: db.prepare<[string]>(
    'INSERT INTO pool_outbox (reservation_id, version) VALUES (?, 1) ON CONFLICT (reservation_id) DO UPDATE SET version = version + 1',
  ),
  outbox: db.prepare<[number], { reservationId: string; version: number }>(
    'SELECT reservation_id AS reservationId, version FROM pool_outbox LIMIT ?',
  ),
  seeded: db.prepare<[number], number>('SELECT 1 FROM pool_seeded WHERE period_start = ?').pluck(),
  seed: db.prepare<[number, number]>(
    `INSERT INTO pool_outbox (reservation_id, version) SELECT DISTINCT reservation_id, 1 FROM character_ledger
     WHERE period_start >= ? AND period_start < ? AND state != 'released' ON CONFLICT (reservation_id) DO NOTHING`,
  ),
  markSeeded: db.prepare<[number]>('INSERT INTO pool_seeded (period_start) VALUES (?) ON CONFLICT DO NOTHING'),
  clearOutbox: db.prepare<[string, number]>('DELETE FROM pool_outbox WHERE reservation_id = ? AND version = ?'),
  pooledRows: db.prepare<[string], { periodStart: number; endpoint: Endpoint; state: StateColumn; chars: number; sent_at: number | null }>(
    'SELECT period_start AS periodStart, endpoint, state, chars, sent_at FROM character_ledger WHERE reservation_id = ?',
  ),
});

/** A ledger row as the account pool copies it. */
interface PooledRow {
  periodStart: number;
  endpoint: Endpoint;
  state: ChargeState;
  chars: number;
}

/** A reservation whose rows changed since the account pool last copied them. */
export interface OutboxEntry {
  reservationId: string;
  version: number;
}

/** The ledger in SQLite, atomic across every process sharing the database file. */
export class SqliteLedger extends Repo<ReturnType<typeof statements>> implements LedgerStore {
  readonly #outbox: boolean;

  /** With `outbox`, every change of a reservation is noted in pool_outbox in its transaction (an account pool copies it). */
  constructor(db: Db, options: { outbox?: boolean } = {}) {
    super(db, undefined, statements);
    this.#outbox = options.outbox ?? false;
  }

  /** Reservations changed since the pool last copied them (oldest order not guaranteed). */
  pendingCopies(limit = 200): OutboxEntry[] {
    return this.sql.outbox.all(limit);
  }

  /** Once per period: every reservation of `period` that counts is queued for the pool (a host joining a pool mid-period). */
  seedCopies(period: Period): Promise<void> {
    return this.write(() => {
      if (this.sql.seeded.get(period.start) !== undefined) return;
      this.sql.seed.run(period.start, period.end);
      this.sql.markSeeded.run(period.start);
    });
  }

  /** The rows of one reservation, as the pool copies them. */
  rowsOf(reservationId: string): PooledRow[] {
    return this.sql.pooledRows
      .all(reservationId)
      .map((r) => ({ periodStart: r.periodStart, endpoint: r.endpoint, state: chargeState(r), chars: r.chars }));
  }

  /** The pool has copied these versions: their entries go, unless changed again meanwhile. */
  copied(entries: readonly OutboxEntry[]): Promise<void> {
    return this.write(() => {
      for (const e of entries) this.sql.clearOutbox.run(e.reservationId, e.version);
    });
  }

  /** What counts against each scope's limit in `period`, read as the caller asks (no hold). */
  async usage(period: Period): Promise<ScopeUsage> {
    return this.#usage(period);
  }

  /**
   * Holds the characters of every charge, or none, in one transaction: holds older than
   * `staleBefore` are settled first (see settleStale), audio the account already paid for is held
   * free, and otherwise `refuse` (the budget's policy) reads the totals and may say no.
   */
  reserve<R>(
    request: { charges: readonly Charge[]; period: Period; now: number; staleBefore: number; audioKey?: string },
    refuse: (usage: ScopeUsage) => R | undefined,
  ): Promise<ReserveOutcome<R>> {
    const { charges, period, now, audioKey } = request;
    return this.write(() => {
      this.#settleStale(request.staleBefore, now);
      const base = {
        id: reservationId(now),
        periodStart: period.start,
        charges: charges.map((c) => ({ ...c })),
        createdAt: now,
        ...(audioKey ? { audioKey } : {}),
      };
      if (audioKey !== undefined && this.sql.paidKey.get(audioKey) !== undefined) {
        return { ok: true as const, reservation: { ...base, total: 0, free: true } };
      }
      const refusal = refuse(this.#usage(period));
      if (refusal !== undefined) return { ok: false as const, refusal };
      const reservation = { ...base, total: charges.reduce((n, c) => n + c.chars, 0) };
      this.#insert(reservation, 'held', now, {});
      return { ok: true as const, reservation };
    });
  }

  /** The first attempt is leaving for the service; resolves false when the hold is no longer held (settled as stale). */
  markSent(reservation: Reservation, now: number): Promise<boolean> {
    return this.write(() => this.sql.markSent.run(now, reservation.id).changes > 0);
  }

  /**
   * The service charged this reservation (standard 200 with our text, or a job created). For
   * standard audio the account already paid for (same audio key or same history `pk`), it charged
   * nothing: the hold is released and 'free' returned. At most one charge per audio ever
   * (history), so earlier uncertain attempts at the same audio are released. Idempotent.
   */
  charge(reservation: Reservation, info: { pk?: number; jobId?: string }, now: number): Promise<'charged' | 'free'> {
    return this.write(() => {
      const key = reservation.audioKey;
      const pk = info.pk ?? null;
      if (key !== undefined && reservation.charges.every((c) => c.endpoint === 'standard')) {
        const paid = this.sql.paidKey.get(key) !== undefined || (pk !== null && this.sql.paidPk.get(pk) !== undefined);
        if (!paid) this.sql.insertPaid.run(key, pk, now);
        else this.#move(this.sql.byReservation.all(reservation.id), 'released', now, { pk });
        this.#move(this.sql.uncertainFor.all(key), 'released', now, {});
        if (paid) return 'free' as const;
      }
      const rows = this.sql.byReservation.all(reservation.id);
      if (rows.length === 0 && reservation.total > 0) this.#insert(reservation, 'charged', now, info);
      else this.#move(rows, 'charged', now, { pk, job: info.jobId ?? null });
      return 'charged' as const;
    });
  }

  /** The service may have charged it: still held rows become uncertain (released when the audio is already paid for). */
  uncertain(reservation: Reservation, now: number): Promise<void> {
    return this.write(() => {
      const paid = reservation.audioKey !== undefined && this.sql.paidKey.get(reservation.audioKey) !== undefined;
      this.#move(this.#held(reservation), settleMaybeCharged(paid), now, {});
    });
  }

  /** Nothing was charged: still held rows are released; settled ones stay. */
  release(reservation: Reservation, now: number): Promise<void> {
    return this.write(() => this.#move(this.#held(reservation), 'released', now, {}));
  }

  /** The job failed and the service gave its characters back; resolves whether a charge was refunded. */
  refundJob(jobId: string, now: number): Promise<boolean> {
    return this.write(() => {
      const rows = this.sql.byJob.all(jobId).filter((r) => refundable(chargeState(r)));
      this.#move(rows, 'released', now, {});
      return rows.length > 0;
    });
  }

  /** Records a charge for a job the ledger does not know yet, in `period`; resolves false when it already had one. */
  recordJobCharge(jobId: string, charges: readonly Charge[], period: Period, now: number): Promise<boolean> {
    return this.write(() => {
      if (this.sql.hasJob.get(jobId) !== undefined) return false;
      const total = charges.reduce((n, c) => n + c.chars, 0);
      this.#insert({ id: reservationId(now), periodStart: period.start, charges, total, createdAt: now }, 'charged', now, { jobId });
      return true;
    });
  }

  /** Settles holds created before `before` (left by a crashed process): released if never sent, uncertain if sent. */
  settleStale(before: number, now: number): Promise<number> {
    return this.write(() => this.#settleStale(before, now));
  }

  /** A scope's totals in `period` by endpoint: a member (guild, user), a guild (guild), or the account ({}). */
  async totals(scope: { guildId?: string; userId?: string }, period: Period): Promise<EndpointTotals[]> {
    return this.sql.byEndpoint.all({
      guild: scope.guildId ?? ACCOUNT,
      user: scope.userId ?? ACCOUNT,
      start: period.start,
      end: period.end,
    });
  }

  /** The guild's `n` biggest spenders in `period`, most first. */
  async topSpenders(guildId: string, period: Period, n: number): Promise<{ userId: string; used: number }[]> {
    return this.sql.top.all({ guild: guildId, start: period.start, end: period.end, n });
  }

  // ---- inside a transaction ----

  #usage(period: Period): ScopeUsage {
    const used = (guild: string, user: string) => this.sql.used.get({ guild, user, start: period.start, end: period.end }) ?? 0;
    return { user: used, guild: (guildId) => used(guildId, ACCOUNT), account: () => used(ACCOUNT, ACCOUNT) };
  }

  #held(reservation: Reservation): LedgerRow[] {
    return this.sql.byReservation.all(reservation.id).filter((r) => r.state === 'reserved');
  }

  /** Moves rows to `to`, keeping the totals in step; rows already there are left alone. */
  #move(rows: readonly LedgerRow[], to: SettledState, now: number, extra: { pk?: number | null; job?: string | null }): void {
    const deltas = new DeltaMap();
    for (const r of rows) {
      if (r.state === to) continue;
      this.sql.setState.run({ id: r.id, state: to, at: now, pk: extra.pk ?? null, job: extra.job ?? null });
      deltas.add(r, r.state, to);
      if (this.#outbox) this.sql.touch.run(r.reservation_id);
    }
    this.#apply(deltas);
  }

  /** Writes a reservation's rows (one per charge and channel with characters) directly in `state`. */
  #insert(reservation: Reservation, state: 'held' | 'charged', now: number, info: { pk?: number; jobId?: string }): void {
    const deltas = new DeltaMap();
    const settled = state !== 'held';
    const column: StateColumn = settled ? state : 'reserved';
    // One row per charge and text channel it was spent for (one without a channel when it names none).
    const parts = reservation.charges.flatMap((c) =>
      (c.channels ?? [{ channelId: null, chars: c.chars }]).map((p) => ({ charge: c, channelId: p.channelId, chars: p.chars })),
    );
    for (const { charge: c, channelId, chars } of parts) {
      if (chars === 0) continue;
      const row = { guild_id: c.guildId, user_id: c.userId, period_start: reservation.periodStart, endpoint: c.endpoint, chars };
      this.sql.insert.run({
        ...row,
        channel_id: channelId,
        reservation_id: reservation.id,
        state: column,
        audio_key: reservation.audioKey ?? null,
        job_id: info.jobId ?? null,
        pk: info.pk ?? null,
        sent_at: settled ? now : null,
        created_at: reservation.createdAt,
        settled_at: settled ? now : null,
      });
      deltas.add(row, null, column);
    }
    if (this.#outbox && reservation.total > 0) this.sql.touch.run(reservation.id);
    this.#apply(deltas);
  }

  #settleStale(before: number, now: number): number {
    const rows = this.sql.stale.all(before);
    for (const r of rows) {
      const paid = r.audio_key !== null && this.sql.paidKey.get(r.audio_key) !== undefined;
      this.#move([r], settleStale(chargeState(r), paid), now, {});
    }
    return rows.length;
  }

  #apply(deltas: DeltaMap): void {
    for (const d of deltas.values()) {
      if (this.sql.moveTotals.run(d).changes === 0) this.sql.newTotals.run(d);
    }
  }
}

/** Deltas to the totals of the three scopes of each row, summed per scope before writing. */
class DeltaMap {
  readonly #m = new Map<string, TotalsKey & Deltas>();

  add(
    row: Pick<LedgerRow, 'guild_id' | 'user_id' | 'period_start' | 'endpoint' | 'chars'>,
    from: StateColumn | null,
    to: StateColumn,
  ): void {
    for (const [guild, user] of [
      [row.guild_id, row.user_id],
      [row.guild_id, ACCOUNT],
      [ACCOUNT, ACCOUNT],
    ] as const) {
      const k = `${guild}\u0000${user}\u0000${row.period_start}\u0000${row.endpoint}`;
      let d = this.#m.get(k);
      if (!d)
        this.#m.set(k, (d = { guild, user, period: row.period_start, endpoint: row.endpoint, reserved: 0, charged: 0, uncertain: 0 }));
      if (from !== null && from !== 'released') d[from] -= row.chars;
      if (to !== 'released') d[to] += row.chars;
    }
  }

  values(): IterableIterator<TotalsKey & Deltas> {
    return this.#m.values();
  }
}
