import type { Charge, Endpoint, EndpointTotals, Period, Reservation, ScopeUsage } from './ledger.ts';

// The reservation policy of the character budget (docs/operating.md, "Characters are money"): pure functions
// over numbers the ledger store read, so the rules can change and be tested without a database.

type BudgetScope = 'user' | 'guild' | 'account';

/** Why a reservation was refused, with the numbers to show the user. */
export interface BudgetRefusal {
  scope: BudgetScope;
  /** The guild whose limit (or whose user's limit) was hit; absent for the account scope. */
  guildId?: string;
  /** The user whose limit was hit (user scope only). */
  userId?: string;
  /** Characters reserved, charged or uncertain in this scope this period. */
  used: number;
  limit: number;
  /** Characters this reservation asked for in this scope. */
  requested: number;
  remaining: number;
  /** When the period ends and the usage starts again from zero (ms). */
  resetsAt: number;
}

export type ReserveResult = { ok: true; reservation: Reservation } | { ok: false; refusal: BudgetRefusal };
export type CheckResult = { ok: true } | { ok: false; refusal: BudgetRefusal };

export interface BudgetLimits {
  /** Per user, per guild, per period; a guild's `user_monthly_limit` overrides it. */
  userMonthlyLimit: number;
  /** Per guild, per period; a guild's `guild_monthly_limit` overrides it. */
  guildMonthlyLimit: number;
  /** The whole bot (the account's plan), every guild together. */
  accountMonthlyLimit: number;
}

/**
 * The operator's ceilings (GUILD/USER/ROLE_MONTHLY_CHARS_MAX): a server's admins set its limits
 * within them, and a value stored above one (set before it existed, or under a higher one) applies
 * as the ceiling. They keep one server from spending the account's whole allowance.
 */
export interface BudgetCeilings {
  /** Highest server limit (/config server-limit). */
  guildMonthlyLimit: number;
  /** Highest member limit (/config user-limit). */
  userMonthlyLimit: number;
  /** Highest role allowance (/spend role-limit). */
  roleMonthlyLimit: number;
}

/** A limit as it applies: what the server stored (null: the bot's default), and whether the ceiling cut it. */
export interface AppliedLimit {
  value: number;
  stored: number | null;
  capped: boolean;
}

/** The limit that applies: the stored value (else the default), never above the operator's ceiling. */
export function appliedLimit(stored: number | null | undefined, fallback: number, ceiling: number): AppliedLimit {
  const wanted = stored ?? fallback;
  return { value: Math.min(wanted, ceiling), stored: stored ?? null, capped: wanted > ceiling };
}

/** What a scope has counted against its limit this period (docs/operating.md, "Characters are money"). */
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

/**
 * A member's limit: the guild's member limit, or the largest allowance of their roles when that is
 * larger; an allowance above the operator's role ceiling counts as the ceiling.
 */
export function memberLimit(guildLimit: number, roleAllowance: number | undefined, roleCeiling = Infinity): number {
  const role = roleAllowance === undefined ? undefined : Math.min(roleAllowance, roleCeiling);
  return role !== undefined && role > guildLimit ? role : guildLimit;
}

/**
 * Clips the bot makes on its own (announcements, notices) are charged to the server, not to a
 * member: their charges carry the guild's id as the user id, which no member has, and
 * only the server's and the account's limits apply to them.
 */
export function serverChargeUser(guildId: string): string {
  return guildId;
}

/** Whether a charge is the server's own (see serverChargeUser). */
export function isServerCharge(c: { guildId: string; userId: string }): boolean {
  return c.userId === c.guildId;
}

/** The billing period containing `now`: [start, end) in ms, periods of `periodMs` from any one start `anchor`. */
export function billingPeriod(now: number, anchor: number, periodMs: number): Period {
  const start = anchor + Math.floor((now - anchor) / periodMs) * periodMs;
  return { start, end: start + periodMs };
}

/** What is wrong with `charges` (a programming error, not a refusal), or undefined. */
export function chargeProblem(charges: readonly Charge[]): string | undefined {
  for (const c of charges) {
    if (!Number.isSafeInteger(c.chars) || c.chars < 0) return `chars must be a non-negative integer (got ${c.chars})`;
    if (!c.guildId || !c.userId) return 'guildId and userId are required';
    if (c.endpoint !== 'standard' && c.endpoint !== 'advanced') return `unknown endpoint ${String(c.endpoint)}`;
    if (c.channels) {
      if (c.channels.some((p) => !p.channelId || !Number.isSafeInteger(p.chars) || p.chars < 0))
        return 'channel parts need an id and chars';
      const sum = c.channels.reduce((n, p) => n + p.chars, 0);
      if (sum !== c.chars) return `channel parts must sum to the charge (got ${sum} of ${c.chars})`;
    }
  }
  return undefined;
}

/**
 * The first scope `charges` would take over its limit, or undefined when every one has room:
 * each member (their charges summed), then each guild, then the account. A scope asked for 0
 * characters is never refused.
 */
export function refusalFor(request: {
  charges: readonly Charge[];
  usage: ScopeUsage;
  limitsOf: (guildId: string) => BudgetLimits;
  /** A member's own limit where it differs from the guild's (role allowances); default the guild's. */
  userLimitOf?: (guildId: string, userId: string) => number;
  accountLimit: number;
  resetsAt: number;
}): BudgetRefusal | undefined {
  const { usage, resetsAt } = request;
  const perUser = new Map<string, { guildId: string; userId: string; chars: number }>();
  const perGuild = new Map<string, number>();
  let total = 0;
  for (const c of request.charges) {
    const key = `${c.guildId}\u0000${c.userId}`;
    const u = perUser.get(key) ?? { guildId: c.guildId, userId: c.userId, chars: 0 };
    u.chars += c.chars;
    perUser.set(key, u);
    perGuild.set(c.guildId, (perGuild.get(c.guildId) ?? 0) + c.chars);
    total += c.chars;
  }
  const refuse = (r: Omit<BudgetRefusal, 'remaining' | 'resetsAt'>): BudgetRefusal => ({
    ...r,
    remaining: Math.max(0, r.limit - r.used),
    resetsAt,
  });
  const limits = new Map<string, BudgetLimits>();
  const limitsOf = (guildId: string) => limits.get(guildId) ?? limits.set(guildId, request.limitsOf(guildId)).get(guildId)!;
  for (const u of perUser.values()) {
    if (u.chars === 0 || isServerCharge(u)) continue;
    const limit = request.userLimitOf?.(u.guildId, u.userId) ?? limitsOf(u.guildId).userMonthlyLimit;
    const used = usage.user(u.guildId, u.userId);
    if (used + u.chars > limit) return refuse({ scope: 'user', guildId: u.guildId, userId: u.userId, used, limit, requested: u.chars });
  }
  for (const [guildId, chars] of perGuild) {
    if (chars === 0) continue;
    const limit = limitsOf(guildId).guildMonthlyLimit;
    const used = usage.guild(guildId);
    if (used + chars > limit) return refuse({ scope: 'guild', guildId, used, limit, requested: chars });
  }
  if (total > 0) {
    const used = usage.account();
    if (used + total > request.accountLimit) return refuse({ scope: 'account', used, limit: request.accountLimit, requested: total });
  }
  return undefined;
}

/** A scope's usage from its totals by endpoint. */
export function toUsage(scope: BudgetScope, totals: readonly EndpointTotals[], limit: number, resetsAt: number): Usage {
  const byEndpoint: Record<Endpoint, number> = { standard: 0, advanced: 0 };
  let reserved = 0;
  let charged = 0;
  let uncertain = 0;
  for (const t of totals) {
    byEndpoint[t.endpoint] += t.reserved + t.charged + t.uncertain;
    reserved += t.reserved;
    charged += t.charged;
    uncertain += t.uncertain;
  }
  const used = reserved + charged + uncertain;
  return { scope, used, reserved, charged, uncertain, limit, remaining: Math.max(0, limit - used), resetsAt, byEndpoint };
}
