import type { Repositories } from '../../db/repositories.ts';
import { serverChargeUser } from '../../billing/policy.ts';
import { voiceAudience, type SpeechScheduler, type Utterance } from '../../speech/queue.ts';
import { WORDS } from '../../speech/words.ts';
import type { Logger } from '../../util/log.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { guildLang } from '../i18n.ts';
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
 * Queues `text` in the guild's voice channel as the bot's own clip. `mergeable` clips (announcements)
 * may share a request with the chat around them; others (the stale notice) stay one request of
 * their own, so the same text is a cached clip and costs nothing after the first time.
 */
export function queueBotClip(deps: BotClipDeps, guildId: string, text: string, options: { mergeable: boolean }): void {
  const channelId = deps.voice.voiceChannel(guildId);
  // Not in voice, or in a stage's audience: nobody would hear it, so nothing is made.
  if (!channelId || !deps.voice.isConnected(guildId)) return;
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
 * in their place, unless the server turned the notice off (/reading stale-notice). A queue that far
 * behind must not get a notice after every message: at most one per `minIntervalMs` per guild, the
 * next one counting every drop since the last (each drop is also counted under /usage).
 */
export class StaleDropNotices {
  readonly #deps: BotClipDeps;
  readonly #now: () => number;
  readonly #minIntervalMs: number;
  /** guildId -> when its last notice was queued; guildId -> drops not yet told. One entry per guild. */
  readonly #last = new Map<string, number>();
  readonly #carried = new Map<string, number>();

  constructor(deps: BotClipDeps & { now: () => number; minIntervalMs?: number | undefined }) {
    this.#deps = deps;
    this.#now = deps.now;
    this.#minIntervalMs = deps.minIntervalMs ?? STALE_NOTICE_INTERVAL_MS;
  }

  /** `count` auto-read messages of the guild were dropped as too old. */
  onDropped(guildId: string, count: number): void {
    if (count <= 0 || !this.#deps.repos.reading.get(guildId).staleNotice || !this.#deps.voice.isConnected(guildId)) return;
    const total = (this.#carried.get(guildId) ?? 0) + count;
    const last = this.#last.get(guildId);
    const now = this.#now();
    if (last !== undefined && now - last < this.#minIntervalMs) {
      this.#carried.set(guildId, total);
      return;
    }
    this.#carried.delete(guildId);
    this.#last.set(guildId, now);
    const lang = guildLang(this.#deps.repos.guildSettings.get(guildId).locale);
    queueBotClip(this.#deps, guildId, WORDS[lang].staleDropped(total), { mergeable: false });
  }
}
