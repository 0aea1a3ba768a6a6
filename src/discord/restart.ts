import type { Client } from 'discord.js';
import type { Repositories } from '../db/repositories.ts';
import { textAudience, type SpeechScheduler, type Utterance } from '../speech/queue.ts';
import type { ClaimedUtterance, PendingUtteranceStore } from '../speech/queue-store.ts';
import type { Logger } from '../util/log.ts';
import type { VoiceManager } from '../voice/manager.ts';
import type { VoiceSessionStore } from '../db/voice-sessions.ts';
import { isBotClip } from './bot-clips.ts';
import { guildLang, t, type Lang, type MessageKey } from './i18n.ts';
import type { UtteranceMeta } from './meta.ts';
import type { Notices } from './notices.ts';

/** A message that came back this many start-ups without being finished is given up on. */
const MAX_RESTORES = 3;

export interface ResumeDeps {
  client: Client;
  voice: VoiceManager;
  sessions: VoiceSessionStore;
  store: PendingUtteranceStore;
  scheduler: SpeechScheduler;
  repos: Repositories;
  notices: Notices;
  logger: Logger;
  /** Who a message of the channel is for now (delivery.ts `audience`). */
  audience: (guildId: string, channelId: string) => string;
}

export interface ResumeSummary {
  /** Utterances queued again. */
  restored: number;
  /** Voice channels joined again. */
  rejoined: number;
  /** Utterances that could not be delivered: told once in their channel and dropped. */
  dropped: number;
}

/**
 * After a restart or a crash (issue 9 §3): rejoin the voice channels the bot was reading in while
 * humans are still there, then queue again what a previous process accepted and did not finish.
 * What cannot be delivered any more (nobody listening, the channel gone, too many restarts) is
 * told once per channel and dropped, never retried forever. Explicit requests (/say, /narrate)
 * are delivered either way: spoken in voice, or attached as they are without voice.
 */
export async function resumeAfterRestart(deps: ResumeDeps): Promise<ResumeSummary> {
  const { client, voice, sessions, store, scheduler, repos, notices, logger } = deps;
  const owns = (guildId: string) => client.guilds.cache.has(guildId);
  const noVoice = new Map<string, 'restart.not_read' | 'restart.voice_gone'>();
  const joins: Promise<unknown>[] = [];
  for (const saved of sessions.list()) {
    // Another shard's guild, or one the bot was removed from: not this process's to decide.
    if (!owns(saved.guildId)) continue;
    const guild = client.guilds.cache.get(saved.guildId)!;
    const channel = guild.channels.cache.get(saved.voiceChannelId);
    if (!channel?.isVoiceBased()) {
      await sessions.forget(saved.guildId);
      noVoice.set(saved.guildId, 'restart.voice_gone');
      continue;
    }
    if (![...channel.members.values()].some((m) => !m.user.bot)) {
      await sessions.forget(saved.guildId);
      noVoice.set(saved.guildId, 'restart.not_read');
      continue;
    }
    joins.push(
      voice
        .join({ guildId: saved.guildId, channelId: saved.voiceChannelId, textChannelId: saved.textChannelId, adapterCreator: guild.voiceAdapterCreator })
        .catch(async (error: unknown) => {
          logger.warn({ err: error, guildId: saved.guildId }, 'could not rejoin the voice channel after a restart');
          noVoice.set(saved.guildId, 'restart.not_read');
          await sessions.forget(saved.guildId);
        }),
    );
  }
  await Promise.all(joins);

  const claimed = await store.claim(owns);
  const keep: Utterance[] = [];
  const dropped = new Map<string, { lang: Lang; key: MessageKey; ids: string[] }>();
  const drop = ({ utterance: u }: ClaimedUtterance, key: MessageKey) => {
    const lang = (u.meta as UtteranceMeta | undefined)?.lang ?? guildLang(repos.guildSettings.get(u.guildId).locale);
    const group = dropped.get(`${u.channelId}:${key}`) ?? { lang, key, ids: [] };
    group.ids.push(u.id);
    dropped.set(`${u.channelId}:${key}`, group);
  };
  for (const c of claimed) {
    const u = c.utterance;
    if (c.restores > MAX_RESTORES) drop(c, 'restart.gave_up');
    // The bot's own clips are for the voice channel only: without it they just go (nobody asked).
    else if (isBotClip(u) && !voice.isConnected(u.guildId)) store.remove([u.id]);
    else if (u.kind !== 'auto' || voice.isConnected(u.guildId) || repos.autoRead.postsAudio(u.guildId, u.channelId)) keep.push(u);
    else drop(c, noVoice.get(u.guildId) ?? 'restart.not_read');
  }
  // Merged only within one audience after the restore too: one queued for a voice session the bot is
  // not back in (or cannot play in) is its own channel's now, since its MP3 would be posted there.
  const audienceNow = (u: Utterance) =>
    u.audience === deps.audience(u.guildId, u.channelId) ? u : { ...u, audience: textAudience(u.channelId) };
  scheduler.restore(keep.map(audienceNow));
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
  return { restored: keep.length, rejoined: voice.size, dropped: count };
}
