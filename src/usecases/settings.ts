import type { GuildSettings, GuildSettingsPatch } from '../domain/guild-settings.ts';
import type { Actor } from '../domain/audit.ts';
import { UserError } from '../i18n/errors.ts';
import { checkVolume } from './member-voice.ts';
import { requireWithinCeiling } from './limits.ts';
import { confirmVoice, isKnownVoice } from './voices.ts';
import type { UseCaseDeps } from './deps.ts';
import { TEXT_CHANNELS_PER_CALL } from '../domain/read-channels.ts';

// A server's settings changed by an admin: one validation and one write for /config and the web
// dashboard alike. The caller has checked Manage Server; bad input is refused with a UserError
// before anything is written, and every change is recorded in the audit log.

/** Highest server monthly limit accepted (characters); the operator's ceiling (GUILD_MONTHLY_CHARS_MAX) is checked after. */
export const GUILD_LIMIT_MAX = 100_000_000;

/** The bounds of each numeric setting (the /config options declare the same numbers from here). */
export const SETTING_RANGES = {
  speed: { min: 0.3, max: 4, integer: false },
  pitch: { min: -20, max: 20, integer: false },
  maxLength: { min: 10, max: 500, integer: true },
  // 1: a long message is cut at the max length; up to the service's fastest speed (src/speech/text/fast-reading.ts).
  fastReadingCeiling: { min: 1, max: 4, integer: false },
  textChannelsPerCall: { min: TEXT_CHANNELS_PER_CALL.min, max: TEXT_CHANNELS_PER_CALL.max, integer: true },
  userMonthlyLimit: { min: 0, max: 1_000_000, integer: true },
  guildMonthlyLimit: { min: 0, max: GUILD_LIMIT_MAX, integer: true },
} as const;

/** Each setting by its /config subcommand's name, as a refusal names it. */
/** Each setting by its /config subcommand (how refusals and the audit log name it). */
export const SETTING_NAMES: Record<keyof SettingsChange, string> = {
  voice: 'voice',
  speed: 'speed',
  pitch: 'pitch',
  readAuthorNames: 'read-names',
  announceJoinLeave: 'announce',
  maxLength: 'max-length',
  fastReadingCeiling: 'fast-reading',
  ignorePrefix: 'ignore-prefix',
  userMonthlyLimit: 'user-limit',
  guildMonthlyLimit: 'server-limit',
  autoJoinChannelId: 'auto-join',
  textChannelsPerCall: 'text-channels',
  locale: 'language',
};

/** Length bounds of the ignore prefix. */
export const IGNORE_PREFIX_LENGTH = { min: 1, max: 5 } as const;

/** What an admin may change at once (each field optional; an absent one keeps its value). */
export type SettingsChange = Pick<
  GuildSettingsPatch,
  | 'voice'
  | 'speed'
  | 'pitch'
  | 'readAuthorNames'
  | 'announceJoinLeave'
  | 'maxLength'
  | 'fastReadingCeiling'
  | 'ignorePrefix'
  | 'userMonthlyLimit'
  | 'guildMonthlyLimit'
  | 'autoJoinChannelId'
  | 'textChannelsPerCall'
  | 'locale'
>;

const FIELDS = [
  'voice',
  'speed',
  'pitch',
  'readAuthorNames',
  'announceJoinLeave',
  'maxLength',
  'fastReadingCeiling',
  'ignorePrefix',
  'userMonthlyLimit',
  'guildMonthlyLimit',
  'autoJoinChannelId',
  'textChannelsPerCall',
  'locale',
] as const satisfies readonly (keyof SettingsChange)[];

/** Where the change is checked: the server's voice channels (auto-join), who asks (a voice check is charged to them). */
interface SettingsChangeFacts {
  /** Whether `channelId` is a voice or stage channel of this server the bot can see. */
  isVoiceChannel(channelId: string): boolean;
}

/**
 * Checks `change` whole, then saves it and records it: the settings as they are now. Throws a
 * UserError naming the first problem (nothing saved). An unknown voice is saved only once the
 * service confirmed it (one short request, charged to the actor like any other).
 */
export async function changeGuildSettings(
  ctx: Pick<UseCaseDeps, 'repos' | 'budget' | 'voices'>,
  guildId: string,
  actor: Actor,
  change: SettingsChange,
  facts: SettingsChangeFacts,
): Promise<GuildSettings> {
  const patch = checkSettingsChange(change, facts);
  if (patch.userMonthlyLimit != null) requireWithinCeiling('member', patch.userMonthlyLimit, ctx.budget.ceilings.userMonthlyLimit);
  if (patch.guildMonthlyLimit != null) requireWithinCeiling('server', patch.guildMonthlyLimit, ctx.budget.ceilings.guildMonthlyLimit);
  if (patch.voice !== undefined && !isKnownVoice(ctx, patch.voice)) await confirmVoice(ctx, patch.voice, guildId, actor.userId);
  const saved = await ctx.repos.guildSettings.update(guildId, patch);
  if (Object.keys(patch).length > 0) await ctx.repos.audit.record(guildId, actor, 'settings', patch);
  return saved;
}

/** The change with its text trimmed, or a UserError for the first field out of its bounds (pure). */
export function checkSettingsChange(change: SettingsChange, facts: SettingsChangeFacts): SettingsChange {
  const patch: Record<string, unknown> = {};
  for (const field of FIELDS) {
    const value: unknown = change[field];
    if (value === undefined) continue;
    if (field in SETTING_RANGES) {
      const range = SETTING_RANGES[field as keyof typeof SETTING_RANGES];
      // The limits may be cleared (null: the bot's default).
      if (value === null && (field === 'userMonthlyLimit' || field === 'guildMonthlyLimit')) patch[field] = null;
      else if (
        typeof value !== 'number' ||
        !Number.isFinite(value) ||
        value < range.min ||
        value > range.max ||
        (range.integer && !Number.isInteger(value))
      )
        throw field === 'userMonthlyLimit' || field === 'guildMonthlyLimit'
          ? new UserError('config.bad_limit', { vars: { max: range.max } })
          : new UserError('config.out_of_range', { vars: { setting: SETTING_NAMES[field], min: range.min, max: range.max } });
      else patch[field] = value;
    } else if (field === 'readAuthorNames' || field === 'announceJoinLeave') {
      if (typeof value !== 'boolean') throw new UserError('config.not_on_off', { vars: { setting: SETTING_NAMES[field] } });
      patch[field] = value;
    } else if (field === 'voice') {
      const voice = typeof value === 'string' ? value.trim() : '';
      if (voice === '' || voice.length > 100) throw new UserError('tts.unsupported_voice', { vars: { voice: voice.slice(0, 100) } });
      patch.voice = voice;
    } else if (field === 'ignorePrefix') {
      const prefix = typeof value === 'string' ? value.trim() : '';
      if (prefix.length < IGNORE_PREFIX_LENGTH.min || prefix.length > IGNORE_PREFIX_LENGTH.max)
        throw new UserError('config.bad_prefix', { vars: { max: IGNORE_PREFIX_LENGTH.max } });
      patch.ignorePrefix = prefix;
    } else if (field === 'locale') {
      if (value !== 'ja' && value !== 'en') throw new UserError('config.bad_language', { vars: { value: String(value).slice(0, 20) } });
      patch.locale = value;
    } else if (field === 'autoJoinChannelId') {
      if (value !== null && (typeof value !== 'string' || !facts.isVoiceChannel(value))) throw new UserError('config.bad_auto_join');
      patch.autoJoinChannelId = value;
    }
  }
  return patch as SettingsChange;
}

/**
 * Stops (or resumes) reading a member's messages: /config mute's rule for the command and the web
 * dashboard (the caller has checked Manage Server); the bot itself is refused. Audit-logged.
 */
export async function setMuted(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  member: { id: string; isBot: boolean },
  muted: boolean,
): Promise<void> {
  if (member.isBot) throw new UserError('config.mute_self_bot');
  if (typeof muted !== 'boolean') throw new UserError('config.not_on_off', { vars: { setting: 'mute' } });
  await ctx.repos.userSettings.set(guildId, member.id, { muted });
  await ctx.repos.audit.record(guildId, actor, muted ? 'mute' : 'unmute', { memberId: member.id });
}

/**
 * Sets (or clears, with null) the volume a member's speech is played at, over their own choice:
 * /config volume's rule for the command and the web dashboard (the caller has checked Manage
 * Server). The bot itself is refused. Audit-logged.
 */
export async function setAdminVolume(
  ctx: Pick<UseCaseDeps, 'repos'>,
  guildId: string,
  actor: Actor,
  member: { id: string; isBot: boolean },
  value: unknown,
): Promise<number | null> {
  if (member.isBot) throw new UserError('config.volume_self_bot');
  const volume = checkVolume(value);
  await ctx.repos.userSettings.set(guildId, member.id, { adminVolume: volume });
  await ctx.repos.audit.record(guildId, actor, 'volume', { memberId: member.id, volume });
  return volume;
}
