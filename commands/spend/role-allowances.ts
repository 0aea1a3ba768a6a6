import type { Actor } from '../../src/domain/audit.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { requireWithinCeiling } from '../../src/discord/interactions/limits.ts';

// Role allowances changed by an admin (a role's members get a larger monthly limit): one rule for
// /spend and the web dashboard (the caller has checked Manage Server), each change audit-logged.

/** Bounds of an allowance in characters (the operator's ROLE_MONTHLY_CHARS_MAX is checked after). */
export const ROLE_ALLOWANCE_RANGE = { min: 1, max: 10_000_000 } as const;

/**
 * Gives `roleId` (which the caller found to exist in the server) `chars` a month per member:
 * refused outside the bounds or above the operator's ceiling, nothing changed. Resolves with the
 * server's member limit, which an allowance below it does not raise.
 */
export async function setRoleAllowance(
  ctx: Pick<BotContext, 'repos' | 'budget'>,
  guildId: string,
  actor: Actor,
  roleId: string,
  chars: unknown,
): Promise<{ base: number }> {
  const { min, max } = ROLE_ALLOWANCE_RANGE;
  // A number as typed, as every other number is taken: never "1e3" or true turned into one.
  if (typeof chars !== 'number' || !Number.isSafeInteger(chars) || chars < min || chars > max)
    throw new UserError('config.out_of_range', { vars: { setting: 'chars', min, max } });
  requireWithinCeiling('role', chars, ctx.budget.ceilings.roleMonthlyLimit);
  await ctx.repos.roleAllowances.set(guildId, roleId, chars);
  await ctx.repos.audit.record(guildId, actor, 'roles.set', { roleId, chars });
  return { base: ctx.budget.limitsFor(guildId).userMonthlyLimit };
}

/** Removes the role's allowance (by id: a deleted role's too); refused when it had none. */
export async function removeRoleAllowance(ctx: Pick<BotContext, 'repos'>, guildId: string, actor: Actor, roleId: string): Promise<void> {
  if (!(await ctx.repos.roleAllowances.remove(guildId, roleId)))
    throw new UserError('spend.role_not_found', { vars: { role: `<@&${roleId}>` } });
  await ctx.repos.audit.record(guildId, actor, 'roles.remove', { roleId });
}
