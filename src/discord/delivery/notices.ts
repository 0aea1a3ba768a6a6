import type { Client } from 'discord.js';
import type { Logger } from '../../util/log.ts';

/** At most one public notice per member per guild per kind within this time. */
const NOTICE_INTERVAL_MS = 60 * 60_000;

/** The reaction that stands for a refusal already told within the hour; the rest get 🔇. */
const REACTIONS: Record<string, string> = { member_queue_full: '⏳', not_saved: '⚠️' };

/** Where a notice about one message goes. */
interface NoticeTarget {
  guildId: string;
  userId: string;
  channelId: string;
  /** The message it answers ('' for none: a plain post). */
  messageId: string;
}

/** Posts in channels on the bot's own initiative: notices, and why an author's message is not read. */
export class Notices {
  readonly #client: Client;
  readonly #logger: Logger;
  readonly #now: () => number;
  /** Last public notice per guild, member and kind (the rest get a reaction). */
  readonly #last = new Map<string, number>();

  constructor(options: { client: Client; logger: Logger; now?: () => number }) {
    this.#client = options.client;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /** Posts a notice in a channel (no pings); false when it cannot be posted. */
  async post(channelId: string, content: string): Promise<boolean> {
    const channel = await this.#client.channels.fetch(channelId).catch(() => null);
    if (!channel?.isSendable()) return false;
    return channel
      .send({ content, allowedMentions: { parse: [] } })
      .then(() => true)
      .catch((error: unknown) => {
        this.#logger.warn({ err: error, channelId }, 'could not post a notice');
        return false;
      });
  }

  /**
   * Tells an auto-read author why their message is not read: a reply at most once per hour per
   * guild, member and kind of refusal, and a reaction on the message in between, so a member
   * over their allowance is not answered line by line.
   */
  async tellAuthor(to: NoticeTarget, kind: string, content: string): Promise<void> {
    const key = `${to.guildId}:${to.userId}:${kind}`;
    const now = this.#now();
    const last = this.#last.get(key);
    const told = last !== undefined && now - last < NOTICE_INTERVAL_MS;
    // Noted before anything is awaited: two refusals arriving together get one reply, not two.
    if (!told) {
      this.#last.set(key, now);
      for (const [k, at] of this.#last) if (now - at >= NOTICE_INTERVAL_MS) this.#last.delete(k);
    }
    const channel = await this.#client.channels.fetch(to.channelId).catch(() => null);
    if (!channel?.isSendable()) return;
    if (told) {
      if (to.messageId && 'messages' in channel) {
        await channel.messages
          .react(to.messageId, REACTIONS[kind] ?? '🔇')
          .catch((e: unknown) => this.#logger.debug({ err: e }, 'could not react'));
      }
      return;
    }
    await channel
      .send({
        content,
        allowedMentions: { parse: [], repliedUser: false },
        ...(to.messageId ? { reply: { messageReference: to.messageId, failIfNotExists: false } } : {}),
      })
      .catch((e: unknown) => this.#logger.warn({ err: e }, 'could not tell the author'));
  }
}
