import type { Repositories } from '../../db/repositories.ts';
import { serverChargeUser } from '../../billing/policy.ts';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import { type Utterance, voiceAudience } from '../../speech/queue/utterance.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { guildLang } from '../../i18n/texts.ts';
import type { UtteranceMeta } from './meta.ts';

// Clips the bot makes on its own (join/leave announcements, the stale-drop notice): in
// the server's voice, charged to the server and not to a member (src/billing/policy.ts
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
 * Queues `text` in a session's voice channel as the bot's own clip. `mergeable` clips (announcements)
 * may share a request with the chat around them; others (the stale notice) stay one request of
 * their own, so the same text is a cached clip and costs nothing after the first time.
 */
export function queueBotClip(
  deps: BotClipDeps,
  session: { guildId: string; channelId: string },
  text: string,
  options: { mergeable: boolean },
): void {
  const { guildId, channelId } = session;
  // Not in voice, or in a stage's audience: nobody would hear it, so nothing is made.
  if (!deps.voice.isConnected(guildId, channelId)) return;
  const settings = deps.repos.guildSettings.get(guildId);
  const lang = guildLang(settings.locale);
  const result = deps.scheduler.enqueue({
    guildId,
    userId: serverChargeUser(guildId),
    channelId,
    kind: options.mergeable ? 'auto' : 'say',
    text,
    lang,
    voice: settings.voice,
    speed: settings.speed,
    pitch: settings.pitch,
    audience: voiceAudience(channelId),
    meta: { delivery: { kind: 'message', channelId, messageId: '' }, lang, botClip: true } satisfies UtteranceMeta,
  });
  if (!result.ok) deps.logger.info({ guildId, reason: result.reason }, 'bot clip not queued');
}
