import type { Actor, BotReading, ReadingSettings, ReadingSettingsPatch } from '../../src/db/repositories.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { UserError } from '../../src/discord/errors.ts';

// Whose messages and what is read, changed by an admin: one rule for /reading's switches, its bot
// mode and its required role, and for the web dashboard (the caller has checked Manage Server).
// Each change is audit-logged.

/** What may change at once (absent keeps its value). */
export type ReadingChange = Pick<
  ReadingSettingsPatch,
  'bots' | 'forwards' | 'emoji' | 'requireInVoice' | 'staleNotice' | 'threads' | 'requiredRoleId'
>;

const SWITCH_FIELDS = ['forwards', 'emoji', 'requireInVoice', 'staleNotice', 'threads'] as const;
const BOT_READING: readonly BotReading[] = ['off', 'listed', 'all'];

/**
 * Checks `change` whole, then saves and records it. `roleExists` says whether a role id is a role
 * of this server now (not @everyone, which the caller refuses by the guild's id).
 */
export async function changeReading(
  ctx: Pick<BotContext, 'repos'>,
  guildId: string,
  actor: Actor,
  change: ReadingChange,
  roleExists: (roleId: string) => boolean,
): Promise<ReadingSettings> {
  const patch: ReadingChange = {};
  for (const field of SWITCH_FIELDS) {
    const value: unknown = change[field];
    if (value === undefined) continue;
    if (typeof value !== 'boolean') throw new UserError('config.not_on_off', { vars: { setting: field } });
    patch[field] = value;
  }
  if (change.bots !== undefined) {
    const value: unknown = change.bots;
    if (!BOT_READING.includes(value as BotReading))
      throw new UserError('reading.bad_bots', { vars: { value: String(value).slice(0, 20) } });
    patch.bots = value as BotReading;
  }
  if (change.requiredRoleId !== undefined) {
    const id: unknown = change.requiredRoleId;
    if (id === guildId) throw new UserError('reading.role_everyone');
    if (id !== null && (typeof id !== 'string' || !roleExists(id))) throw new UserError('reading.role_gone');
    patch.requiredRoleId = id;
  }
  const saved = await ctx.repos.reading.update(guildId, patch);
  if (Object.keys(patch).length > 0) await ctx.repos.audit.record(guildId, actor, 'reading', patch);
  return saved;
}
