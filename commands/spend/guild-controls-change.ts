import type { GuildControls } from '../../src/domain/controls.ts';
import type { Actor } from '../../src/domain/audit.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/i18n/errors.ts';

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
  ctx: Pick<BotContext, 'repos'>,
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
