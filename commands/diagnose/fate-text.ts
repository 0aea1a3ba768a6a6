import type { FateRecord } from '../../src/discord/diagnosis/fates.ts';
import { t, type Lang, type MessageKey } from '../../src/i18n/texts.ts';

// One message's fate in words, for "Why wasn't this read?" and /diagnose's list of the member's
// recent messages: what became of it, when, and the messages read with it, naming only what the
// member may see (a message merged with it from a channel they cannot view is counted, not linked).

/** How the fate is worded for whoever asks. */
export interface FateWording {
  lang: Lang;
  /** Commands as the member's client shows them (command.ts `shownNames`). */
  names: Readonly<Record<string, string>>;
  /** Whether the member may view a channel (a merged message there is linked). */
  canView(channelId: string): boolean;
  /** The member wrote it, or manages the server: the numbers of a member's limit are theirs to see. */
  own: boolean;
}

/** A message's link, as Discord's clients open it. */
export function messageLink(guildId: string, channelId: string, messageId: string): string {
  return `https://discord.com/channels/${guildId}/${channelId}/${messageId}`;
}

/** A time as Discord shows it in each reader's own time zone (`<t:…:T>`), or relative (`:R`). */
export const shownTime = (ms: number, style: 'T' | 'R' = 'T') => `<t:${Math.floor(ms / 1000)}:${style}>`;

/** The key and placeholders of a record's sentence. */
function sentence(r: FateRecord, w: FateWording): [MessageKey, Record<string, string | number>] {
  const voice = r.voiceChannelId ? `<#${r.voiceChannelId}>` : '';
  switch (r.fate) {
    case 'queued':
      return [r.voiceChannelId ? 'fate.queued' : 'fate.queued_mp3', { voice, when: shownTime(r.arrivedAt, 'R') }];
    case 'read':
      return ['fate.read', { voice, when: shownTime(r.at) }];
    case 'attached':
      return ['fate.attached', { when: shownTime(r.at) }];
    case 'too_old':
      return [r.told === false ? 'fate.too_old_untold' : 'fate.too_old', {}];
    case 'cleared': {
      const reason = ['clear', 'leave', 'auto_leave', 'disconnected', 'stage_audience', 'restart', 'unbound'].includes(r.reason ?? '')
        ? r.reason
        : 'clear';
      return [`fate.cleared_${reason}` as MessageKey, { clear: w.names.clear ?? '/clear', leave: w.names.leave ?? '/leave' }];
    }
    case 'skipped':
      return ['fate.skipped', { skip: w.names.skip ?? '/skip' }];
    case 'budget':
      if (r.scope === 'guild') return ['fate.budget_guild', { limit: r.limit ?? '' }];
      if (r.scope === 'account') return ['fate.budget_account', {}];
      return w.own && r.limit !== undefined ? ['fate.budget_user', { limit: r.limit }] : ['fate.budget_user_other', {}];
    case 'failed':
      return ['fate.failed', { code: r.reason ?? 'failed' }];
    case 'queue_full':
      return ['fate.queue_full', { limit: r.limit ?? '' }];
    case 'flooded':
      return ['fate.flooded', { limit: r.limit ?? '' }];
    default:
      return [
        `fate.${r.fate}` as MessageKey,
        { voice, reading_bots: w.names.reading_bots ?? '/reading bots', config_mute: w.names.config_mute ?? '/config mute' },
      ];
  }
}

/** What became of the message `r` records, in the member's language. */
export function describeFate(r: FateRecord, w: FateWording): string {
  const [key, vars] = sentence(r, w);
  const merged = r.mergedWith ?? [];
  if (merged.length === 0) return t(w.lang, key, vars);
  const links = merged.filter((m) => w.canView(m.channelId)).map((m) => messageLink(r.guildId, m.channelId, m.messageId));
  const more =
    links.length > 0
      ? t(w.lang, 'fate.merged', { count: merged.length, links: links.join(' ') })
      : t(w.lang, 'fate.merged_hidden', { count: merged.length });
  return t(w.lang, key, vars) + more;
}
