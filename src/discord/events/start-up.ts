import type { Client, Message } from 'discord.js';
import type { Repositories } from '../../db/repositories.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { textAudience, type Utterance } from '../../speech/queue/utterance.ts';
import type { ClaimedUtterance, PendingUtteranceStore } from '../../speech/queue/journal.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import type { BotAccounts } from '../voice-control/accounts.ts';
import type { VoiceSessionStore } from '../../db/voice-sessions.ts';
import { isBotClip } from '../delivery/bot-clips.ts';
import { messageIdOf, type ChatChanges } from './chat-changes.ts';
import { guildLang, t, type Lang, type MessageKey } from '../../i18n/texts.ts';
import type { Notices } from '../delivery/notices.ts';

/** A message that came back this many start-ups without being finished is given up on. */
const MAX_RESTORES = 3;

export interface ResumeDeps {
  client: Client;
  /** The bot's accounts: each session is rejoined by the account that was in it. */
  accounts: BotAccounts;
  voice: VoiceManager;
  sessions: VoiceSessionStore;
  store: PendingUtteranceStore;
  scheduler: SpeechScheduler;
  repos: Repositories;
  notices: Notices;
  logger: Logger;
  /** Whether what was queued for a voice session's audience can still be played there (audience/audiences.ts `stillHeard`). */
  stillHeard: (guildId: string, audience: string) => boolean;
  /** Who a /say or /narrate of the channel is for now (audience/audiences.ts `requestAudience`); without it, that text channel. */
  requestAudience?: (guildId: string, channelId: string, userId?: string) => string;
  /** Deletions and edits: those made while no process listened are applied before anything is read. */
  chatChanges: ChatChanges;
  /** What was queued before and is not read after: deleted while the bot was stopped, or dropped as told (the messages' fates). */
  onNotRestored?: (items: readonly Utterance[], why: 'deleted' | 'restart') => void;
}

interface ResumeSummary {
  /** Utterances queued again. */
  restored: number;
  /** Voice channels joined again. */
  rejoined: number;
  /** Utterances that could not be delivered: told once in their channel and dropped. */
  dropped: number;
}

/**
 * After a restart or a crash: rejoin the voice channels the bot's accounts were reading in while
 * humans are still there (each by the account that was there), then queue again what a previous process accepted and did not finish.
 * What cannot be delivered any more (nobody listening, the channel gone, too many restarts) is
 * told once per channel and dropped, never retried forever. Explicit requests (/say, /narrate)
 * are delivered either way: spoken in voice, or attached as they are without voice.
 */
export async function resumeAfterRestart(deps: ResumeDeps): Promise<ResumeSummary> {
  const { client, accounts, voice, sessions, store, scheduler, repos, notices, logger } = deps;
  const owns = (guildId: string) => client.guilds.cache.has(guildId);
  // Why the auto-read messages queued for a voice session that is not back are not read, by its voice channel.
  const noVoice = new Map<string, 'restart.not_read' | 'restart.voice_gone'>();
  const joins: Promise<unknown>[] = [];
  for (const saved of sessions.list()) {
    // Another shard's guild, or one the bot was removed from: not this process's to decide.
    if (!owns(saved.guildId)) continue;
    const forget = async (why: 'restart.not_read' | 'restart.voice_gone') => {
      await sessions.forget(saved.guildId, saved.voiceChannelId);
      noVoice.set(saved.voiceChannelId, why);
    };
    // The account that was there, as it sees the server (an extra account no longer configured, or removed from it: not rejoined).
    const accountId = saved.accountId === '' ? accounts.mainId : saved.accountId;
    const guild = accounts.guild(accountId, saved.guildId);
    const channel = client.guilds.cache.get(saved.guildId)!.channels.cache.get(saved.voiceChannelId);
    if (!channel?.isVoiceBased()) {
      await forget('restart.voice_gone');
      continue;
    }
    if (!guild || ![...channel.members.values()].some((m) => !m.user.bot)) {
      await forget('restart.not_read');
      continue;
    }
    joins.push(
      voice
        .join({
          guildId: saved.guildId,
          channelId: saved.voiceChannelId,
          textChannelId: saved.textChannelId,
          alsoRead: saved.alsoRead,
          accountId,
          adapterCreator: guild.voiceAdapterCreator,
        })
        .catch(async (error: unknown) => {
          logger.warn(
            { err: error, guildId: saved.guildId, channelId: saved.voiceChannelId },
            'could not rejoin the voice channel after a restart',
          );
          await forget('restart.not_read');
        }),
    );
  }
  await Promise.all(joins);

  // From here until the queue of before is queued again, a deletion, edit or ban would find nothing
  // to take back: ChatChanges notes them and applies them once it is (nothing slips through the gap).
  const applyHeld = deps.chatChanges.holdDuringRestore();
  let kept: Utterance[];
  let editedAway: Message<true>[] = [];
  const dropped = new Map<string, { lang: Lang; key: MessageKey; ids: string[] }>();
  try {
    const claimed = await store.claim(owns);
    // A thread's auto-read messages are read for its parent channel (auto-read.ts).
    const readFor = (channelId: string) => {
      const channel = client.channels.cache.get(channelId);
      return channel?.isThread() ? (channel.parentId ?? channelId) : channelId;
    };
    const keep: Utterance[] = [];
    const notRestored: Utterance[] = [];
    const drop = ({ utterance: u }: ClaimedUtterance, key: MessageKey) => {
      notRestored.push(u);
      // Posted in the channel for everyone there: the server's language, not the asker's.
      const lang = guildLang(repos.guildSettings.get(u.guildId).locale);
      const group = dropped.get(`${u.channelId}:${key}`) ?? { lang, key, ids: [] };
      group.ids.push(u.id);
      dropped.set(`${u.channelId}:${key}`, group);
    };
    // Each voice session's own queue: what was queued for one is read only if that session is back.
    const heard = (u: Utterance) => {
      const vc = u.audience?.startsWith('voice:') ? u.audience.slice('voice:'.length) : undefined;
      return vc !== undefined ? voice.isConnected(u.guildId, vc) : voice.sessions(u.guildId).some((s) => !s.suppressed);
    };
    const why = (u: Utterance) => (u.audience?.startsWith('voice:') ? noVoice.get(u.audience.slice('voice:'.length)) : undefined);
    for (const c of claimed) {
      const u = c.utterance;
      if (c.restores > MAX_RESTORES) drop(c, 'restart.gave_up');
      // The bot's own clips are for the voice channel only: without it they just go (nobody asked).
      else if (isBotClip(u) && !heard(u)) store.remove([u.id]);
      else if (u.kind !== 'auto' || heard(u) || repos.autoRead.postsAudio(u.guildId, readFor(u.channelId))) keep.push(u);
      else drop(c, why(u) ?? 'restart.not_read');
    }
    // Deleted or edited while no process was listening (Discord does not replay those events).
    const away = await changedWhileAway(client, keep, logger);
    if (away.gone.size > 0) {
      store.remove([...away.gone]);
      logger.info({ count: away.gone.size }, 'messages deleted while the bot was stopped are not read');
      deps.onNotRestored?.(
        keep.filter((u) => away.gone.has(u.id)),
        'deleted',
      );
    }
    deps.onNotRestored?.(notRestored, 'restart');
    kept = keep.filter((u) => !away.gone.has(u.id));
    // Merged only within one audience after the restore too: one queued for a voice session the bot is
    // not back in (or cannot play in) is its own channel's now, since its MP3 would be posted there.
    // A /say or /narrate goes to whoever it is for now: the voice session it was queued for when that is
    // back, else the session that would take it now, or its channel.
    const audienceNow = (u: Utterance) => {
      if (u.audience !== undefined && deps.stillHeard(u.guildId, u.audience)) return u;
      if (u.kind !== 'auto')
        return { ...u, audience: deps.requestAudience?.(u.guildId, u.channelId, u.userId) ?? textAudience(u.channelId) };
      return { ...u, audience: textAudience(u.channelId) };
    };
    scheduler.restore(kept.map(audienceNow));
    editedAway = away.edited;
  } finally {
    // Read as edited, in place, before anything of them is asked for (no await before this point):
    // first as found on restoring, then the changes that came during it (they are newer).
    applyHeld(() => {
      for (const message of editedAway) void deps.chatChanges.edited(message);
    });
  }
  let count = 0;
  await Promise.all(
    [...dropped].map(([where, group]) => {
      count += group.ids.length;
      store.remove(group.ids);
      const channelId = where.slice(0, where.indexOf(':'));
      return notices.post(channelId, t(group.lang, group.key, { count: group.ids.length })).then((posted) => {
        if (!posted) logger.warn({ channelId, count: group.ids.length }, 'queued messages dropped after a restart; their channel is gone');
      });
    }),
  );
  return { restored: kept.length, rejoined: voice.size, dropped: count };
}

/**
 * The restored members' messages as Discord has them now, one request per channel (the newest 100
 * after the oldest restored; restored auto-read is at most minutes old): the utterance ids of those
 * deleted meanwhile (or whose channel is gone), and the messages edited meanwhile. A message Discord
 * cannot be asked about (no Read Message History, an error) is kept as it was.
 */
async function changedWhileAway(
  client: Client,
  restored: readonly Utterance[],
  logger: Logger,
): Promise<{ gone: Set<string>; edited: Message<true>[] }> {
  const gone = new Set<string>();
  const edited: Message<true>[] = [];
  const byChannel = new Map<string, Array<{ utteranceId: string; messageId: string; guildId: string }>>();
  for (const u of restored) {
    const messageId = messageIdOf(u);
    // Only a snowflake can be asked about (anything else is kept as it was).
    if (!messageId || !/^\d{1,20}$/.test(messageId)) continue;
    byChannel.set(u.channelId, [...(byChannel.get(u.channelId) ?? []), { utteranceId: u.id, messageId, guildId: u.guildId }]);
  }
  await Promise.all(
    [...byChannel].map(async ([channelId, items]) => {
      const channel = client.guilds.cache.get(items[0]!.guildId)?.channels.cache.get(channelId);
      if (!channel) {
        for (const item of items) gone.add(item.utteranceId);
        return;
      }
      if (!channel.isTextBased()) return;
      const oldest = items.reduce((min, i) => (BigInt(i.messageId) < min ? BigInt(i.messageId) : min), BigInt(items[0]!.messageId));
      const found = await channel.messages.fetch({ after: String(oldest - 1n), limit: 100, cache: false }).catch((error: unknown) => {
        logger.info({ err: error, channelId }, 'could not check restored messages against the channel; read as they were');
        return null;
      });
      if (!found) return;
      // A full page may not reach the newest: only what lies within it can be told missing.
      const newest = found.size < 100 ? null : found.reduce((max, m) => (BigInt(m.id) > max ? BigInt(m.id) : max), 0n);
      for (const item of items) {
        const now = found.get(item.messageId);
        if (now) {
          if (now.editedTimestamp !== null && now.inGuild()) edited.push(now);
        } else if (newest === null || BigInt(item.messageId) <= newest) gone.add(item.utteranceId);
      }
    }),
  );
  return { gone, edited };
}
