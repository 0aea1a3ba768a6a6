import { DiscordAPIError, InteractionWebhook, type Client } from 'discord.js';
import type { ProgressEvent } from '../../speech/queue/options.ts';
import type { Utterance } from '../../speech/queue/utterance.ts';
import type { Logger } from '../../util/log.ts';
import { t } from '../../i18n/texts.ts';
import type { DeliveryTarget, UtteranceMeta } from './meta.ts';

/** Discord's interaction tokens live 15 minutes; after 14 a reply goes to the channel instead. */
const TOKEN_MAX_AGE_MS = 14 * 60_000;

type InteractionTarget = Extract<DeliveryTarget, { kind: 'interaction' }>;

/** The final answer of a reply: text, and the audio when it is attached. */
interface FinalAnswer {
  content: string;
  files?: { attachment: string | Buffer; name: string }[];
}

/** Who a reply is for, to name them when the answer has to go to the channel. */
type ReplyOwner = Pick<Utterance, 'id' | 'userId' | 'channelId'>;

/**
 * The replies of queued /say and /narrate: opened when the utterance is queued, edited with its
 * progress (edits chained so they land in order), closed by exactly one final answer. Once the
 * interaction token is too old, or Discord refuses it, the answer is posted in the channel instead,
 * naming the member (never only a log line).
 */
export class InteractionReplies {
  readonly #client: Client;
  readonly #logger: Logger;
  readonly #now: () => number;
  /** Replies not yet given their final answer, by utterance id, with their chain of edits. */
  readonly #open = new Map<string, { meta: UtteranceMeta; chain: Promise<unknown> }>();

  constructor(options: { client: Client; logger: Logger; now?: () => number }) {
    this.#client = options.client;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
  }

  /** Starts following the reply of utterance `id`. */
  open(id: string, meta: UtteranceMeta): void {
    this.#open.set(id, { meta, chain: Promise.resolve() });
  }

  /** The scheduler's progress of a /narrate, shown in its reply. */
  onProgress(event: ProgressEvent): void {
    const lang = this.#open.get(event.id)?.meta.lang;
    if (!lang || event.kind !== 'narrate') return;
    if (event.state === 'queued' && event.position)
      this.edit(event.id, { content: t(lang, 'narrate.queued', { position: event.position }) });
    else if (event.state === 'synthesizing') {
      const key = event.detail === 'running' ? 'narrate.running' : 'narrate.pending';
      this.edit(event.id, { content: t(lang, key) });
    }
  }

  /** Queues a progress edit of an open reply; ignored once the final answer is out or the token is too old. */
  edit(id: string, body: { content: string }): void {
    const reply = this.#open.get(id);
    if (reply?.meta.delivery.kind !== 'interaction' || !this.#tokenAlive(reply.meta.delivery)) return;
    const webhook = this.#webhook(reply.meta.delivery);
    reply.chain = reply.chain
      .then(() => webhook.editMessage('@original', { ...body, allowedMentions: { parse: [] } }))
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not update the reply'));
  }

  /**
   * The final answer (the audio, "speaking", or why not), after the edits already queued so none
   * overwrites it; later progress finds no reply. Resolves whether the answer reached Discord.
   */
  async finish(owner: ReplyOwner, meta: UtteranceMeta, body: FinalAnswer): Promise<boolean> {
    const delivery = meta.delivery;
    if (delivery.kind !== 'interaction') return false;
    const before = this.#open.get(owner.id)?.chain ?? Promise.resolve();
    this.#open.delete(owner.id);
    await before;
    if (this.#tokenAlive(delivery)) {
      const edited = await this.#webhook(delivery)
        .editMessage('@original', { ...body, allowedMentions: { parse: [] } })
        .then(() => 'edited' as const)
        .catch((error: unknown) => {
          this.#logger.warn({ err: error }, 'could not deliver the reply');
          // 401 invalid webhook token, 404 unknown webhook/message: the token is gone; post instead.
          return error instanceof DiscordAPIError && (error.status === 401 || error.status === 404)
            ? ('token gone' as const)
            : ('refused' as const);
        });
      if (edited !== 'token gone') return edited === 'edited';
    }
    const channelId = delivery.channelId ?? owner.channelId;
    const channel = await this.#client.channels.fetch(channelId).catch(() => null);
    if (!channel?.isSendable()) {
      this.#logger.warn({ channelId }, 'could not deliver a late reply: the channel is gone');
      return false;
    }
    return channel
      .send({ ...body, content: `<@${owner.userId}> ${body.content}`, allowedMentions: { parse: [] } })
      .then(() => true)
      .catch((error: unknown) => {
        this.#logger.warn({ err: error, channelId }, 'could not post a late reply');
        return false;
      });
  }

  /** Whether the interaction's token can still edit its reply (Discord: 15 minutes; we stop at 14). */
  #tokenAlive(delivery: InteractionTarget): boolean {
    return delivery.createdAt === undefined || this.#now() - delivery.createdAt < TOKEN_MAX_AGE_MS;
  }

  #webhook(delivery: InteractionTarget): InteractionWebhook {
    return new InteractionWebhook(this.#client as Client<true>, delivery.applicationId, delivery.token);
  }
}
