import type { AppliedLimit } from '../../billing/policy.ts';
import { UserError } from '../../i18n/errors.ts';
import { t, type Lang } from '../../i18n/texts.ts';

// The operator's ceilings as server admins meet them: a limit above one is refused with both
// numbers (nothing is stored), and a stored limit the ceiling cuts is shown with what was stored.

/** Which limit an admin is setting: the server's, each member's, or a role's allowance. */
export type CeilingScope = 'server' | 'member' | 'role';

const REFUSAL = { server: 'config.ceiling_server', member: 'config.ceiling_member', role: 'config.ceiling_role' } as const;

/** Characters as admins read them (3,000): the same grouping in both languages. */
export function formatChars(n: number): string {
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
