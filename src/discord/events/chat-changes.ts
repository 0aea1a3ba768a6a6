import { Events, type Client, type Message, type PartialMessage } from 'discord.js';
import type { SpeechScheduler } from '../../speech/queue/scheduler.ts';
import type { Utterance } from '../../speech/queue/utterance.ts';
import type { Logger } from '../../util/log.ts';
import type { AutoReader } from './auto-read.ts';
import type { UtteranceMeta } from '../delivery/meta.ts';

/** What ChatChanges works with. */
interface ChatChangesDeps {
  scheduler: SpeechScheduler;
  autoRead: AutoReader;
  logger: Logger;
  /** Queued speech taken back: the messages' fates (diagnosis/fates.ts); an edited one is read as edited, or not at all. */
  onTakenBack?: (items: readonly Utterance[], why: Why | 'edited_unread') => void;
}

/** Why queued speech was taken back (logged). */
type Why = 'deleted' | 'bulk_deleted' | 'channel_deleted' | 'banned' | 'edited';

/** The id of the member's message an utterance reads, if it is one (auto-read; not the bot's own clips). */
export function messageIdOf(u: Utterance): string | undefined {
  const meta = u.meta as UtteranceMeta | undefined;
  if (u.kind !== 'auto' || meta?.delivery.kind !== 'message' || meta.botClip) return undefined;
  return meta.delivery.messageId || undefined;
}

/** The poll whose result an utterance reads, if it reads one. */
function pollMessageIdOf(u: Utterance): string | undefined {
  return messageIdOf(u) === undefined ? undefined : (u.meta as UtteranceMeta).pollMessageId;
}

/**
 * Moderation follows the chat: a message deleted before it is read is never read (nor sent to the
 * service, if it was not yet), one edited is read as edited, and a banned member's messages go with
 * the ban (Discord does not reliably send MESSAGE_DELETE for the messages a ban deletes). Only ids
 * are needed, so it works for messages discord.js no longer caches (Partials.Message): an edit
 * brings its new content, and is fetched only when it does not. The scheduler does the taking
 * back (src/speech/queue/withdraw.ts).
 */
export class ChatChanges {
  readonly #deps: ChatChangesDeps;
  /** The changes seen while the queue of before is being restored, applied again once it is. */
  #held: Array<() => unknown> | null = null;

  constructor(deps: ChatChangesDeps) {
    this.#deps = deps;
  }

  /** Listens to the client's message, channel and ban events. */
  listen(client: Client): void {
    const guarded = (what: string, run: () => unknown) => {
      try {
        const done = run();
        if (done instanceof Promise) done.catch((error: unknown) => this.#deps.logger.error({ err: error }, `${what} handling failed`));
      } catch (error) {
        this.#deps.logger.error({ err: error }, `${what} handling failed`);
      }
    };
    client.on(Events.MessageDelete, (m) => guarded('message delete', () => m.guildId && this.deleted(m.guildId, [m.id], 'deleted')));
    client.on(Events.MessageBulkDelete, (messages, channel) =>
      guarded('bulk delete', () => 'guildId' in channel && this.deleted(channel.guildId, messages.keys(), 'bulk_deleted')),
    );
    // A deleted channel's threads go with it (discord.js still lists them on the channel; Discord may send no THREAD_DELETE).
    client.on(Events.ChannelDelete, (channel) =>
      guarded(
        'channel delete',
        () =>
          'guildId' in channel &&
          this.channelDeleted(channel.guildId, [channel.id, ...('threads' in channel ? channel.threads.cache.keys() : [])]),
      ),
    );
    client.on(Events.ThreadDelete, (thread) => guarded('thread delete', () => this.channelDeleted(thread.guildId, [thread.id])));
    client.on(Events.GuildBanAdd, (ban) => guarded('ban', () => this.banned(ban.guild.id, ban.user.id)));
    client.on(Events.MessageUpdate, (_old, message) => guarded('message edit', () => this.edited(message)));
  }

  /**
   * From now until the returned function is called (resumeAfterRestart: from claiming the queue of
   * before until it is queued again), each deletion, edit or ban is noted besides being applied:
   * the restored messages are not queued yet, so it would find nothing of them to take back. The
   * returned function runs `first` (the edits found on restoring, older), then applies those again.
   */
  holdDuringRestore(): (first?: () => void) => void {
    const held: Array<() => unknown> = [];
    this.#held = held;
    return (first) => {
      if (this.#held === held) this.#held = null;
      first?.();
      for (const again of held) again();
    };
  }

  /**
   * Messages deleted (one, or in bulk): whatever of them is queued is taken back, and so is the
   * result of a deleted poll (it reads the poll's text). Returns how many.
   */
  deleted(guildId: string, messageIds: Iterable<string>, why: Why = 'deleted'): number {
    const ids = new Set(messageIds);
    return this.#withdraw(guildId, why, (u) => ids.has(messageIdOf(u) ?? '') || ids.has(pollMessageIdOf(u) ?? ''));
  }

  /** A channel or thread deleted (with the threads in it): the messages of them waiting to be read go with it. */
  channelDeleted(guildId: string, channelIds: Iterable<string>): number {
    const ids = new Set(channelIds);
    return this.#withdraw(guildId, 'channel_deleted', (u) => ids.has(u.channelId) && messageIdOf(u) !== undefined);
  }

  /** A member banned: their messages waiting to be read go (the ban may have deleted them without a word). */
  banned(guildId: string, userId: string): number {
    return this.#withdraw(guildId, 'banned', (u) => u.userId === userId && messageIdOf(u) !== undefined);
  }

  /**
   * A message edited: if it waits to be read, it is read as it is now (AutoReader.edited), in its
   * place. Updates that are not edits (a link preview arriving) carry no edit time and are ignored.
   */
  async edited(message: Message | PartialMessage): Promise<number> {
    const guildId = message.guildId;
    if (!guildId || message.editedTimestamp === null) return 0;
    // Discord sends the new content with the edit; a partial update without it is fetched.
    const full = message.partial || typeof message.content !== 'string' ? await message.fetch().catch(() => null) : message;
    if (!full?.inGuild()) return 0;
    const autoRead = this.#deps.autoRead;
    const unread: Utterance[] = [];
    const count = this.#withdraw(
      guildId,
      'edited',
      (u) => messageIdOf(u) === full.id,
      (old) => {
        const next = autoRead.edited(full, old);
        if (!next) unread.push(old);
        return next;
      },
    );
    // Edited so that it is no longer read (a muted author, the ignore prefix, nothing left to read).
    if (unread.length > 0) this.#deps.onTakenBack?.(unread, 'edited_unread');
    return count;
  }

  #withdraw(guildId: string, why: Why, match: (u: Utterance) => boolean, replace?: Parameters<SpeechScheduler['withdraw']>[2]): number {
    this.#held?.push(() => this.#withdraw(guildId, why, match, replace));
    const taken = this.#deps.scheduler.withdraw(guildId, match, replace);
    if (taken.length > 0) this.#deps.logger.info({ guildId, count: taken.length, why }, 'queued speech taken back');
    this.#deps.onTakenBack?.(taken, why);
    return taken.length;
  }
}
