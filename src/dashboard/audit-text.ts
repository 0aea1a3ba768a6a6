import type { AuditEntry } from '../domain/audit.ts';
import { t, type Lang, type MessageKey } from '../i18n/texts.ts';
import { SETTING_NAMES } from '../usecases/settings.ts';
import { READING_SUBCOMMANDS } from '../usecases/reading.ts';
import { CONTROL_COMMANDS } from '../usecases/limits.ts';

// What an audit log entry says, in the reader's language: each setting named as the slash command
// that sets it shows it ("/設定 速さ を 1.7 に変更"), its value as the command's reply says it (オン,
// 日本語, #general, @Moderator), never the stored field name or a raw id.

/** How the audit log names what it refers to. */
export interface AuditNames {
  /** Every command and subcommand as a member's client shows it in the reader's language (shownNames). */
  commands: Readonly<Record<string, string>>;
  /** `#general` for a channel id, `@Moderator` for a role id, the display name for a member id. */
  channel(id: string): string;
  role(id: string): string;
  member(id: string): string;
}

/** The shownNames key of each field an entry of `action` may hold ("config_read_names"). */
const FIELD_COMMANDS: Record<string, Readonly<Record<string, string>>> = {
  settings: prefixed('config', SETTING_NAMES),
  reading: prefixed('reading', READING_SUBCOMMANDS),
  controls: prefixed('', CONTROL_COMMANDS),
};

function prefixed(command: string, subcommands: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(subcommands).map(([field, sub]) => [field, [command, sub].filter(Boolean).join('_').replace(/[- ]/g, '_')]),
  );
}

const CHARACTER_FIELDS = new Set(['maxLength', 'userMonthlyLimit', 'guildMonthlyLimit', 'narrateConfirmChars']);
const BOTS: Record<string, MessageKey> = { off: 'reading.bots_off', listed: 'reading.bots_listed', all: 'reading.bots_all' };

/** One entry of the audit log as a sentence in `lang`. */
export function describeAudit(entry: Pick<AuditEntry, 'action' | 'detail'>, lang: Lang, names: AuditNames): string {
  const d = entry.detail;
  const str = (v: unknown) => String(v ?? '');
  const count = (v: unknown) => (typeof v === 'number' ? v.toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-US') : str(v));
  switch (entry.action) {
    case 'dictionary.add':
      return t(lang, 'dashboard.action_dictionary_add', { word: str(d.word), reading: str(d.reading) });
    case 'dictionary.remove':
      return t(lang, 'dashboard.action_dictionary_remove', { word: str(d.word) });
    case 'dictionary.import':
      return t(lang, d.mode === 'replace' ? 'dashboard.action_dictionary_replace' : 'dashboard.action_dictionary_merge', {
        count: count(d.count),
        total: count(d.total),
      });
    case 'mute':
    case 'unmute':
      return t(lang, entry.action === 'mute' ? 'dashboard.action_mute' : 'dashboard.action_unmute', {
        member: names.member(str(d.memberId)),
      });
    case 'voice_pool.add':
    case 'voice_pool.remove':
      return t(lang, entry.action === 'voice_pool.add' ? 'dashboard.action_voice_pool_add' : 'dashboard.action_voice_pool_remove', {
        voice: str(d.voice),
      });
    case 'volume':
      return d.volume === null || d.volume === undefined
        ? t(lang, 'dashboard.action_volume_cleared', { member: names.member(str(d.memberId)) })
        : t(lang, 'dashboard.action_volume', { member: names.member(str(d.memberId)), volume: str(d.volume) });
    case 'reading.bot.add':
      return t(lang, 'dashboard.action_reading_bot_add', { id: str(d.botId) });
    case 'reading.bot.remove':
      return t(lang, 'dashboard.action_reading_bot_remove', { id: str(d.botId) });
    case 'reading.never_role.add':
      return t(lang, 'dashboard.action_reading_never_role_add', { role: names.role(str(d.roleId)) });
    case 'reading.never_role.remove':
      return t(lang, 'dashboard.action_reading_never_role_remove', { role: names.role(str(d.roleId)) });
    case 'roles.set':
      return t(lang, 'dashboard.action_roles_set', { role: names.role(str(d.roleId)), chars: count(d.chars) });
    case 'roles.remove':
      return t(lang, 'dashboard.action_roles_remove', { role: names.role(str(d.roleId)) });
    case 'autoread.add':
      return t(lang, d.postAudio ? 'dashboard.action_autoread_add_mp3' : 'dashboard.action_autoread_add', {
        channel: names.channel(str(d.channelId)),
      });
    case 'dictionary.sharing':
      return t(lang, d.followable ? 'dashboard.action_dictionary_share_on' : 'dashboard.action_dictionary_share_off');
    case 'dictionary.follow':
    case 'dictionary.unfollow': {
      // A server by its id: the log's readers need not be members of it.
      const source =
        d.kind === 'curated'
          ? t(lang, 'dictionary.source_curated', { name: str(d.source) })
          : t(lang, 'dictionary.source_guild', { id: str(d.source) });
      return t(lang, entry.action === 'dictionary.follow' ? 'dashboard.action_dictionary_follow' : 'dashboard.action_dictionary_unfollow', {
        source,
      });
    }
    case 'filter.add':
      return t(lang, d.action === 'skip' ? 'dashboard.action_filter_add_skip' : 'dashboard.action_filter_add_replace', {
        word: str(d.word),
        reading: str(d.reading),
      });
    case 'filter.remove':
      return t(lang, 'dashboard.action_filter_remove', { word: str(d.word) });
    case 'filter.flood':
      return d.floodMax === null
        ? t(lang, 'dashboard.action_filter_flood_off')
        : t(lang, 'dashboard.action_filter_flood', { max: count(d.floodMax) });
    case 'autoread.remove':
      return t(lang, 'dashboard.action_autoread_remove', { channel: names.channel(str(d.channelId)) });
    default: {
      // A change of settings, reading or controls: each field as its command names it, with its value.
      const commands = FIELD_COMMANDS[entry.action] ?? {};
      const changes = Object.entries(d).map(([field, value]) => {
        const command = commands[field];
        return t(lang, 'dashboard.action_set', {
          setting: (command && names.commands[command]) ?? field,
          value: shownValue(lang, field, value, names),
        });
      });
      return new Intl.ListFormat(lang, { type: 'conjunction' }).format(changes);
    }
  }
}

/** A setting's value as the command's reply says it. */
function shownValue(lang: Lang, field: string, value: unknown, names: AuditNames): string {
  if (typeof value === 'boolean') return t(lang, value ? 'config.on' : 'config.off');
  if (field.endsWith('ChannelId')) return typeof value === 'string' ? names.channel(value) : t(lang, 'config.none');
  if (field.endsWith('RoleId')) return typeof value === 'string' ? names.role(value) : t(lang, 'config.none');
  if (value === null || value === undefined) return t(lang, 'dashboard.value_default');
  if (field === 'locale') return t(lang, value === 'en' ? 'config.lang_en' : 'config.lang_ja');
  if (field === 'bots' && typeof value === 'string' && BOTS[value]) return t(lang, BOTS[value]);
  if (field === 'freshSeconds') return t(lang, 'reading.fresh_seconds', { seconds: Number(value) });
  if (typeof value === 'number' && CHARACTER_FIELDS.has(field))
    return t(lang, 'dashboard.value_chars', { chars: value.toLocaleString(lang === 'ja' ? 'ja-JP' : 'en-US') });
  return String(value);
}
