import { EventEmitter } from 'node:events';
import type { Worker } from 'node:worker_threads';
import type { DiscordGatewayAdapterImplementerMethods } from '@discordjs/voice';
import { sleep } from '../util/clock.ts';
import type { Logger } from '../util/log.ts';
import { VoiceSessionError, type VoiceSessionErrorCode } from './errors.ts';
import type {
  PlayableAudio,
  VoiceRecoveryCause,
  VoiceSession,
  VoiceSessionEvents,
  VoiceSessionOptions,
  VoiceSessionPolicy,
  VoiceSessionState,
} from './session.ts';
import type { FromWorker, ToWorker } from './worker-protocol.ts';

const SESSION_ERROR_CODES = new Set<string>(['join_timeout', 'not_ready', 'destroyed', 'playback_failed', 'no_session']);

/** How long after its length a clip may still be playing before it is ended (the queue moves on). */
export const PLAY_SLACK_MS = 5_000;
/** How long a play may go without one voice packet, speech waiting and the call Ready, before the call is rejoined (default). */
export const STALL_MS = 4_000;
/** How many times an utterance cut short by a recovery is played again from its start. */
const MAX_REPLAYS = 3;
/** How long an utterance waits for its session to be rejoined before it gives up. */
const REATTACH_WAIT_MS = 30_000;
/** Default of VoiceSessionPolicy.readyTimeoutMs (session.ts): the longest a play waits for Ready in the worker. */
const READY_TIMEOUT_MS = 20_000;

/** The privacy code (DAVE) of each call whose connection runs in a worker, as last reported, by `group/guildId`. */
const privacyCodes = new Map<string, string>();

/**
 * The call's privacy code of `guildId`'s session in a voice worker: what getVoiceConnection(guildId,
 * group) gives for a connection on the main thread (`group`: @discordjs/voice's connection group).
 */
export function workerVoicePrivacyCode(guildId: string, group = 'default'): string | undefined {
  return privacyCodes.get(`${group}/${guildId}`);
}

/** Where a session's connection runs now: a worker, and the session's id there. */
interface Attached {
  worker: Worker;
  id: number;
}

/** A call to the worker waiting for its answer (ready, play). */
interface PendingCall {
  id: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** The utterance being played: when it was sent, and the packet count its first packet must pass. */
interface Playing {
  call: number;
  sentAt: number;
  packetsAtStart: number;
  startedAt: number | undefined;
}

/**
 * The main thread's side of a session whose connection runs in a voice worker: it holds the
 * guild's gateway adapter (discord.js's `voiceAdapterCreator`) and relays it, mirrors the
 * session's state, and turns play, ready, move and destroy into messages. Leaving sends its op 4
 * at once from here, as the library would, so a shutdown right after still leaves the channel.
 *
 * It outlives its worker: when the worker dies or hangs (src/voice/worker-pool.ts) or the call goes
 * silent while speech waits (`progress`), the pool rejoins it from a worker again (`attach`), with
 * the same adapter, and what was playing is played again from its start. A play that does not
 * start within the ready wait, or does not end within its length, plus a margin, is ended.
 */
export class RemoteVoiceSession extends EventEmitter<VoiceSessionEvents> implements VoiceSession {
  readonly guildId: string;
  channelId: string;
  textChannelId: string | null;
  readonly #policy: VoiceSessionPolicy;
  readonly #logger: Logger;
  #attached: Attached | undefined;
  #adapter: DiscordGatewayAdapterImplementerMethods | undefined;
  #state: VoiceSessionState = { status: 'connecting' };
  readonly #selfDeaf = true;
  readonly #calls = new Map<number, PendingCall>();
  /** The utterance whose first packet is awaited, and when it was asked to play (this thread's clock). */
  #firstPacketSince: number | undefined;
  /** Where this session's privacy code is kept (see workerVoicePrivacyCode). */
  readonly #privacyKey: string;
  /** Why the call is being rejoined from a worker, until it is Ready again. */
  #recovering: VoiceRecoveryCause | undefined;
  /** Rejoins in a row without a Ready between them (the state's attempt). */
  #attempts = 0;
  /** Waiting for the next `attach` (a play or ready cut short by a recovery). */
  #reattached = Promise.withResolvers<void>();
  /** Packets the worker's session sent, as last reported, and since when (this thread's clock) that count stands. */
  #packets = { count: 0, since: performance.now() };
  #playing: Playing | undefined;
  #readySince = performance.now();
  static #nextCall = 0;

  readonly #stallMs: number;

  /** `stallAfterMs`: how long speech may wait in a Ready call without a packet going out (default STALL_MS). */
  constructor(options: Omit<VoiceSessionOptions, 'logger' | 'clock'>, logger: Logger, watch: { stallAfterMs?: number } = {}) {
    super();
    this.#logger = logger;
    this.#stallMs = watch.stallAfterMs ?? STALL_MS;
    this.guildId = options.guildId;
    this.channelId = options.channelId;
    this.textChannelId = options.textChannelId;
    const { guildId: _g, channelId: _c, textChannelId: _t, adapterCreator: _a, ...policy } = options;
    this.#policy = policy;
    this.#reattached.promise.catch(() => {});
    const group = (options as { group?: unknown }).group;
    this.#privacyKey = `${typeof group === 'string' ? group : 'default'}/${options.guildId}`;
    // Updates go to whichever worker runs the connection now; none while it is being rejoined.
    this.#adapter = options.adapterCreator({
      onVoiceStateUpdate: (data) => this.#send((id) => ({ type: 'voiceState', id, data })),
      onVoiceServerUpdate: (data) => this.#send((id) => ({ type: 'voiceServer', id, data })),
      destroy: () => this.#send((id) => ({ type: 'adapterGone', id })),
    });
  }

  get state(): VoiceSessionState {
    return this.#state;
  }

  /** The session's id in its worker now (undefined while it is being rejoined). */
  get workerSessionId(): number | undefined {
    return this.#attached?.id;
  }

  /**
   * Runs the session's connection in `worker` as session `id` (opened there now): the first time,
   * or to rejoin the call after its previous worker or connection was lost. Its gateway adapter
   * stays; the worker's connection signals the channel again through it.
   */
  attach(worker: Worker, id: number): void {
    if (this.#state.status === 'destroyed') return;
    this.#attached = { worker, id };
    this.#packets = { count: 0, since: performance.now() };
    worker.postMessage({ type: 'open', id, guildId: this.guildId, channelId: this.channelId, policy: this.#policy } satisfies ToWorker);
    const reattached = this.#reattached;
    this.#reattached = Promise.withResolvers<void>();
    this.#reattached.promise.catch(() => {});
    reattached.resolve();
    if (this.#recovering) {
      // Nobody else waits for this connection to be Ready: the worker gives up on it after the ready timeout (join_timeout).
      void this.ready().catch((error: unknown) =>
        this.#logger.warn({ err: error, guildId: this.guildId }, 'could not rejoin the voice channel'),
      );
    }
  }

  /**
   * The connection was lost with its worker (`cause`: crashed or hung), or is to be replaced
   * (the call went silent): calls under way end as interrupted, and the session waits, reconnecting,
   * for `attach`. Returns the worker-side id it had (to destroy there, if the worker lives).
   */
  detach(cause: VoiceRecoveryCause): number | undefined {
    const was = this.#attached;
    if (this.#state.status === 'destroyed' || !was) return undefined;
    this.#attached = undefined;
    this.#recovering ??= cause;
    this.#attempts++;
    this.#logger.warn({ guildId: this.guildId, channelId: this.channelId, cause, attempt: this.#attempts }, 'voice call lost; rejoining');
    const interrupted = new VoiceSessionError('interrupted', { guildId: this.guildId });
    for (const [call, pending] of this.#calls) {
      if (pending.id !== was.id) continue;
      this.#calls.delete(call);
      pending.reject(interrupted);
    }
    this.#setState({ status: 'reconnecting', attempt: this.#attempts });
    return was.id;
  }

  /**
   * The packets the worker's session sent so far (a 'pong'); true when the call is silent while it
   * should not be: an utterance waits to be heard, the call is Ready, and no packet went out for
   * `stallAfterMs` since it was asked to play, since the call was Ready and since the last packet.
   */
  progress(count: number, now = performance.now()): boolean {
    if (count !== this.#packets.count) this.#packets = { count, since: now };
    const playing = this.#playing;
    if (playing && playing.startedAt === undefined && count > playing.packetsAtStart) playing.startedAt = now;
    if (!playing || this.#state.status !== 'ready' || !this.#attached) return false;
    return now - Math.max(this.#packets.since, playing.sentAt, this.#readySince) >= this.#stallMs;
  }

  #send(message: (id: number) => ToWorker): void {
    const at = this.#attached;
    if (at) at.worker.postMessage(message(at.id));
  }

  /** A message from the worker about this session. */
  receive(message: Exclude<FromWorker, { type: 'log' | 'moment' | 'result' | 'pong' }>): void {
    switch (message.type) {
      case 'payload':
        if (this.#adapter && !this.#adapter.sendPayload(message.payload)) this.#send((id) => ({ type: 'notSent', id }));
        return;
      case 'adapterDestroy':
        this.#adapter?.destroy();
        this.#adapter = undefined;
        return;
      case 'state':
        // The worker ended the session itself (join timeout, too many rejoins): its connection's
        // leave and adapter destroy come after this, for a session the pool no longer routes to.
        if (message.state.status === 'destroyed') this.#leave();
        return this.#setState(message.state);
      case 'privacy':
        if (message.code) privacyCodes.set(this.#privacyKey, message.code);
        else privacyCodes.delete(this.#privacyKey);
        return;
      case 'recovered':
        return void this.emit('recovered', { guildId: this.guildId, cause: message.cause });
      case 'clipStarted': {
        if (this.#playing && this.#playing.startedAt === undefined) this.#playing.startedAt = performance.now();
        const since = this.#firstPacketSince;
        if (since === undefined) return;
        this.#firstPacketSince = undefined;
        this.emit('clipStarted', { guildId: this.guildId, ms: message.at - performance.timeOrigin - since });
      }
    }
  }

  /** The worker's answer to a call, if the call is this session's. */
  settle(message: Extract<FromWorker, { type: 'result' }>): boolean {
    const call = this.#calls.get(message.call);
    if (!call) return false;
    this.#calls.delete(message.call);
    if (!message.error) call.resolve();
    else {
      const code = (SESSION_ERROR_CODES.has(message.error.code) ? message.error.code : 'playback_failed') as VoiceSessionErrorCode;
      call.reject(new VoiceSessionError(code, { guildId: this.guildId, message: message.error.message }));
    }
    return true;
  }

  /** Sends a call to the session's worker; undefined when it is being rejoined. */
  #call(message: (call: number, id: number) => ToWorker): { call: number; done: Promise<void> } | undefined {
    const at = this.#attached;
    if (!at) return undefined;
    const call = RemoteVoiceSession.#nextCall++;
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    // A play skipped before the worker answers is not awaited any more: its end must not be unhandled.
    promise.catch(() => {});
    this.#calls.set(call, { id: at.id, resolve, reject });
    at.worker.postMessage(message(call, at.id));
    return { call, done: promise };
  }

  /** Resolves once the session runs in a worker again (or `signal` aborts); rejects when it ends, or after REATTACH_WAIT_MS. */
  async #untilAttached(signal?: AbortSignal): Promise<void> {
    if (this.#attached) return;
    if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
    const waited = new AbortController();
    const stop = signal ? AbortSignal.any([signal, waited.signal]) : waited.signal;
    const timedOut = sleep(REATTACH_WAIT_MS, stop).then(() => {
      throw new VoiceSessionError('interrupted', { guildId: this.guildId, message: 'the voice call was not rejoined in time' });
    });
    const skipped = new Promise<void>((resolve) => stop.addEventListener('abort', () => resolve(), { once: true }));
    try {
      await Promise.race([this.#reattached.promise, timedOut, skipped]);
    } finally {
      waited.abort();
      timedOut.catch(() => {});
    }
  }

  #setState(next: VoiceSessionState): void {
    const previous = this.#state;
    if (previous.status === 'destroyed') return;
    this.#state = next;
    if (next.status === 'ready') {
      this.#readySince = performance.now();
      const cause = this.#recovering;
      this.#recovering = undefined;
      this.#attempts = 0;
      if (cause) {
        this.#logger.info({ guildId: this.guildId, channelId: this.channelId, cause }, 'voice call rejoined');
        // Emitted after the state: whoever counts it sees the session Ready.
        queueMicrotask(() => this.emit('recovered', { guildId: this.guildId, cause }));
      }
    }
    if (next.status === 'destroyed') {
      privacyCodes.delete(this.#privacyKey);
      const closed = new VoiceSessionError('destroyed', { guildId: this.guildId });
      for (const { reject } of this.#calls.values()) reject(closed);
      this.#calls.clear();
      this.#reattached.reject(closed);
      this.#attached = undefined;
    }
    this.emit('stateChange', previous, next);
  }

  /** The leave the worker's connection would send, sent now (the worker's own is dropped), and the adapter freed. */
  #leave(): void {
    const adapter = this.#adapter;
    this.#adapter = undefined;
    if (!adapter) return;
    adapter.sendPayload({ op: 4, d: { guild_id: this.guildId, channel_id: null, self_deaf: this.#selfDeaf, self_mute: false } });
    adapter.destroy();
  }

  async ready(): Promise<void> {
    for (;;) {
      if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
      if (!this.#attached) await this.#untilAttached();
      const sent = this.#call((call, id) => ({ type: 'ready', id, call }));
      if (!sent) continue;
      try {
        return await sent.done;
      } catch (error) {
        // Cut short by a recovery: wait for the next worker's connection instead.
        if (!(error instanceof VoiceSessionError && error.code === 'interrupted')) throw error;
      }
    }
  }

  /**
   * Plays one utterance; settles once (see GuildVoiceSession.play). Cut short by a recovery, it is
   * played again from its start once the call is rejoined (at most MAX_REPLAYS times, then it
   * rejects as interrupted). Not started within the ready wait, or still playing `PLAY_SLACK_MS`
   * after its length, it is ended (rejects play_timeout, or resolves: it was heard to its end).
   */
  async play(audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
      if (signal.aborted) return;
      if (!this.#attached) {
        await this.#untilAttached(signal);
        if (signal.aborted) return;
      }
      try {
        return await this.#playOnce(audio, signal);
      } catch (error) {
        if (this.state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId, cause: error });
        const interrupted = error instanceof VoiceSessionError && error.code === 'interrupted';
        if (!interrupted || attempt >= MAX_REPLAYS) throw error;
        this.#logger.info(
          { guildId: this.guildId, attempt: attempt + 1 },
          'utterance cut short by a voice recovery; playing it again from its start',
        );
      }
    }
  }

  async #playOnce(audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    const sent = this.#call((call, id) => ({ type: 'play', id, call, audio: portable(audio) }));
    if (!sent) throw new VoiceSessionError('interrupted', { guildId: this.guildId });
    const { call, done } = sent;
    const now = performance.now();
    this.#firstPacketSince = now;
    const playing: Playing = { call, sentAt: now, packetsAtStart: this.#packets.count, startedAt: undefined };
    this.#playing = playing;
    // A skip settles at once, as on the main thread; the worker stops the player within its step.
    const settled = new AbortController();
    const skipped = new Promise<void>((resolve) =>
      signal.addEventListener(
        'abort',
        () => {
          this.#send((id) => ({ type: 'skip', id, call }));
          resolve();
        },
        { once: true, signal: settled.signal },
      ),
    );
    const deadline = this.#deadline(playing, durationOf(audio), settled.signal).then((late) => {
      if (late === undefined) return;
      this.#send((id) => ({ type: 'skip', id, call }));
      this.#logger.warn({ guildId: this.guildId, late }, 'a clip did not finish in time; ended');
      this.emit('recovered', { guildId: this.guildId, cause: 'play_timeout' });
      // Not started: not heard, and whoever asked is told. Started: heard to its length.
      if (late === 'start') throw new VoiceSessionError('play_timeout', { guildId: this.guildId });
    });
    try {
      await Promise.race([done, skipped, deadline]);
    } finally {
      settled.abort();
      if (this.#playing === playing) this.#playing = undefined;
      this.#firstPacketSince = undefined;
    }
  }

  /**
   * Resolves 'start' when the play's first packet did not go out within the worker's ready wait
   * plus PLAY_SLACK_MS, 'end' when it is still playing PLAY_SLACK_MS after its length; undefined
   * once `stop` aborts (it settled).
   */
  async #deadline(playing: Playing, durationMs: number | undefined, stop: AbortSignal): Promise<'start' | 'end' | undefined> {
    const startWithin = (this.#policy.readyTimeoutMs ?? READY_TIMEOUT_MS) + PLAY_SLACK_MS;
    try {
      for (;;) {
        const now = performance.now();
        if (playing.startedAt === undefined) {
          if (now - playing.sentAt >= startWithin) return 'start';
          await sleep(Math.min(250, startWithin - (now - playing.sentAt)), stop);
          continue;
        }
        if (durationMs === undefined) return undefined;
        const left = playing.startedAt + durationMs + PLAY_SLACK_MS - now;
        if (left <= 0) return 'end';
        await sleep(left, stop);
      }
    } catch {
      return undefined; // settled
    }
  }

  move(channelId: string): void {
    this.channelId = channelId;
    this.#send((id) => ({ type: 'move', id, channelId }));
  }

  destroy(reason = 'left'): void {
    if (this.#state.status === 'destroyed') return;
    const at = this.#attached;
    this.#setState({ status: 'destroyed', reason });
    this.#leave();
    at?.worker.postMessage({ type: 'destroy', id: at.id, reason } satisfies ToWorker);
    this.#logger.debug({ guildId: this.guildId, reason }, 'voice session closed');
  }
}

/** The length of `audio` (its parts' together), when known. */
function durationOf(audio: PlayableAudio): number | undefined {
  if (audio.durationMs !== undefined) return audio.durationMs;
  if (!audio.parts) return undefined;
  let ms = 0;
  for (const part of audio.parts) {
    const d = durationOf(part);
    if (d === undefined) return undefined;
    ms += d;
  }
  return ms;
}

/** What the worker needs of `audio` (paths and bytes), without what the caller keeps (a cache pin's release, say). */
function portable(audio: PlayableAudio): PlayableAudio {
  const { oggPath, mp3Path, mp3, durationMs, parts, volume } = audio;
  return {
    ...(volume !== undefined ? { volume } : {}),
    ...(oggPath !== undefined ? { oggPath } : {}),
    ...(mp3Path !== undefined ? { mp3Path } : {}),
    ...(mp3 !== undefined ? { mp3 } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(parts !== undefined ? { parts: parts.map(portable) } : {}),
  };
}
