import type { Db } from '../db/database.ts';
import { GuildSettingsRepo } from '../db/guild-settings.ts';
import type { Charge, LedgerStore, Period, Reservation, ScopeUsage } from './ledger.ts';
import { SqliteLedger } from '../db/sqlite-ledger.ts';
import { definedOnly } from '../db/rows.ts';
import { systemClock, type Clock } from '../util/clock.ts';
import { appliedLimit, billingPeriod, chargeProblem, isServerCharge, memberLimit, refusalFor, toUsage } from './policy.ts';
import type { AppliedLimit, BudgetCeilings, BudgetLimits, BudgetRefusal, CheckResult, ReserveResult, Usage } from './policy.ts';
import { BudgetError } from './errors.ts';

// Characters are the account's money (the service's free plan: 5,000/month shared by every
// server). The ledger follows the service's charging model (docs/operating.md, "Characters are money"): every
// request holds its characters BEFORE it is sent, atomically across all processes sharing the
// database file, and the hold ends in exactly one of: charged (the service charged it), uncertain
// (it may have: counted like charged, never refunded by guesswork), released (nothing charged).
//
// This class applies the limits (src/billing/policy.ts) to a ledger store (src/billing/ledger.ts,
// kept in SQL by src/db/sqlite-ledger.ts). Every method returns a promise, so a store answering over the
// network (the account pool shared by several hosts in PostgreSQL) fits the same interface.

export interface BudgetOptions {
  db: Db;
  /** Where reservations are kept: this host's SQLite ledger (default), or a PooledLedger sharing the account with other hosts. */
  ledger?: LedgerStore;
  clock?: Clock;
  defaults?: Partial<BudgetLimits>;
  /** The operator's ceilings; each unset one is the matching default (roles: the larger ceiling), so nothing is raised. */
  ceilings?: Partial<BudgetCeilings>;
  period?: { anchor?: number; days?: number };
  /** Holds older than this are assumed left by a crashed process and settled (see releaseStale). */
  staleAfterMs?: number;
  /** The ledger recorded a charge of the service (metrics; src/ops/instrument.ts). */
  onCharged?: (charges: readonly Charge[]) => void;
  /** The largest monthly allowance of a member's roles in a guild, if any (role allowances). */
  roleAllowance?: (guildId: string, userId: string) => number | undefined;
}

export const BUDGET_DEFAULTS = {
  clock: systemClock,
  // Free plan (the service's published plans): one user may take a fifth, one guild 60 %.
  // The documented defaults (.env.example); src/config.ts reads them from here.
  defaults: { userMonthlyLimit: 1_000, guildMonthlyLimit: 3_000, accountMonthlyLimit: 5_000 },
  // Billing periods run about 30 days from sign-up; the anchor is any one period start.
  period: { anchor: 0, days: 30 },
  staleAfterMs: 10 * 60_000,
  onCharged: () => {},
} as const satisfies Omit<Required<BudgetOptions>, 'db' | 'ledger' | 'roleAllowance' | 'ceilings'>;

const DAY_MS = 86_400_000;

/** Per-user, per-guild and account-wide character allowances over one ledger. */
export class CharacterBudget {
  readonly #ledger: LedgerStore;
  readonly #settings: GuildSettingsRepo;
  readonly #clock: Clock;
  readonly #defaults: BudgetLimits;
  readonly #ceilings: BudgetCeilings;
  readonly #anchor: number;
  readonly #periodMs: number;
  readonly #staleAfterMs: number;
  readonly #onCharged: (charges: readonly Charge[]) => void;
  readonly #roleAllowance: (guildId: string, userId: string) => number | undefined;

  constructor(options: BudgetOptions) {
    this.#ledger = options.ledger ?? new SqliteLedger(options.db);
    this.#settings = new GuildSettingsRepo(options.db);
    this.#clock = options.clock ?? BUDGET_DEFAULTS.clock;
    this.#defaults = { ...BUDGET_DEFAULTS.defaults, ...definedOnly(options.defaults ?? {}) };
    const ceilings = definedOnly(options.ceilings ?? {});
    const guildCeiling = ceilings.guildMonthlyLimit ?? this.#defaults.guildMonthlyLimit;
    const userCeiling = ceilings.userMonthlyLimit ?? this.#defaults.userMonthlyLimit;
    const roleCeiling = ceilings.roleMonthlyLimit ?? Math.max(guildCeiling, userCeiling);
    this.#ceilings = { guildMonthlyLimit: guildCeiling, userMonthlyLimit: userCeiling, roleMonthlyLimit: roleCeiling };
    this.#anchor = options.period?.anchor ?? BUDGET_DEFAULTS.period.anchor;
    this.#periodMs = (options.period?.days ?? BUDGET_DEFAULTS.period.days) * DAY_MS;
    this.#staleAfterMs = options.staleAfterMs ?? BUDGET_DEFAULTS.staleAfterMs;
    this.#onCharged = options.onCharged ?? BUDGET_DEFAULTS.onCharged;
    this.#roleAllowance = options.roleAllowance ?? (() => undefined);
  }

  /** The billing period containing now: [start, end) in ms. */
  currentPeriod(): Period {
    return billingPeriod(this.#clock.now(), this.#anchor, this.#periodMs);
  }

  /** The operator's ceilings on what a server's admins may set. */
  get ceilings(): BudgetCeilings {
    return this.#ceilings;
  }

  /** A guild's server and member limits as they apply: stored (else default), capped by the ceilings. */
  appliedLimits(guildId: string): { guild: AppliedLimit; user: AppliedLimit } {
    const settings = this.#settings.get(guildId);
    return {
      guild: appliedLimit(settings.guildMonthlyLimit, this.#defaults.guildMonthlyLimit, this.#ceilings.guildMonthlyLimit),
      user: appliedLimit(settings.userMonthlyLimit, this.#defaults.userMonthlyLimit, this.#ceilings.userMonthlyLimit),
    };
  }

  /** A role allowance as it applies (an allowance stored above the role ceiling counts as the ceiling). */
  appliedRoleAllowance(stored: number): AppliedLimit {
    return appliedLimit(stored, stored, this.#ceilings.roleMonthlyLimit);
  }

  /** The limits that apply in a guild (its own overrides, else the bot's defaults; never above the ceilings). */
  limitsFor(guildId: string): BudgetLimits {
    const applied = this.appliedLimits(guildId);
    return {
      userMonthlyLimit: applied.user.value,
      guildMonthlyLimit: applied.guild.value,
      accountMonthlyLimit: this.#defaults.accountMonthlyLimit,
    };
  }

  /** A member's monthly limit in a guild: the guild's member limit, or their roles' larger allowance (within the role ceiling). */
  userLimitFor(guildId: string, userId: string): number {
    return memberLimit(this.limitsFor(guildId).userMonthlyLimit, this.#roleAllowance(guildId, userId), this.#ceilings.roleMonthlyLimit);
  }

  /** Whether `charges` would be reserved now (nothing is held): for refusing before answering. */
  async check(charges: readonly Charge[]): Promise<CheckResult> {
    validate(charges);
    const period = this.currentPeriod();
    const refusal = this.#refusal(charges, await this.#ledger.usage(period), period);
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
    const now = this.#clock.now();
    const period = this.currentPeriod();
    const request = {
      charges,
      period,
      now,
      staleBefore: now - this.#staleAfterMs,
      ...(options.audioKey !== undefined ? { audioKey: options.audioKey } : {}),
    };
    return this.#ledger.reserve(request, (usage) => this.#refusal(charges, usage, period));
  }

  /**
   * The first attempt is about to leave for the service. From now on a crash leaves the hold
   * uncertain instead of releasing it. If the hold was settled meanwhile (judged stale), the
   * characters are held again under a new reservation, or refused: nothing is sent then.
   */
  async markSent(reservation: Reservation): Promise<ReserveResult> {
    if (reservation.free || reservation.total === 0) return { ok: true, reservation };
    if (await this.#ledger.markSent(reservation, this.#clock.now())) return { ok: true, reservation };
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
    const result = await this.#ledger.charge(reservation, info, this.#clock.now());
    if (result === 'charged') this.#onCharged(reservation.charges);
    return result;
  }

  /**
   * The service may have charged this reservation (aborted in flight, 5xx, timeout): it keeps
   * counting against every limit. Standard audio already paid for is free whatever happened.
   */
  async uncertain(reservation: Reservation): Promise<void> {
    if (!reservation.free) await this.#ledger.uncertain(reservation, this.#clock.now());
  }

  /** Nothing was charged (not sent, refused, notice audio): free the hold. Idempotent; settled holds stay. */
  async release(reservation: Reservation): Promise<void> {
    if (!reservation.free) await this.#ledger.release(reservation, this.#clock.now());
  }

  /** The job failed and the service gave its characters back. Returns whether a charge was refunded. */
  async refundJob(jobId: string): Promise<boolean> {
    return this.#ledger.refundJob(jobId, this.#clock.now());
  }

  /**
   * A job exists at the service (it was charged at creation) but the ledger has no charge for it
   * (created by a process that died before recording it): record it now. Idempotent per job.
   */
  async recordJobCharge(jobId: string, charges: readonly Charge[]): Promise<boolean> {
    validate(charges);
    const recorded = await this.#ledger.recordJobCharge(jobId, charges, this.currentPeriod(), this.#clock.now());
    if (recorded) this.#onCharged(charges);
    return recorded;
  }

  /**
   * Settles holds older than `staleAfterMs` (left by a crashed process): released when nothing
   * was sent, uncertain when it was. Returns how many rows.
   */
  async releaseStale(): Promise<number> {
    const now = this.#clock.now();
    return this.#ledger.settleStale(now - this.#staleAfterMs, now);
  }

  /** This period's usage of a user in a guild (with userId) or of a whole guild. */
  async usage(scope: { guildId: string; userId?: string }): Promise<Usage> {
    const period = this.currentPeriod();
    const limits = this.limitsFor(scope.guildId);
    const totals = await this.#ledger.totals(scope, period);
    return scope.userId
      ? toUsage('user', totals, this.userLimitFor(scope.guildId, scope.userId), period.end)
      : toUsage('guild', totals, limits.guildMonthlyLimit, period.end);
  }

  /** This period's usage of the whole bot (the account). */
  async accountUsage(): Promise<Usage> {
    const period = this.currentPeriod();
    return toUsage('account', await this.#ledger.totals({}, period), this.#defaults.accountMonthlyLimit, period.end);
  }

  /** The guild's `n` biggest spending members this period, most first (the server's own clips are not a member). */
  async topSpenders(guildId: string, n = 10): Promise<{ userId: string; used: number }[]> {
    const top = await this.#ledger.topSpenders(guildId, this.currentPeriod(), n + 1);
    return top.filter((s) => !isServerCharge({ guildId, userId: s.userId })).slice(0, n);
  }

  #refusal(charges: readonly Charge[], usage: ScopeUsage, period: Period): BudgetRefusal | undefined {
    return refusalFor({
      charges,
      usage,
      limitsOf: (guildId) => this.limitsFor(guildId),
      userLimitOf: (guildId, userId) => this.userLimitFor(guildId, userId),
      accountLimit: this.#defaults.accountMonthlyLimit,
      resetsAt: period.end,
    });
  }
}

function validate(charges: readonly Charge[]): void {
  const problem = chargeProblem(charges);
  if (problem !== undefined) throw new BudgetError({ message: problem });
}
