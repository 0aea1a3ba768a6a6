import { randomBytes } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { Endpoint } from '../db/repositories.ts';
import { writeTx } from '../db/write.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import type { BudgetLimits, BudgetRefusal, BudgetScope } from './budget-policy.ts';
import { BudgetError } from './errors.ts';

export type { BudgetLimits, BudgetRefusal, BudgetScope };

// Characters are the account's money (notes/service-facts.md: free plan 5,000/month shared by every
// server). The ledger follows the service's charging model (README "Characters are money"): every
// request holds its characters BEFORE it is sent, atomically across all processes sharing the
// database file, and the hold ends in exactly one of: charged (the service charged it), uncertain
// (it may have: counted like charged, never refunded by guesswork), released (nothing charged).
//
// Running totals per period and scope (migrations/004) make a reservation read a few rows whatever
// the ledger's size. Every method is one transaction and returns a promise: a store answering over
// the network (a later issue moves the account pool to PostgreSQL) fits the same interface, each
// total being a counter moved by deltas (an atomic `UPDATE ... SET x = x + $1`).

/** One author's share of a request (a coalesced request charges several authors at once). */
export interface Charge {
  guildId: string;
  userId: string;
  endpoint: Endpoint;
  /** Counted by the caller with `countChars` (src/tts/chars.ts). */
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

export type LedgerState = 'reserved' | 'charged' | 'uncertain' | 'released';

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; refusal: BudgetRefusal };
export type CheckResult = { ok: true } | { ok: false; refusal: BudgetRefusal };

export interface Usage {
  scope: BudgetScope;
  /** Reserved + charged + uncertain characters this period: what counts against the limit. */
  used: number;
  /** Of `used`, held by requests not yet settled. */
  reserved: number;
  /** Of `used`, certainly charged by the service. */
  charged: number;
  /** Of `used`, possibly charged (the client could not know). */
  uncertain: number;
  limit: number;
  remaining: number;
  resetsAt: number;
  byEndpoint: Record<Endpoint, number>;
}

export interface BudgetOptions {
  db: Db;
  clock?: Clock;
  defaults?: Partial<BudgetLimits>;
  period?: { anchor?: number; days?: number };
  /** Holds older than this are assumed left by a crashed process and settled (see releaseStale). */
  staleAfterMs?: number;
}

export const BUDGET_DEFAULTS = {
  clock: systemClock,
  // Free plan (notes/service-facts.md: Plans): one user may take a fifth, one guild 60 %.
  // The documented defaults (.env.example); src/config.ts reads them from here.
  defaults: { userMonthlyLimit: 1_000, guildMonthlyLimit: 3_000, accountMonthlyLimit: 5_000 },
  // Billing periods run about 30 days from sign-up; the anchor is any one period start.
  period: { anchor: 0, days: 30 },
  staleAfterMs: 10 * 60_000,
} as const satisfies Omit<Required<BudgetOptions>, 'db'>;

const DAY_MS = 86_400_000;
const ACCOUNT = '';

// Reservation ids grow with time, so the ledger's index takes each new one at its right edge
// (a random UUID lands anywhere in a million-entry index: more pages touched per commit).
const PROCESS_TAG = randomBytes(4).toString('hex');
let sequence = 0;
function reservationId(now: number): string {
  sequence = (sequence + 1) % 36 ** 4;
  return `${Math.max(0, Math.floor(now)).toString(36).padStart(9, '0')}${sequence.toString(36).padStart(4, '0')}-${PROCESS_TAG}`;
}

interface LedgerRow {
  id: number;
  guild_id: string;
  user_id: string;
  period_start: number;
  endpoint: Endpoint;
  chars: number;
  state: LedgerState;
}

type Deltas = { reserved: number; charged: number; uncertain: number };
type TotalsKey = { guild: string; user: string; period: number; endpoint: Endpoint };

/** Per-user, per-guild and account-wide character allowances over one SQLite ledger. */
export class CharacterBudget {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #defaults: BudgetLimits;
  readonly #anchor: number;
  readonly #periodMs: number;
  readonly #staleAfterMs: number;
  readonly #s;

  constructor(options: BudgetOptions) {
    this.#db = options.db;
    this.#clock = options.clock ?? BUDGET_DEFAULTS.clock;
    this.#defaults = { ...BUDGET_DEFAULTS.defaults, ...definedOnly(options.defaults ?? {}) };
    this.#anchor = options.period?.anchor ?? BUDGET_DEFAULTS.period.anchor;
    this.#periodMs = (options.period?.days ?? BUDGET_DEFAULTS.period.days) * DAY_MS;
    this.#staleAfterMs = options.staleAfterMs ?? BUDGET_DEFAULTS.staleAfterMs;

    const db = this.#db;
    // Periods are matched by range, not equality, so totals survive a corrected anchor.
    const scope = 'guild_id = @guild AND user_id = @user AND period_start >= @start AND period_start < @end';
    type S = { guild: string; user: string; start: number; end: number };
    type Row = Omit<LedgerRow, 'id'> & { reservation_id: string; audio_key: string | null; job_id: string | null; pk: number | null; sent_at: number | null; created_at: number; settled_at: number | null };
    this.#s = {
      used: db.prepare<[S], number>(`SELECT COALESCE(SUM(reserved + charged + uncertain), 0) FROM ledger_totals WHERE ${scope}`).pluck(),
      byEndpoint: db.prepare<[S], { endpoint: Endpoint; reserved: number; charged: number; uncertain: number }>(
        `SELECT endpoint, SUM(reserved) AS reserved, SUM(charged) AS charged, SUM(uncertain) AS uncertain FROM ledger_totals WHERE ${scope} GROUP BY endpoint`,
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
      guildLimits: db.prepare<[string], { user_monthly_limit: number | null; guild_monthly_limit: number | null }>(
        'SELECT user_monthly_limit, guild_monthly_limit FROM guild_settings WHERE guild_id = ?',
      ),
      insert: db.prepare<[Omit<Row, 'settled_at' | 'pk'> & { settled_at: number | null; pk: number | null }]>(
        `INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, audio_key, job_id, pk, sent_at, created_at, settled_at)
         VALUES (@reservation_id, @guild_id, @user_id, @period_start, @endpoint, @chars, @state, @audio_key, @job_id, @pk, @sent_at, @created_at, @settled_at)`,
      ),
      byReservation: db.prepare<[string], LedgerRow>('SELECT id, guild_id, user_id, period_start, endpoint, chars, state FROM character_ledger WHERE reservation_id = ?'),
      byJob: db.prepare<[string], LedgerRow>('SELECT id, guild_id, user_id, period_start, endpoint, chars, state FROM character_ledger WHERE job_id = ?'),
      uncertainFor: db.prepare<[string], LedgerRow>(
        "SELECT id, guild_id, user_id, period_start, endpoint, chars, state FROM character_ledger WHERE audio_key = ? AND audio_key IS NOT NULL AND state = 'uncertain'",
      ),
      setState: db.prepare<[{ id: number; state: LedgerState; at: number; pk: number | null; job: string | null }]>(
        'UPDATE character_ledger SET state = @state, settled_at = @at, pk = COALESCE(@pk, pk), job_id = COALESCE(@job, job_id) WHERE id = @id',
      ),
      markSent: db.prepare<[number, string]>("UPDATE character_ledger SET sent_at = COALESCE(sent_at, ?) WHERE reservation_id = ? AND state = 'reserved'"),
      stale: db.prepare<[number], LedgerRow & { sent_at: number | null; audio_key: string | null }>(
        "SELECT id, guild_id, user_id, period_start, endpoint, chars, state, sent_at, audio_key FROM character_ledger WHERE state = 'reserved' AND created_at < ?",
      ),
      paidKey: db.prepare<[string], number>('SELECT 1 FROM paid_audio WHERE audio_key = ?').pluck(),
      paidPk: db.prepare<[number], number>('SELECT 1 FROM paid_audio WHERE pk = ?').pluck(),
      insertPaid: db.prepare<[string, number | null, number]>('INSERT INTO paid_audio (audio_key, pk, paid_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING'),
      hasJob: db.prepare<[string], number>('SELECT 1 FROM character_ledger WHERE job_id = ? LIMIT 1').pluck(),
    };
  }

  /** The billing period containing now: [start, end) in ms. */
  currentPeriod(): { start: number; end: number } {
    const now = this.#clock.now();
    const start = this.#anchor + Math.floor((now - this.#anchor) / this.#periodMs) * this.#periodMs;
    return { start, end: start + this.#periodMs };
  }

  /** The limits that apply in a guild (its own overrides, else the bot's defaults). */
  limitsFor(guildId: string): BudgetLimits {
    const row = this.#s.guildLimits.get(guildId);
    return {
      userMonthlyLimit: row?.user_monthly_limit ?? this.#defaults.userMonthlyLimit,
      guildMonthlyLimit: row?.guild_monthly_limit ?? this.#defaults.guildMonthlyLimit,
      accountMonthlyLimit: this.#defaults.accountMonthlyLimit,
    };
  }

  /** Whether `charges` would be reserved now (nothing is held): for refusing before answering. */
  async check(charges: readonly Charge[]): Promise<CheckResult> {
    validate(charges);
    const refusal = this.#refusal(charges, this.currentPeriod());
    return refusal ? { ok: false, refusal } : { ok: true };
  }

  /**
   * Holds the characters of every charge, or none: refused when any user, guild or the account
   * would go over its limit. Atomic across processes sharing the database file. With `audioKey`
   * (standard requests), audio the account has already paid for is held free: the service serves
   * a repeat from its history without charging.
   */
  async reserve(charges: readonly Charge[], options: { audioKey?: string } = {}): Promise<ReserveResult> {
    validate(charges);
    const { audioKey } = options;
    return writeTx(this.#db, (): ReserveResult => {
      const now = this.#clock.now();
      this.#settleStale(now);
      const period = this.currentPeriod();
      const id = reservationId(now);
      const base = { id, periodStart: period.start, charges: charges.map((c) => ({ ...c })), createdAt: now, ...(audioKey ? { audioKey } : {}) };
      if (audioKey !== undefined && this.#s.paidKey.get(audioKey) !== undefined) {
        return { ok: true, reservation: { ...base, total: 0, free: true } };
      }
      const refusal = this.#refusal(charges, period);
      if (refusal) return { ok: false, refusal };
      let total = 0;
      const deltas = new DeltaMap();
      for (const c of charges) {
        if (c.chars === 0) continue;
        total += c.chars;
        this.#s.insert.run({
          reservation_id: id, guild_id: c.guildId, user_id: c.userId, period_start: period.start, endpoint: c.endpoint, chars: c.chars,
          state: 'reserved', audio_key: audioKey ?? null, job_id: null, pk: null, sent_at: null, created_at: now, settled_at: null,
        });
        deltas.add({ guild_id: c.guildId, user_id: c.userId, period_start: period.start, endpoint: c.endpoint, chars: c.chars }, null, 'reserved');
      }
      this.#apply(deltas);
      return { ok: true, reservation: { ...base, total } };
    });
  }

  /**
   * The first attempt is about to leave for the service. From now on a crash leaves the hold
   * uncertain instead of releasing it. If the hold was settled meanwhile (judged stale), the
   * characters are held again under a new reservation, or refused: nothing is sent then.
   */
  async markSent(reservation: Reservation): Promise<ReserveResult> {
    if (reservation.free || reservation.total === 0) return { ok: true, reservation };
    const held = await writeTx(this.#db, () => this.#s.markSent.run(this.#clock.now(), reservation.id).changes > 0);
    if (held) return { ok: true, reservation };
    const again = await this.reserve(reservation.charges, reservation.audioKey ? { audioKey: reservation.audioKey } : {});
    if (again.ok) await this.markSent(again.reservation);
    return again;
  }

  /**
   * The service charged this reservation (standard 200 with our text, or a job created). For
   * standard audio the account already paid for (same audio key or same history `pk`), the
   * service charged nothing: the hold is released and 'free' returned. Idempotent.
   */
  async charge(reservation: Reservation, info: { pk?: number; jobId?: string } = {}): Promise<'charged' | 'free'> {
    if (reservation.free) return 'free';
    return writeTx(this.#db, () => {
      const now = this.#clock.now();
      const key = reservation.audioKey;
      const pk = info.pk ?? null;
      if (key !== undefined && reservation.charges.every((c) => c.endpoint === 'standard')) {
        const paid = this.#s.paidKey.get(key) !== undefined || (pk !== null && this.#s.paidPk.get(pk) !== undefined);
        if (paid) {
          this.#move(this.#s.byReservation.all(reservation.id), 'released', now, { pk });
          // Uncertain attempts at the same audio were free repeats or never made: nothing was charged.
          this.#move(this.#s.uncertainFor.all(key), 'released', now, {});
          return 'free' as const;
        }
        this.#s.insertPaid.run(key, pk, now);
        // At most one charge per audio ever (history): earlier uncertain attempts were not charged.
        this.#move(this.#s.uncertainFor.all(key), 'released', now, {});
      }
      const rows = this.#s.byReservation.all(reservation.id);
      if (rows.length === 0 && reservation.total > 0) this.#insertSettled(reservation, 'charged', now, info);
      else this.#move(rows, 'charged', now, { pk, job: info.jobId ?? null });
      return 'charged' as const;
    });
  }

  /**
   * The service may have charged this reservation (aborted in flight, 5xx, timeout): it keeps
   * counting against every limit. Standard audio already paid for is free whatever happened.
   */
  async uncertain(reservation: Reservation): Promise<void> {
    if (reservation.free) return;
    await writeTx(this.#db, () => {
      const now = this.#clock.now();
      const paid = reservation.audioKey !== undefined && this.#s.paidKey.get(reservation.audioKey) !== undefined;
      const rows = this.#s.byReservation.all(reservation.id).filter((r) => r.state === 'reserved');
      this.#move(rows, paid ? 'released' : 'uncertain', now, {});
    });
  }

  /** Nothing was charged (not sent, refused, notice audio): free the hold. Idempotent; settled holds stay. */
  async release(reservation: Reservation): Promise<void> {
    if (reservation.free) return;
    await writeTx(this.#db, () => {
      const rows = this.#s.byReservation.all(reservation.id).filter((r) => r.state === 'reserved');
      this.#move(rows, 'released', this.#clock.now(), {});
    });
  }

  /** The job failed and the service gave its characters back. Returns whether a charge was refunded. */
  async refundJob(jobId: string): Promise<boolean> {
    return writeTx(this.#db, () => {
      const rows = this.#s.byJob.all(jobId).filter((r) => r.state === 'charged' || r.state === 'uncertain');
      this.#move(rows, 'released', this.#clock.now(), {});
      return rows.length > 0;
    });
  }

  /**
   * A job exists at the service (it was charged at creation) but the ledger has no charge for it
   * (created by a process that died before recording it): record it now. Idempotent per job.
   */
  async recordJobCharge(jobId: string, charges: readonly Charge[]): Promise<boolean> {
    validate(charges);
    return writeTx(this.#db, () => {
      if (this.#s.hasJob.get(jobId) !== undefined) return false;
      const now = this.#clock.now();
      const period = this.currentPeriod();
      const reservation: Reservation = { id: reservationId(now), periodStart: period.start, charges, total: charges.reduce((n, c) => n + c.chars, 0), createdAt: now };
      this.#insertSettled(reservation, 'charged', now, { jobId });
      return true;
    });
  }

  /**
   * Settles holds older than `staleAfterMs` (left by a crashed process): released when nothing
   * was sent, uncertain when it was. Returns how many rows.
   */
  async releaseStale(): Promise<number> {
    return writeTx(this.#db, () => this.#settleStale(this.#clock.now()));
  }

  /** This period's usage of a user in a guild (with userId) or of a whole guild. */
  async usage(scope: { guildId: string; userId?: string }): Promise<Usage> {
    const period = this.currentPeriod();
    const limits = this.limitsFor(scope.guildId);
    const user = scope.userId ?? '';
    const rows = this.#s.byEndpoint.all({ guild: scope.guildId, user, start: period.start, end: period.end });
    return toUsage(user ? 'user' : 'guild', rows, user ? limits.userMonthlyLimit : limits.guildMonthlyLimit, period.end);
  }

  /** This period's usage of the whole bot (the account). */
  async accountUsage(): Promise<Usage> {
    const period = this.currentPeriod();
    const rows = this.#s.byEndpoint.all({ guild: ACCOUNT, user: ACCOUNT, start: period.start, end: period.end });
    return toUsage('account', rows, this.#defaults.accountMonthlyLimit, period.end);
  }

  /** The guild's `n` biggest spenders this period, most first. */
  async topSpenders(guildId: string, n = 10): Promise<{ userId: string; used: number }[]> {
    const period = this.currentPeriod();
    return this.#s.top.all({ guild: guildId, start: period.start, end: period.end, n });
  }

  // ---- internals (inside a transaction) ----

  /** The first scope the charges would take over its limit, or undefined. */
  #refusal(charges: readonly Charge[], period: { start: number; end: number }): BudgetRefusal | undefined {
    const p = { start: period.start, end: period.end };
    const perUser = new Map<string, { guildId: string; userId: string; chars: number }>();
    const perGuild = new Map<string, number>();
    let total = 0;
    for (const c of charges) {
      const key = `${c.guildId}\u0000${c.userId}`;
      const u = perUser.get(key) ?? { guildId: c.guildId, userId: c.userId, chars: 0 };
      u.chars += c.chars;
      perUser.set(key, u);
      perGuild.set(c.guildId, (perGuild.get(c.guildId) ?? 0) + c.chars);
      total += c.chars;
    }
    const refuse = (r: Omit<BudgetRefusal, 'remaining' | 'resetsAt'>): BudgetRefusal => ({ ...r, remaining: Math.max(0, r.limit - r.used), resetsAt: period.end });
    const limits = new Map<string, BudgetLimits>();
    const limitsOf = (guildId: string) => {
      let l = limits.get(guildId);
      if (!l) limits.set(guildId, (l = this.limitsFor(guildId)));
      return l;
    };
    for (const u of perUser.values()) {
      if (u.chars === 0) continue;
      const limit = limitsOf(u.guildId).userMonthlyLimit;
      const used = this.#s.used.get({ ...p, guild: u.guildId, user: u.userId }) ?? 0;
      if (used + u.chars > limit) return refuse({ scope: 'user', guildId: u.guildId, userId: u.userId, used, limit, requested: u.chars });
    }
    for (const [guildId, chars] of perGuild) {
      if (chars === 0) continue;
      const limit = limitsOf(guildId).guildMonthlyLimit;
      const used = this.#s.used.get({ ...p, guild: guildId, user: '' }) ?? 0;
      if (used + chars > limit) return refuse({ scope: 'guild', guildId, used, limit, requested: chars });
    }
    if (total > 0) {
      const limit = this.#defaults.accountMonthlyLimit;
      const used = this.#s.used.get({ ...p, guild: ACCOUNT, user: ACCOUNT }) ?? 0;
      if (used + total > limit) return refuse({ scope: 'account', used, limit, requested: total });
    }
    return undefined;
  }

  /** Moves rows to `to`, keeping the totals in step; rows already there are left alone. */
  #move(rows: readonly LedgerRow[], to: LedgerState, now: number, extra: { pk?: number | null; job?: string | null }): void {
    const deltas = new DeltaMap();
    for (const r of rows) {
      if (r.state === to) continue;
      this.#s.setState.run({ id: r.id, state: to, at: now, pk: extra.pk ?? null, job: extra.job ?? null });
      deltas.add(r, r.state, to);
    }
    this.#apply(deltas);
  }

  /** Records a reservation whose rows are gone or never existed directly in state `state`. */
  #insertSettled(reservation: Reservation, state: 'charged', now: number, info: { pk?: number; jobId?: string }): void {
    const deltas = new DeltaMap();
    for (const c of reservation.charges) {
      if (c.chars === 0) continue;
      const row = { guild_id: c.guildId, user_id: c.userId, period_start: reservation.periodStart, endpoint: c.endpoint, chars: c.chars };
      this.#s.insert.run({
        ...row, reservation_id: reservation.id, state, audio_key: reservation.audioKey ?? null, job_id: info.jobId ?? null,
        pk: info.pk ?? null, sent_at: now, created_at: reservation.createdAt, settled_at: now,
      });
      deltas.add(row, null, state);
    }
    this.#apply(deltas);
  }

  #settleStale(now: number): number {
    const rows = this.#s.stale.all(now - this.#staleAfterMs);
    for (const r of rows) {
      const paid = r.audio_key !== null && this.#s.paidKey.get(r.audio_key) !== undefined;
      this.#move([r], r.sent_at === null || paid ? 'released' : 'uncertain', now, {});
    }
    return rows.length;
  }

  #apply(deltas: DeltaMap): void {
    for (const d of deltas.values()) {
      if (this.#s.moveTotals.run(d).changes === 0) this.#s.newTotals.run(d);
    }
  }
}

/** Deltas to the totals of the three scopes of each row, summed per scope before writing. */
class DeltaMap {
  readonly #m = new Map<string, TotalsKey & Deltas>();

  add(row: Pick<LedgerRow, 'guild_id' | 'user_id' | 'period_start' | 'endpoint' | 'chars'>, from: LedgerState | null, to: LedgerState): void {
    for (const [guild, user] of [[row.guild_id, row.user_id], [row.guild_id, ''], [ACCOUNT, ACCOUNT]] as const) {
      const k = `${guild}\u0000${user}\u0000${row.period_start}\u0000${row.endpoint}`;
      let d = this.#m.get(k);
      if (!d) this.#m.set(k, (d = { guild, user, period: row.period_start, endpoint: row.endpoint, reserved: 0, charged: 0, uncertain: 0 }));
      if (from !== null && from !== 'released') d[from] -= row.chars;
      if (to !== 'released') d[to] += row.chars;
    }
  }

  values(): IterableIterator<TotalsKey & Deltas> {
    return this.#m.values();
  }
}

function validate(charges: readonly Charge[]): void {
  for (const c of charges) {
    if (!Number.isSafeInteger(c.chars) || c.chars < 0) throw new BudgetError({ message: `chars must be a non-negative integer (got ${c.chars})` });
    if (!c.guildId || !c.userId) throw new BudgetError({ message: 'guildId and userId are required' });
    if (c.endpoint !== 'standard' && c.endpoint !== 'advanced') throw new BudgetError({ message: `unknown endpoint ${String(c.endpoint)}` });
  }
}

function toUsage(
  scope: BudgetScope,
  rows: { endpoint: Endpoint; reserved: number; charged: number; uncertain: number }[],
  limit: number,
  resetsAt: number,
): Usage {
  const byEndpoint: Record<Endpoint, number> = { standard: 0, advanced: 0 };
  let reserved = 0;
  let charged = 0;
  let uncertain = 0;
  for (const r of rows) {
    byEndpoint[r.endpoint] += r.reserved + r.charged + r.uncertain;
    reserved += r.reserved;
    charged += r.charged;
    uncertain += r.uncertain;
  }
  const used = reserved + charged + uncertain;
  return { scope, used, reserved, charged, uncertain, limit, remaining: Math.max(0, limit - used), resetsAt, byEndpoint };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
