import { readFile } from 'node:fs/promises';
import type { Client } from 'discord.js';
import type { StoredJob } from '../../db/advanced-jobs.ts';
import type { Delivered } from '../../ops/instrument.ts';
import { audienceOf, type ReadyUtterance, type Utterance, voiceAudience } from '../../speech/queue/utterance.ts';
import { playableNow, type ReadyAudio } from '../../speech/synthesis/synthesize.ts';
import { isKnownCode, TtsError } from '../../tts/errors.ts';
import type { Logger } from '../../util/log.ts';
import type { Audiences } from '../audience/audiences.ts';
import { audienceCanView } from '../audience/visibility.ts';
import type { VoiceManager } from '../../voice/manager.ts';
import { VoiceSessionError } from '../../voice/errors.ts';
import { BotError } from '../errors.ts';
import { t } from '../../i18n/texts.ts';
import type { ClearReason, DeliveryTarget, UtteranceMeta } from './meta.ts';
import type { Notices } from './notices.ts';
import { describeFailure } from './outcomes.ts';
import type { InteractionReplies } from './replies.ts';

type Item = Pick<Utterance, 'id' | 'userId' | 'channelId' | 'guildId' | 'voice'>;

/** Whether each delivered utterance reached whoever asked (a job behind it ends delivered or not). */
interface DeliveredJobs {
  settle(outcomes: ReadonlyArray<{ id: string; delivered: boolean }>): Promise<void>;
  discard(ids: readonly string[]): Promise<void>;
}

/** What SpeechDelivery works with. */
export interface DeliveryDeps {
  client: Client;
  voice: VoiceManager;
  replies: InteractionReplies;
  notices: Notices;
  /** Who hears what: the voice channel a batch is played in. */
  audiences: Pick<Audiences, 'playedIn'>;
  /** Advanced jobs behind /narrate (src/usecases/narrate-jobs.ts): told whether each was delivered. */
  jobs: DeliveredJobs;
  logger: Logger;
  /** Whether the channel posts auto-read audio as MP3 files (repos.autoRead.postsAudio); without it, none does. */
  postsAudio?: (guildId: string, channelId: string) => boolean;
  /** Whether everyone now in `voiceChannelId` can view `channelId` (default: visibility.ts on the client's cache). */
  listenersCanView?: (guildId: string, channelId: string, voiceChannelId: string) => boolean;
}

/**
 * Where audio is delivered: the scheduler's sink plays a finished utterance in voice, attaches its
 * MP3 (to the reply, or as a reply to the message read), or tells whoever asked why it could not be
 * spoken. Nothing is silently lost: every utterance ends in exactly one of those, dropped ones
 * (/clear, /leave) with a word, and /narrate jobs a restart finished go where they were asked for.
 */
export class SpeechDelivery {
  readonly #deps: DeliveryDeps;

  constructor(deps: DeliveryDeps) {
    this.#deps = deps;
    this.#canView =
      deps.listenersCanView ??
      ((guildId, channelId, voiceChannelId) => {
        const guild = deps.client.guilds.cache.get(guildId);
        const channel = guild?.channels.cache.get(channelId);
        return !!guild && !!channel && audienceCanView(guild, channel, { voiceChannelId, postChannelId: null });
      });
  }

  readonly #canView: (guildId: string, channelId: string, voiceChannelId: string) => boolean;

  /**
   * The scheduler's sink: plays in voice when connected, and attaches the MP3 when not connected
   * or when asked to (/say attach:true does both); a failure is told to whoever asked. Settles
   * once per utterance; the scheduler advances after it. Resolves where the audio went (metrics
   * count it), or undefined for a failure told.
   */
  async deliver(ready: ReadyUtterance, signal: AbortSignal): Promise<Delivered | undefined> {
    const metas = ready.items.map((item) => item.meta as UtteranceMeta);
    if (ready.error) {
      for (const [i, meta] of metas.entries()) await this.#tellFailure(meta, ready.items[i]!, ready.error);
      return undefined;
    }
    // A miss cached since it was made plays from its files (the Ogg Opus, no decoding again).
    const audio = playableNow(ready.audio);
    const voiceChannel = this.#deps.audiences.playedIn(ready);
    const { played, hidden } = this.#whetherPlayed(ready, metas, voiceChannel);
    // /say attach:true while in voice: played and attached.
    // The bot's own clips are for the voice channel only: never posted as files.
    const wanted = metas.filter((m) => (!played || m.forceAttach) && !m.botClip);
    // One channel's text is never posted in another: audio merged for a voice session that cannot be
    // played there after all (the bot left) is not attached; its authors are told.
    const channels = new Set(ready.items.map((item) => item.channelId));
    const oneChannel = channels.size === 1;
    // A channel the listeners cannot all view and that posts no MP3s: its authors are told, as when queued (auto-read.ts).
    const unposted = oneChannel && hidden && !(this.#deps.postsAudio?.(ready.guildId, ready.items[0]!.channelId) ?? false);
    const toAttach = oneChannel && !unposted ? wanted : [];
    if (unposted) for (const [i, meta] of metas.entries()) await this.#tellHidden(meta, ready.items[i]!, voiceChannel!);
    else if (!oneChannel)
      for (const [i, meta] of metas.entries()) if (wanted.includes(meta)) await this.#tellNotPosted(meta, ready.items[i]!);
    // Attach first (in parallel with playback) so a long voice line does not delay the reply.
    // Messages merged into one request get one attachment, as a reply to the last of them.
    const lastMessage = metas.findLast((m) => m.delivery.kind === 'message' && toAttach.includes(m));
    const attaching = Promise.all(
      metas.map(async (meta, i) => {
        const item = ready.items[i]!;
        if (meta.delivery.kind === 'message' && meta !== lastMessage) return false;
        if (toAttach.includes(meta)) {
          const mp3 = await mp3Of(audio).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error))));
          if (!(mp3 instanceof Error)) return this.#attach(meta, item, mp3, audio.seed, signal);
          // A clip's cached file is gone (another process evicted it, someone deleted it): what
          // plays in voice is still heard, and whoever asked is told what they did not get.
          if (!played) await this.#tellFailure(meta, item, mp3);
          else {
            this.#deps.logger.warn({ err: mp3, guildId: ready.guildId }, 'could not read the audio to attach');
            if (meta.delivery.kind === 'interaction')
              await this.#deps.replies.finish(item, meta, { content: t(meta.lang, 'say.attach_failed') });
          }
          return false;
        }
        if (meta.delivery.kind === 'interaction') await this.#deps.replies.finish(item, meta, { content: t(meta.lang, 'say.playing') });
        return false;
      }),
    );
    let heard = false;
    let failure: unknown;
    if (played) {
      try {
        // At its author's volume (merged messages share one: src/speech/queue/batching/merging.ts `mergeable`); the file attached is as the service made it.
        const volume = ready.items[0]?.volume;
        await this.#deps.voice.play(ready.guildId, voiceChannel!, volume === undefined ? audio : { ...audio, volume }, signal);
        heard = true;
      } catch (error) {
        failure = error;
        this.#deps.logger.warn({ err: error, guildId: ready.guildId }, 'playback failed');
      }
    }
    const attached = await attaching;
    if (failure !== undefined)
      for (const [i, meta] of metas.entries()) if (!attached[i]) await this.#tellNotPlayed(meta, ready.items[i]!, failure);
    await this.#deps.jobs.settle(ready.items.map((item, i) => ({ id: item.id, delivered: heard || attached[i]! })));
    return { played: heard, attached: attached.some(Boolean) };
  }

  /**
   * Whether a batch is played in `voiceChannel` (null: nothing can be played). Auto-read messages
   * are played only when queued for this voice session, none is to be only posted, and everyone now
   * in the call can view each of their channels (checked again here: members join, the bot moves);
   * `hidden` when that last check failed. /say and /narrate are played when queued for this session.
   */
  #whetherPlayed(ready: ReadyUtterance, metas: UtteranceMeta[], voiceChannel: string | null): { played: boolean; hidden: boolean } {
    if (voiceChannel === null) return { played: false, hidden: false };
    const session = voiceAudience(voiceChannel);
    const auto = ready.items.filter((item) => item.kind === 'auto' && !(item.meta as UtteranceMeta).botClip);
    // A request queued for its text channel (before a /join) is attached: played, it would cut into what the session plays.
    if (auto.length === 0) return { played: !metas.every((m) => m.attachOnly) && audienceOf(ready.items[0]!) === session, hidden: false };
    if (auto.some((item) => audienceOf(item) !== session || (item.meta as UtteranceMeta).attachOnly))
      return { played: false, hidden: false };
    const hidden = [...new Set(auto.map((item) => item.channelId))].some((c) => !this.#canView(ready.guildId, c, voiceChannel));
    return { played: !hidden, hidden };
  }

  /**
   * What was being played could not be (the call could not be rejoined in time, the clip never
   * started): whoever asked is told, so nothing is lost without a word. A session that ended is
   * told in its channel once (voice-events.ts): only a /say or /narrate waiting on it hears more.
   */
  async #tellNotPlayed(meta: UtteranceMeta, item: Utterance, error: unknown): Promise<void> {
    if (meta.botClip) return;
    const ended = error instanceof VoiceSessionError && (error.code === 'destroyed' || error.code === 'no_session');
    if (meta.delivery.kind === 'interaction') {
      const content = t(meta.lang, ended ? 'cancelled.disconnected' : 'cancelled.play_failed');
      return void (await this.#deps.replies.finish(item, meta, { content }));
    }
    if (ended) return;
    const to = { guildId: item.guildId, userId: item.userId, channelId: meta.delivery.channelId, messageId: meta.delivery.messageId };
    await this.#deps.notices.tellAuthor(to, 'play_failed', t(meta.lang, 'cancelled.play_failed'));
  }

  /** An auto-read message of a channel someone now in the call cannot view, in a channel without MP3 posts: its author is told. */
  async #tellHidden(meta: UtteranceMeta, item: Utterance, voiceChannel: string): Promise<void> {
    if (meta.delivery.kind !== 'message')
      return void (await this.#deps.replies.finish(item, meta, { content: t(meta.lang, 'cancelled.voice_only') }));
    const content = t(meta.lang, 'autoread.hidden_from_listeners', { voice: `<#${voiceChannel}>` });
    const to = { guildId: item.guildId, userId: item.userId, channelId: meta.delivery.channelId, messageId: meta.delivery.messageId };
    await this.#deps.notices.tellAuthor(to, 'hidden', content);
  }

  /** /say and /narrate dropped by /clear, /leave or a leave: each told why; their finished jobs end undelivered. */
  cancelled(items: readonly Utterance[], reason: ClearReason): void {
    for (const item of items) {
      const meta = item.meta as UtteranceMeta | undefined;
      if (meta?.delivery.kind !== 'interaction') continue;
      void this.#deps.replies.finish(item, meta, { content: t(meta.lang, `cancelled.${reason}`) });
    }
    void this.#deps.jobs.discard(items.map((item) => item.id));
  }

  /**
   * An advanced job finished after a restart: its audio goes where the request asked for it.
   * Rejects when Discord did not take it, so the job stays undelivered and is tried again later.
   */
  async deliverRecoveredJob(job: StoredJob, result: { mp3: Buffer; seed?: number }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    if (
      !(await this.#attach(
        meta,
        { id: job.jobId, userId: job.userId, channelId: job.channelId },
        result.mp3,
        result.seed ?? job.seed ?? undefined,
      ))
    ) {
      throw new BotError('not_delivered', { message: 'Discord did not take the audio of a resumed advanced job' });
    }
  }

  /** An advanced job that a restart could not finish: its author is told why. */
  async tellRecoveredJobFailure(job: StoredJob, error: { code: string; message: string }): Promise<void> {
    const meta = this.#recoveredMeta(job);
    const item = { id: job.jobId, userId: job.userId, channelId: job.channelId, guildId: job.guildId, voice: job.request.voice ?? '' };
    await this.#tellFailure(
      meta,
      item,
      new TtsError(isKnownCode(error.code) ? error.code : 'unknown', { message: error.message, serviceCode: error.code }),
    );
  }

  /** Audio read with other channels' messages for the voice channel could not be played: nothing is posted, the author is told. */
  async #tellNotPosted(meta: UtteranceMeta, item: Utterance): Promise<void> {
    const content = t(meta.lang, 'cancelled.voice_only');
    if (meta.delivery.kind === 'interaction') return void (await this.#deps.replies.finish(item, meta, { content }));
    const to = { guildId: item.guildId, userId: item.userId, channelId: meta.delivery.channelId, messageId: meta.delivery.messageId };
    await this.#deps.notices.tellAuthor(to, 'voice_only', content);
  }

  /** Posts the MP3 where `meta` says; resolves whether it reached Discord. */
  async #attach(
    meta: UtteranceMeta,
    item: Pick<Utterance, 'id' | 'userId' | 'channelId'>,
    mp3: string | Buffer,
    seed: number | undefined,
    signal?: AbortSignal,
  ): Promise<boolean> {
    const file = { attachment: mp3, name: 'speech.mp3' };
    if (meta.delivery.kind === 'interaction') {
      const content = meta.advancedVoice
        ? t(meta.lang, 'narrate.done', { voice: meta.advancedVoice, seed: seed ?? '—' })
        : t(meta.lang, 'say.attached');
      return this.#deps.replies.finish(item, meta, { content, files: [file] });
    }
    const { channelId, messageId } = meta.delivery;
    const channel = await this.#deps.client.channels.fetch(channelId).catch(() => null);
    // A message deleted meanwhile (it aborts the delivery) gets no file: not before, nor left after an upload it overtook.
    if (!channel?.isSendable() || signal?.aborted) return false;
    return channel
      .send({
        files: [file],
        allowedMentions: { parse: [], repliedUser: false },
        ...(messageId ? { reply: { messageReference: messageId, failIfNotExists: false } } : {}),
      })
      .then(async (sent) => {
        if (!signal?.aborted) return true;
        await sent
          .delete()
          .catch((error: unknown) => this.#deps.logger.warn({ err: error, channelId }, 'could not remove audio of a deleted message'));
        return false;
      })
      .catch((error: unknown) => {
        this.#deps.logger.warn({ err: error, channelId }, 'could not post audio');
        return false;
      });
  }

  async #tellFailure(meta: UtteranceMeta, item: Item, error: Error): Promise<void> {
    const known = describeFailure(meta.lang, error, { voice: item.voice });
    if (!known) this.#deps.logger.error({ err: error }, 'speech failed');
    // No member asked for the bot's own clip: there is nobody to tell.
    if (meta.botClip) return void this.#deps.logger.info({ err: error, guildId: item.guildId }, 'bot clip not spoken');
    const content = known ?? t(meta.lang, 'error.generic');
    if (meta.delivery.kind === 'interaction') {
      const prefix = meta.advancedVoice ? t(meta.lang, 'narrate.failed', { reason: content }) : content;
      await this.#deps.replies.finish(item, meta, { content: prefix });
      return;
    }
    // Auto-read: one public notice per member and kind per hour, a reaction in between.
    const kind = (error as { code?: string }).code ?? 'failed';
    await this.#deps.notices.tellAuthor(
      { guildId: item.guildId, userId: item.userId, channelId: meta.delivery.channelId, messageId: meta.delivery.messageId },
      kind,
      content,
    );
  }

  /** The stored delivery of a job; the reply's answer goes to its channel once the token is too old. */
  #recoveredMeta(job: StoredJob): UtteranceMeta {
    const stored = job.delivery as UtteranceMeta | null;
    const delivery: DeliveryTarget =
      stored?.delivery.kind === 'interaction'
        ? { ...stored.delivery, createdAt: stored.delivery.createdAt ?? job.createdAt, channelId: job.channelId }
        : { kind: 'message', channelId: job.channelId, messageId: '' };
    return { lang: stored?.lang ?? 'ja', advancedVoice: stored?.advancedVoice ?? job.request.voice ?? 'Ruby', delivery };
  }
}

/** The MP3 to attach: the file as the service sent it, or clips played back to back joined (same voice, so the same MP3 format). */
async function mp3Of(audio: ReadyAudio): Promise<string | Buffer> {
  if (!audio.parts) return audio.mp3Path ?? audio.mp3!;
  return Buffer.concat(await Promise.all(audio.parts.map((p) => (p.mp3 ? Promise.resolve(p.mp3) : readFile(p.mp3Path!)))));
}
