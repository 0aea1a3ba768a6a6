// The reservation policy of the character budget (README "Characters are money"): pure functions
// over numbers the ledger store read, so the rules can change and be tested without a database.

export type BudgetScope = 'user' | 'guild' | 'account';

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

export interface BudgetLimits {
  /** Per user, per guild, per period; a guild's `user_monthly_limit` overrides it. */
  userMonthlyLimit: number;
  /** Per guild, per period; a guild's `guild_monthly_limit` overrides it. */
  guildMonthlyLimit: number;
  /** The whole bot (the account's plan), every guild together. */
  accountMonthlyLimit: number;
}
