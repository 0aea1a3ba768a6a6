import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { Endpoint } from '../db/repositories.ts';
import { systemClock, type Clock } from '../util/clock.ts';

// Characters are the account's money (notes/service-facts.md: free plan 5,000/month shared by every
// server). Every request reserves its characters here BEFORE it is sent, atomically across all
// processes sharing the database file (BEGIN IMMEDIATE), and commits them once the service charged
// them, or releases them when nothing was charged (cache hit, request refused before sending).

/** One author's share of a request (a coalesced request charges several authors at once). */
export interface Charge {
  guildId: string;
  userId: string;
  endpoint: Endpoint;
  /** Counted by the caller with `countChars` (src/tts/chars.ts). */
  chars: number;
}

/** Characters held for a request. Plain data: it may be stored and committed by another process. */
export interface Reservation {
  readonly id: string;
  readonly periodStart: number;
  readonly charges: readonly Charge[];
  readonly total: number;
  readonly createdAt: number;
}

export type BudgetScope = 'user' | 'guild' | 'account';

/** Why a reservation was refused, with the numbers to show the user. */
export interface BudgetRefusal {
  scope: BudgetScope;
  /** The guild whose limit (or whose user's limit) was hit; absent for the account scope. */
  guildId?: string;
  /** The user whose limit was hit (user scope only). */
  userId?: string;
  /** Characters already reserved or committed in this scope this period. */
  used: number;
  limit: number;
  /** Characters this reservation asked for in this scope. */
  requested: number;
  remaining: number;
  /** When the period ends and the usage starts again from zero (ms). */
  resetsAt: number;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; refusal: BudgetRefusal };

export interface Usage {
  scope: BudgetScope;
  /** Committed + reserved characters this period. */
  used: number;
  /** Of `used`, held by requests not yet settled. */
  reserved: number;
  limit: number;
  remaining: number;
  resetsAt: number;
  byEndpoint: Record<Endpoint, number>;
}

export interface BudgetLimits {
  /** Per user, per guild, per period; a guild's `user_monthly_limit` overrides it. */
  userMonthlyLimit: number;
  /** Per guild, per period; a guild's `guild_monthly_limit` overrides it. */
  guildMonthlyLimit: number;
  /** The whole bot (the account's plan), every guild together. */
  accountMonthlyLimit: number;
}

export interface BudgetOptions {
  db: Db;
  clock?: Clock;
  defaults?: Partial<BudgetLimits>;
  period?: { anchor?: number; days?: number };
  /** Reservations older than this are assumed abandoned by a crashed process and released. */
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

export type BudgetErrorCode = 'invalid_charge';

/** A programming error in what was asked of the budget (not a refusal, which is a result). */
export class BudgetError extends Error {
  override name = 'BudgetError';
  readonly code: BudgetErrorCode;
  constructor(code: BudgetErrorCode, message: string) {
    super(message);
    this.code = code;
  }
}

const DAY_MS = 86_400_000;

/** Per-user, per-guild and account-wide character allowances over one SQLite ledger. */
export class CharacterBudget {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #defaults: BudgetLimits;
  readonly #anchor: number;
  readonly #periodMs: number;
  readonly #staleAfterMs: number;

  readonly #sumUser;
  readonly #sumGuild;
  readonly #sumAccount;
  readonly #byEndpointUser;
  readonly #byEndpointGuild;
  readonly #byEndpointAccount;
  readonly #guildLimits;
  readonly #insert;
  readonly #commit;
  readonly #countRows;
  readonly #release;
  readonly #releaseStale;
  readonly #top;

  constructor(options: BudgetOptions) {
    this.#db = options.db;
    this.#clock = options.clock ?? BUDGET_DEFAULTS.clock;
    this.#defaults = { ...BUDGET_DEFAULTS.defaults, ...definedOnly(options.defaults ?? {}) };
    this.#anchor = options.period?.anchor ?? BUDGET_DEFAULTS.period.anchor;
    this.#periodMs = (options.period?.days ?? BUDGET_DEFAULTS.period.days) * DAY_MS;
    this.#staleAfterMs = options.staleAfterMs ?? BUDGET_DEFAULTS.staleAfterMs;

    const db = this.#db;
    // Periods are matched by range, not equality, so rows survive a corrected anchor.
    const inPeriod = 'period_start >= @start AND period_start < @end';
    type P = { start: number; end: number };
    this.#sumUser = db
      .prepare<[P & { guild: string; user: string }], number>(
        `SELECT COALESCE(SUM(chars), 0) FROM character_ledger WHERE ${inPeriod} AND guild_id = @guild AND user_id = @user`,
      )
      .pluck();
    this.#sumGuild = db
      .prepare<[P & { guild: string }], number>(`SELECT COALESCE(SUM(chars), 0) FROM character_ledger WHERE ${inPeriod} AND guild_id = @guild`)
      .pluck();
    this.#sumAccount = db.prepare<[P], number>(`SELECT COALESCE(SUM(chars), 0) FROM character_ledger WHERE ${inPeriod}`).pluck();
    const byEndpoint = `SELECT endpoint, state, SUM(chars) AS chars FROM character_ledger WHERE ${inPeriod}`;
    type EndpointRow = { endpoint: Endpoint; state: 'reserved' | 'committed'; chars: number };
    this.#byEndpointUser = db.prepare<[P & { guild: string; user: string }], EndpointRow>(
      `${byEndpoint} AND guild_id = @guild AND user_id = @user GROUP BY endpoint, state`,
    );
    this.#byEndpointGuild = db.prepare<[P & { guild: string }], EndpointRow>(`${byEndpoint} AND guild_id = @guild GROUP BY endpoint, state`);
    this.#byEndpointAccount = db.prepare<[P], EndpointRow>(`${byEndpoint} GROUP BY endpoint, state`);
    this.#guildLimits = db.prepare<[string], { user_monthly_limit: number | null; guild_monthly_limit: number | null }>(
      'SELECT user_monthly_limit, guild_monthly_limit FROM guild_settings WHERE guild_id = ?',
    );
    this.#insert = db.prepare<[string, string, string, number, Endpoint, number, 'reserved' | 'committed', number, number | null]>(
      `INSERT INTO character_ledger (reservation_id, guild_id, user_id, period_start, endpoint, chars, state, created_at, settled_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#commit = db.prepare<[number, string]>(
      "UPDATE character_ledger SET state = 'committed', settled_at = ? WHERE reservation_id = ? AND state = 'reserved'",
    );
    this.#countRows = db.prepare<[string], number>('SELECT COUNT(*) FROM character_ledger WHERE reservation_id = ?').pluck();
    this.#release = db.prepare<[string]>("DELETE FROM character_ledger WHERE reservation_id = ? AND state = 'reserved'");
    this.#releaseStale = db.prepare<[number]>("DELETE FROM character_ledger WHERE state = 'reserved' AND created_at < ?");
    this.#top = db.prepare<[P & { guild: string; n: number }], { userId: string; used: number }>(
      `SELECT user_id AS userId, SUM(chars) AS used FROM character_ledger WHERE ${inPeriod} AND guild_id = @guild
       GROUP BY user_id ORDER BY used DESC, user_id LIMIT @n`,
    );

    // A process that crashed between reserve and commit/release left characters held: free them.
    this.releaseStale();
  }

  /** The billing period containing now: [start, end) in ms. */
  currentPeriod(): { start: number; end: number } {
    const now = this.#clock.now();
    const start = this.#anchor + Math.floor((now - this.#anchor) / this.#periodMs) * this.#periodMs;
    return { start, end: start + this.#periodMs };
  }

  /** The limits that apply in a guild (its own overrides, else the bot's defaults). */
  limitsFor(guildId: string): BudgetLimits {
    const row = this.#guildLimits.get(guildId);
    return {
      userMonthlyLimit: row?.user_monthly_limit ?? this.#defaults.userMonthlyLimit,
      guildMonthlyLimit: row?.guild_monthly_limit ?? this.#defaults.guildMonthlyLimit,
      accountMonthlyLimit: this.#defaults.accountMonthlyLimit,
    };
  }

  /**
   * Holds the characters of every charge, or none: refused when any user, guild or the account
   * would go over its limit. Atomic across processes sharing the database file.
   */
  reserve(charges: readonly Charge[]): ReserveResult {
    for (const c of charges) {
      if (!Number.isSafeInteger(c.chars) || c.chars < 0) throw new BudgetError('invalid_charge', `chars must be a non-negative integer (got ${c.chars})`);
      if (!c.guildId || !c.userId) throw new BudgetError('invalid_charge', 'guildId and userId are required');
      if (c.endpoint !== 'standard' && c.endpoint !== 'advanced') throw new BudgetError('invalid_charge', `unknown endpoint ${String(c.endpoint)}`);
    }
    // IMMEDIATE takes the write lock before reading the sums, so no other process can reserve
    // between our check and our insert (a DEFERRED transaction would let two both pass the check).
    return this.#db
      .transaction((): ReserveResult => {
        const now = this.#clock.now();
        this.#releaseStale.run(now - this.#staleAfterMs);
        const period = this.currentPeriod();
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
        const refuse = (r: Omit<BudgetRefusal, 'remaining' | 'resetsAt'>): ReserveResult => ({
          ok: false,
          refusal: { ...r, remaining: Math.max(0, r.limit - r.used), resetsAt: period.end },
        });

        const limits = new Map<string, BudgetLimits>();
        const limitsOf = (guildId: string) => {
          let l = limits.get(guildId);
          if (!l) limits.set(guildId, (l = this.limitsFor(guildId)));
          return l;
        };
        for (const u of perUser.values()) {
          if (u.chars === 0) continue;
          const limit = limitsOf(u.guildId).userMonthlyLimit;
          const used = this.#sumUser.get({ ...p, guild: u.guildId, user: u.userId }) ?? 0;
          if (used + u.chars > limit) return refuse({ scope: 'user', guildId: u.guildId, userId: u.userId, used, limit, requested: u.chars });
        }
        for (const [guildId, chars] of perGuild) {
          if (chars === 0) continue;
          const limit = limitsOf(guildId).guildMonthlyLimit;
          const used = this.#sumGuild.get({ ...p, guild: guildId }) ?? 0;
          if (used + chars > limit) return refuse({ scope: 'guild', guildId, used, limit, requested: chars });
        }
        if (total > 0) {
          const limit = this.#defaults.accountMonthlyLimit;
          const used = this.#sumAccount.get(p) ?? 0;
          if (used + total > limit) return refuse({ scope: 'account', used, limit, requested: total });
        }

        const id = randomUUID();
        for (const c of charges) {
          if (c.chars > 0) this.#insert.run(id, c.guildId, c.userId, period.start, c.endpoint, c.chars, 'reserved', now, null);
        }
        const reservation: Reservation = { id, periodStart: period.start, charges: charges.map((c) => ({ ...c })), total, createdAt: now };
        return { ok: true, reservation };
      })
      .immediate();
  }

  /**
   * The service charged the characters: keep them. Idempotent. If the reservation was released in
   * the meantime (judged stale), its charges are recorded again, since the money was spent anyway.
   */
  commit(reservation: Reservation): void {
    this.#db
      .transaction(() => {
        const now = this.#clock.now();
        this.#commit.run(now, reservation.id);
        if (reservation.total > 0 && (this.#countRows.get(reservation.id) ?? 0) === 0) {
          for (const c of reservation.charges) {
            if (c.chars > 0) this.#insert.run(reservation.id, c.guildId, c.userId, reservation.periodStart, c.endpoint, c.chars, 'committed', reservation.createdAt, now);
          }
        }
      })
      .immediate();
  }

  /** Nothing was charged (cache hit, request not sent, service refused): free the characters. Idempotent; a committed reservation stays. */
  release(reservation: Reservation): void {
    this.#release.run(reservation.id);
  }

  /** Frees reservations older than `staleAfterMs` (left by a crashed process); returns how many rows. */
  releaseStale(): number {
    return this.#releaseStale.run(this.#clock.now() - this.#staleAfterMs).changes;
  }

  /** This period's usage of a user in a guild (with userId) or of a whole guild. */
  usage(scope: { guildId: string; userId?: string }): Usage {
    const period = this.currentPeriod();
    const p = { start: period.start, end: period.end };
    const limits = this.limitsFor(scope.guildId);
    if (scope.userId !== undefined) {
      return toUsage('user', this.#byEndpointUser.all({ ...p, guild: scope.guildId, user: scope.userId }), limits.userMonthlyLimit, period.end);
    }
    return toUsage('guild', this.#byEndpointGuild.all({ ...p, guild: scope.guildId }), limits.guildMonthlyLimit, period.end);
  }

  /** This period's usage of the whole bot (the account). */
  accountUsage(): Usage {
    const period = this.currentPeriod();
    return toUsage('account', this.#byEndpointAccount.all({ start: period.start, end: period.end }), this.#defaults.accountMonthlyLimit, period.end);
  }

  /** The guild's `n` biggest spenders this period, most first. */
  topSpenders(guildId: string, n = 10): { userId: string; used: number }[] {
    const period = this.currentPeriod();
    return this.#top.all({ start: period.start, end: period.end, guild: guildId, n });
  }
}

function toUsage(
  scope: BudgetScope,
  rows: { endpoint: Endpoint; state: 'reserved' | 'committed'; chars: number }[],
  limit: number,
  resetsAt: number,
): Usage {
  const byEndpoint: Record<Endpoint, number> = { standard: 0, advanced: 0 };
  let used = 0;
  let reserved = 0;
  for (const r of rows) {
    byEndpoint[r.endpoint] += r.chars;
    used += r.chars;
    if (r.state === 'reserved') reserved += r.chars;
  }
  return { scope, used, reserved, limit, remaining: Math.max(0, limit - used), resetsAt, byEndpoint };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
