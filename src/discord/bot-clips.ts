import type { Repositories } from '../db/repositories.ts';
import { serverChargeUser } from '../speech/budget-policy.ts';
import type { SpeechScheduler, Utterance } from '../speech/queue.ts';
import { WORDS } from '../speech/words.ts';
import type { Logger } from '../util/log.ts';
import type { VoiceManager } from '../voice/manager.ts';
import { guildLang } from './i18n.ts';
import type { UtteranceMeta } from './meta.ts';

// Clips the bot makes on its own (join/leave announcements, the stale-drop notice; issue 13): in
// the server's voice, charged to the server and not to a member (budget-policy.ts
// serverChargeUser), only ever played in voice (never attached), and nobody is told when one fails.

/** What bot clips work with. */
export interface BotClipDeps {
  voice: VoiceManager;
  repos: Repositories;
  scheduler: SpeechScheduler;
  logger: Logger;
}

/** Whether a queued utterance is one of the bot's own clips. */
export function isBotClip(u: Pick<Utterance, 'meta'>): boolean {
  return (u.meta as UtteranceMeta | undefined)?.botClip === true;
}

/**
 * Queues `text` in the guild's voice channel as the bot's own clip. `mergeable` clips (announcements)
 * may share a request with the chat around them; others (the stale notice) stay one request of
 * their own, so the same text is a cached clip and costs nothing after the first time.
 */
export function queueBotClip(deps: BotClipDeps, guildId: string, text: string, options: { mergeable: boolean }): void {
  const channelId = deps.voice.voiceChannel(guildId);
  if (!channelId) return; // not in voice: nobody would hear it, so nothing is made
  const settings = deps.repos.guildSettings.get(guildId);
  const lang = guildLang(settings.locale);
  const result = deps.scheduler.enqueue({
    guildId, userId: serverChargeUser(guildId), channelId, kind: options.mergeable ? 'auto' : 'say', text, lang,
    voice: settings.voice, speed: settings.speed, pitch: settings.pitch,
    meta: { delivery: { kind: 'message', channelId, messageId: '' }, lang, botClip: true } satisfies UtteranceMeta,
  });
  if (!result.ok) deps.logger.info({ guildId, reason: result.reason }, 'bot clip not queued');
}

/**
 * The scheduler dropped stale auto-read messages (they waited too long): "3件省略しました" is spoken
 * in their place, unless the server turned the notice off (/reading stale-notice).
 */
export function announceStaleDrop(deps: BotClipDeps, guildId: string, count: number): void {
  if (count <= 0 || !deps.repos.reading.get(guildId).staleNotice) return;
  const lang = guildLang(deps.repos.guildSettings.get(guildId).locale);
  queueBotClip(deps, guildId, WORDS[lang].staleDropped(count), { mergeable: false });
}
