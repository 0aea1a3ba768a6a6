import type { AppliedLimit } from '../billing/policy.ts';
import type { GuildControls } from '../domain/controls.ts';
import type { Actor } from '../domain/audit.ts';
import { UserError } from '../i18n/errors.ts';
import { t, type Lang } from '../i18n/texts.ts';
import type { UseCaseDeps } from './deps.ts';

// The operator's ceilings as server admins meet them: a limit above one is refused with both
// numbers (nothing is stored), and a stored limit the ceiling cuts is shown with what was stored.

/** Which limit an admin is setting: the server's, each member's, or a role's allowance. */
type CeilingScope = 'server' | 'member' | 'role';

const REFUSAL = { server: 'config.ceiling_server', member: 'config.ceiling_member', role: 'config.ceiling_role' } as const;

/** Characters as admins read them (3,000): the same grouping in both languages. */
function formatChars(n: number): string {
  return n.toLocaleString('en-US');
}

/** Refuses `value` above the operator's `ceiling` with both numbers (an ephemeral UserError; nothing is stored). */
export function requireWithinCeiling(scope: CeilingScope, value: number, ceiling: number): void {
  if (value <= ceiling) return;
  throw new UserError(REFUSAL[scope], { vars: { max: formatChars(ceiling), value: formatChars(value) } });
}

/** A limit as /config show writes it: "3,000 characters", or "50,000 characters (stored 2,000,000; capped ...)". */
export function shownLimit(lang: Lang, limit: AppliedLimit): string {
  if (!limit.capped || limit.stored === null) return t(lang, 'config.limit_value', { value: formatChars(limit.value) });
  return t(lang, 'config.limit_capped', { value: formatChars(limit.value), stored: formatChars(limit.stored) });
}

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
  ctx: Pick<UseCaseDeps, 'repos' | 'budget'>,
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
export async function removeRoleAllowance(ctx: Pick<UseCaseDeps, 'repos'>, guildId: string, actor: Actor, roleId: string): Promise<void> {
  if (!(await ctx.repos.roleAllowances.remove(guildId, roleId)))
    throw new UserError('spend.role_not_found', { vars: { role: `<@&${roleId}>` } });
  await ctx.repos.audit.record(guildId, actor, 'roles.remove', { roleId });
}

// Two controls admins set beside the limits: who besides Manage Server edits the dictionary
// (/dictionary editors) and from how many characters /narrate asks first (/spend narrate-confirm).
// One rule for those commands and the web dashboard (the caller has checked Manage Server).

/** Bounds of /spend narrate-confirm (characters; 0: always ask). */
export const NARRATE_CONFIRM_RANGE = { min: 0, max: 3000 } as const;

export interface ControlsChange {
  /** A role of the server (checked by `roleExists`), or null for Manage Server only. */
  dictionaryRoleId?: string | null | undefined;
  narrateConfirmChars?: number | undefined;
}

/** Each control by the command and subcommand that sets it (how the audit log names it). */
export const CONTROL_COMMANDS: Record<keyof ControlsChange, string> = {
  dictionaryRoleId: 'dictionary editors',
  narrateConfirmChars: 'spend narrate-confirm',
};

/** Checks `change` whole, then saves and records it. */
export async function changeControls(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  change: ControlsChange,
  roleExists: (roleId: string) => boolean,
): Promise<GuildControls> {
  const patch: ControlsChange = {};
  if (change.dictionaryRoleId !== undefined) {
    const id: unknown = change.dictionaryRoleId;
    if (id !== null && (typeof id !== 'string' || id === guildId || !roleExists(id)))
      throw new UserError('roles.unknown', { vars: { role: String(id).slice(0, 30) } });
    patch.dictionaryRoleId = id;
  }
  if (change.narrateConfirmChars !== undefined) {
    const chars: unknown = change.narrateConfirmChars;
    const { min, max } = NARRATE_CONFIRM_RANGE;
    if (typeof chars !== 'number' || !Number.isSafeInteger(chars) || chars < min || chars > max)
      throw new UserError('config.out_of_range', { vars: { setting: 'narrate-confirm', min, max } });
    patch.narrateConfirmChars = chars;
  }
  const saved = await ctx.repos.controls.update(guildId, patch);
  if (Object.keys(patch).length > 0) await ctx.repos.audit.record(guildId, actor, 'controls', { ...patch });
  return saved;
}
