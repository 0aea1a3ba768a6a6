import type { Repositories } from '../../db/repositories.ts';
import { serverChargeUser } from '../../billing/policy.ts';
import { voiceAudience, type SpeechScheduler, type Utterance } from '../../speech/queue.ts';
import { WORDS } from '../../speech/text/words.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { guildLang } from '../../i18n/texts.ts';
import type { UtteranceMeta } from '../delivery/meta.ts';

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

/** Default shortest time between two stale-drop notices in one guild. */
export const STALE_NOTICE_INTERVAL_MS = 30_000;

/**
 * The scheduler dropped stale auto-read messages (they waited too long): "3件省略しました" is spoken
 * in their place, in the session they were queued for, unless the server turned the notice off
 * (/reading stale-notice). A queue that far behind must not get a notice after every message: at
 * most one per `minIntervalMs` per session, the next one counting every drop since the last (each
 * drop is also counted under /usage).
 */
export class StaleDropNotices {
  readonly #deps: BotClipDeps;
  readonly #now: () => number;
  readonly #minIntervalMs: number;
  /** guild:voice channel -> when its last notice was queued; -> drops not yet told. One entry per session. */
  readonly #last = new Map<string, number>();
  readonly #carried = new Map<string, number>();

  constructor(deps: BotClipDeps & { now: () => number; minIntervalMs?: number | undefined }) {
    this.#deps = deps;
    this.#now = deps.now;
    this.#minIntervalMs = deps.minIntervalMs ?? STALE_NOTICE_INTERVAL_MS;
  }

  /**
   * `count` auto-read messages of the guild queued for `audience` were dropped as too old: told in
   * that voice session, or for a text channel's audience in the server's first session.
   */
  onDropped(guildId: string, count: number, audience?: string): void {
    if (count <= 0 || !this.#deps.repos.reading.get(guildId).staleNotice) return;
    const channelId = audience?.startsWith('voice:') ? audience.slice('voice:'.length) : this.#deps.voice.sessions(guildId)[0]?.channelId;
    if (!channelId || !this.#deps.voice.isConnected(guildId, channelId)) return;
    const key = `${guildId}:${channelId}`;
    const total = (this.#carried.get(key) ?? 0) + count;
    const last = this.#last.get(key);
    const now = this.#now();
    if (last !== undefined && now - last < this.#minIntervalMs) {
      this.#carried.set(key, total);
      return;
    }
    this.#carried.delete(key);
    this.#last.set(key, now);
    const lang = guildLang(this.#deps.repos.guildSettings.get(guildId).locale);
    queueBotClip(this.#deps, { guildId, channelId }, WORDS[lang].staleDropped(total), { mergeable: false });
  }
}
