import { EventEmitter } from 'node:events';
import { availableParallelism } from 'node:os';
import { getCACertificates } from 'node:tls';
import { Worker } from 'node:worker_threads';
import type { DiscordGatewayAdapterImplementerMethods } from '@discordjs/voice';
import pino from 'pino';
import type { Logger } from '../util/log.ts';
import { moments } from '../util/moments.ts';
import { VoiceSessionError, type VoiceSessionErrorCode } from './errors.ts';
import type { ClipStarted, PlayableAudio, VoiceSession, VoiceSessionOptions, VoiceSessionState } from './session.ts';
import type { FromWorker, ToWorker, WorkerData } from './worker-protocol.ts';

const WORKER_URL = new URL('./voice-worker.ts', import.meta.url);
/** How long a worker may take to leave its calls at shutdown before it is ended. */
const CLOSE_GRACE_MS = 2_000;
const SESSION_ERROR_CODES = new Set<string>(['join_timeout', 'not_ready', 'destroyed', 'playback_failed', 'no_session']);

/** The privacy code (DAVE) of each call whose connection runs in a worker, as last reported, by `group/guildId`. */
const privacyCodes = new Map<string, string>();

/**
 * The call's privacy code of `guildId`'s session in a voice worker: what getVoiceConnection(guildId,
 * group) gives for a connection on the main thread (`group`: @discordjs/voice's connection group).
 */
export function workerVoicePrivacyCode(guildId: string, group = 'default'): string | undefined {
  return privacyCodes.get(`${group}/${guildId}`);
}

/** VOICE_WORKERS unset: one thread per two cores, one to four (a worker plays hundreds of calls). */
export function defaultVoiceWorkers(): number {
  return Math.min(4, Math.max(1, Math.floor(availableParallelism() / 2)));
}

interface PoolWorker {
  worker: Worker;
  sessions: Map<number, RemoteVoiceSession>;
  exited: Promise<void>;
}

/**
 * The voice workers (src/voice/voice-worker.ts): `size` threads, started when the first session
 * opens; each new session goes to the one with the fewest. A worker that stops unexpectedly ends
 * its sessions ('voice worker stopped'), so the manager forgets them and says so; the next session
 * starts a new worker.
 */
export class VoiceWorkerPool {
  readonly #size: number;
  readonly #logger: Logger;
  readonly #workers: (PoolWorker | undefined)[];
  #nextId = 0;
  #closed = false;

  constructor(options: { size: number; logger: Logger }) {
    this.#size = options.size;
    this.#logger = options.logger;
    this.#workers = Array.from({ length: options.size }, () => undefined);
  }

  /** A session whose connection runs in one of the workers. */
  open(options: Omit<VoiceSessionOptions, 'logger' | 'clock'>): VoiceSession {
    const slot = this.#leastBusy();
    const pw = (this.#workers[slot] ??= this.#start(slot));
    const id = this.#nextId++;
    const session = new RemoteVoiceSession(id, pw.worker, options, this.#logger);
    pw.sessions.set(id, session);
    session.on('stateChange', (_old, next) => {
      if (next.status === 'destroyed') pw.sessions.delete(id);
    });
    return session;
  }

  /** Shutdown: the workers leave their calls and end (after a grace, they are ended). */
  close(): Promise<void> {
    this.#closed = true;
    const running = this.#workers.filter((w): w is PoolWorker => w !== undefined);
    this.#workers.fill(undefined);
    return Promise.all(
      running.map(async ({ worker, exited }) => {
        worker.postMessage({ type: 'close' } satisfies ToWorker);
        const timer = setTimeout(() => void worker.terminate(), CLOSE_GRACE_MS).unref();
        await exited;
        clearTimeout(timer);
      }),
    ).then(() => undefined);
  }

  /** The worker with the fewest sessions (one not started yet has none). */
  #leastBusy(): number {
    let best = 0;
    for (let i = 1; i < this.#size; i++) {
      if ((this.#workers[i]?.sessions.size ?? 0) < (this.#workers[best]?.sessions.size ?? 0)) best = i;
    }
    return best;
  }

  #start(slot: number): PoolWorker {
    const data: WorkerData = { logLevel: this.#logger.level, ca: getCACertificates('default') };
    const worker = new Worker(WORKER_URL, { workerData: data, execArgv: ['--experimental-strip-types'] });
    // The process may end while workers run (their sessions end with it).
    worker.unref();
    const logger = this.#logger.child({ voiceWorker: slot });
    const sessions = new Map<number, RemoteVoiceSession>();
    worker.on('message', (message: FromWorker) => {
      if (message.type === 'log') return relayLog(logger, message.line);
      if (message.type === 'moment') {
        const channel = moments[message.name as keyof typeof moments];
        if (channel?.hasSubscribers) channel.publish({ ...message.data, at: message.data.at - performance.timeOrigin });
        return;
      }
      if (message.type === 'result') {
        for (const session of sessions.values()) if (session.settle(message)) return;
        return;
      }
      sessions.get(message.id)?.receive(message);
    });
    const exited = new Promise<void>((resolve) =>
      worker.once('exit', (code) => {
        if (this.#workers[slot]?.worker === worker) this.#workers[slot] = undefined;
        if (!this.#closed || sessions.size > 0)
          logger.error({ code, sessions: sessions.size }, 'voice worker stopped; its voice sessions end');
        for (const session of [...sessions.values()]) session.destroy('voice worker stopped');
        resolve();
      }),
    );
    worker.on('error', (error) => logger.error({ err: error }, 'voice worker failed'));
    return { worker, sessions, exited };
  }
}

/** What the worker needs of `audio` (paths and bytes), without what the caller keeps (a cache pin's release, say). */
function portable(audio: PlayableAudio): PlayableAudio {
  const { oggPath, mp3Path, mp3, durationMs, parts } = audio;
  return {
    ...(oggPath !== undefined ? { oggPath } : {}),
    ...(mp3Path !== undefined ? { mp3Path } : {}),
    ...(mp3 !== undefined ? { mp3 } : {}),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(parts !== undefined ? { parts: parts.map(portable) } : {}),
  };
}

/** A worker's pino line, logged again through the main thread's logger (which redacts and writes it). */
function relayLog(logger: Logger, line: string): void {
  try {
    const { level, msg, time: _time, pid: _pid, hostname: _hostname, ...fields } = JSON.parse(line) as Record<string, unknown>;
    const label = pino.levels.labels[Number(level)] as pino.Level | undefined;
    logger[label ?? 'info'](fields, typeof msg === 'string' ? msg : undefined);
  } catch {
    logger.warn({ line: line.slice(0, 200) }, 'unreadable voice worker log line');
  }
}

/**
 * The main thread's side of a session whose connection runs in a voice worker: it holds the
 * guild's gateway adapter (discord.js's `voiceAdapterCreator`) and relays it, mirrors the
 * session's state, and turns play, ready, move and destroy into messages. Leaving sends its op 4
 * at once from here, as the library would, so a shutdown right after still leaves the channel.
 */
export class RemoteVoiceSession
  extends EventEmitter<{ stateChange: [VoiceSessionState, VoiceSessionState]; clipStarted: [ClipStarted] }>
  implements VoiceSession
{
  readonly guildId: string;
  channelId: string;
  textChannelId: string | null;
  readonly #id: number;
  readonly #worker: Worker;
  readonly #logger: Logger;
  #adapter: DiscordGatewayAdapterImplementerMethods | undefined;
  #state: VoiceSessionState = { status: 'connecting' };
  readonly #selfDeaf = true;
  /** Calls (ready, play) waiting for the worker's answer. */
  readonly #calls = new Map<number, { resolve: () => void; reject: (error: unknown) => void }>();
  /** The utterance whose first packet is awaited, and when it was asked to play (this thread's clock). */
  #firstPacketSince: number | undefined;
  /** Where this session's privacy code is kept (see workerVoicePrivacyCode). */
  readonly #privacyKey: string;
  static #nextCall = 0;

  constructor(id: number, worker: Worker, options: Omit<VoiceSessionOptions, 'logger' | 'clock'>, logger: Logger) {
    super();
    this.#id = id;
    this.#worker = worker;
    this.#logger = logger;
    this.guildId = options.guildId;
    this.channelId = options.channelId;
    this.textChannelId = options.textChannelId;
    const { guildId: _g, channelId: _c, textChannelId: _t, adapterCreator: _a, ...policy } = options;
    const group = (options as { group?: unknown }).group;
    this.#privacyKey = `${typeof group === 'string' ? group : 'default'}/${options.guildId}`;
    this.#send({ type: 'open', id, guildId: options.guildId, channelId: options.channelId, policy });
    this.#adapter = options.adapterCreator({
      onVoiceStateUpdate: (data) => this.#send({ type: 'voiceState', id, data }),
      onVoiceServerUpdate: (data) => this.#send({ type: 'voiceServer', id, data }),
      destroy: () => this.#send({ type: 'adapterGone', id }),
    });
  }

  get state(): VoiceSessionState {
    return this.#state;
  }

  #send(message: ToWorker): void {
    this.#worker.postMessage(message);
  }

  /** A message from the worker about this session. */
  receive(message: Exclude<FromWorker, { type: 'log' | 'moment' | 'result' }>): void {
    switch (message.type) {
      case 'payload':
        if (this.#adapter && !this.#adapter.sendPayload(message.payload)) this.#send({ type: 'notSent', id: this.#id });
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
      case 'clipStarted': {
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

  #call(message: (call: number) => ToWorker): { call: number; done: Promise<void> } {
    const call = RemoteVoiceSession.#nextCall++;
    const { promise, resolve, reject } = Promise.withResolvers<void>();
    // A play skipped before the worker answers is not awaited any more: its end must not be unhandled.
    promise.catch(() => {});
    this.#calls.set(call, { resolve, reject });
    this.#send(message(call));
    return { call, done: promise };
  }

  #setState(next: VoiceSessionState): void {
    const previous = this.#state;
    if (previous.status === 'destroyed') return;
    this.#state = next;
    if (next.status === 'destroyed') {
      privacyCodes.delete(this.#privacyKey);
      const closed = new VoiceSessionError('destroyed', { guildId: this.guildId });
      for (const { reject } of this.#calls.values()) reject(closed);
      this.#calls.clear();
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
    if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
    await this.#call((call) => ({ type: 'ready', id: this.#id, call })).done;
  }

  async play(audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    if (this.#state.status === 'destroyed') throw new VoiceSessionError('destroyed', { guildId: this.guildId });
    if (signal.aborted) return;
    this.#firstPacketSince = performance.now();
    const { call, done } = this.#call((call) => ({ type: 'play', id: this.#id, call, audio: portable(audio) }));
    // A skip settles at once, as on the main thread; the worker stops the player within its step.
    const settled = new AbortController();
    const skipped = new Promise<void>((resolve) =>
      signal.addEventListener(
        'abort',
        () => {
          this.#send({ type: 'skip', id: this.#id, call });
          resolve();
        },
        { once: true, signal: settled.signal },
      ),
    );
    try {
      await Promise.race([done, skipped]);
    } finally {
      settled.abort();
      this.#firstPacketSince = undefined;
    }
  }

  move(channelId: string): void {
    this.channelId = channelId;
    this.#send({ type: 'move', id: this.#id, channelId });
  }

  destroy(reason = 'left'): void {
    if (this.#state.status === 'destroyed') return;
    this.#setState({ status: 'destroyed', reason });
    this.#leave();
    this.#send({ type: 'destroy', id: this.#id, reason });
    this.#logger.debug({ guildId: this.guildId, reason }, 'voice session closed');
  }
}
