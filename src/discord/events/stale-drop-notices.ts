import { WORDS } from '../../speech/text/words.ts';
import { guildLang } from '../../i18n/texts.ts';
import { queueBotClip, type BotClipDeps } from '../delivery/bot-clips.ts';

/** Default shortest time between two stale-drop notices in one guild. */
const STALE_NOTICE_INTERVAL_MS = 30_000;

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
