import { availableParallelism } from 'node:os';
import { getCACertificates } from 'node:tls';
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import type { Logger } from '../util/log.ts';
import { moments } from '../util/moments.ts';
import { WorkerLiveness } from './liveness.ts';
import { RemoteVoiceSession, STALL_MS } from './remote-session.ts';
import type { VoiceRecoveryCause, VoiceSession, VoiceSessionOptions } from './session.ts';
import type { FromWorker, ToWorker, VoiceWorkerFault, WorkerClockTrace, WorkerData } from './worker-protocol.ts';

const WORKER_URL = new URL('./voice-worker.ts', import.meta.url);
/** How long a worker may take to leave its calls at shutdown before it is ended. */
const CLOSE_GRACE_MS = 2_000;

/** How a pool looks after its workers (tests shorten the waits). */
export interface WorkerPoolPolicy {
  /** How often each worker is asked whether it is there (and how many packets its calls sent). */
  pingEveryMs?: number;
  /** A worker that answers nothing for this long is hung: it is ended and its calls rejoined from a new one. */
  hangAfterMs?: number;
  /** A worker still loading gets this long before its first answer. */
  startupGraceMs?: number;
  /** Pause before the second restart of a worker in a row; each further one waits twice as long (the first is at once). */
  restartBackoffMs?: number;
  /** Restarts in a row (each within `stableAfterMs` of the one before) before its calls are given up. */
  maxRestarts?: number;
  /** A worker that ran this long before failing was no crash loop: the count of restarts starts over. */
  stableAfterMs?: number;
  /** Speech waiting in a Ready call with no packet going out this long: the call is rejoined (RemoteVoiceSession.progress). */
  stallAfterMs?: number;
}

const POOL_DEFAULTS = {
  pingEveryMs: 250,
  hangAfterMs: 1_500,
  startupGraceMs: 30_000,
  restartBackoffMs: 500,
  maxRestarts: 5,
  stableAfterMs: 10_000,
  stallAfterMs: STALL_MS,
} as const satisfies Required<WorkerPoolPolicy>;

/** VOICE_WORKERS unset: one thread per two cores, one to four (a worker plays hundreds of calls). */
export function defaultVoiceWorkers(): number {
  return Math.min(4, Math.max(1, Math.floor(availableParallelism() / 2)));
}

interface PoolWorker {
  worker: Worker;
  slot: number;
  /** Sessions by their id in this worker. */
  sessions: Map<number, RemoteVoiceSession>;
  exited: Promise<void>;
  startedAt: number;
  liveness: WorkerLiveness;
  /** Found hung and being ended. */
  hung: boolean;
  /** Who waits for its next 'clockTrace' answer, in the order asked. */
  traceWaiters: ((trace: WorkerClockTrace | undefined) => void)[];
}

/** How long `clockTraces` waits for a worker's answer (a hung or ended one gives none). */
const CLOCK_TRACE_WAIT_MS = 1_000;

/**
 * The voice workers (src/voice/voice-worker.ts): `size` threads, started when the first session
 * opens; each new session goes to the one with the fewest. Each worker is asked every
 * `pingEveryMs` whether it is there; one that stops (crashed) or stops answering (hung, then
 * ended) is replaced, at once the first time and after a pause doubling with each restart in a
 * row, and its sessions rejoin their calls from the new one (their queues wait meanwhile; what
 * was playing is played again from its start). A session whose call goes silent while speech
 * waits (RemoteVoiceSession.progress) rejoins it in the same worker. After `maxRestarts` in a
 * row the worker's sessions end ('voice worker stopped'), so the manager forgets them and says so.
 */
export class VoiceWorkerPool {
  readonly #size: number;
  readonly #logger: Logger;
  readonly #policy: Required<WorkerPoolPolicy>;
  readonly #workers: (PoolWorker | undefined)[];
  /** Restarts in a row of each slot's worker, and when the last one started. */
  readonly #restarts: { count: number }[];
  #nextId = 0;
  #pingSeq = 0;
  #closed = false;
  readonly #pinger: NodeJS.Timeout;

  constructor(options: { size: number; logger: Logger } & WorkerPoolPolicy) {
    const { size, logger, ...policy } = options;
    this.#size = size;
    this.#logger = logger;
    this.#policy = { ...POOL_DEFAULTS, ...Object.fromEntries(Object.entries(policy).filter(([, v]) => v !== undefined)) };
    this.#workers = Array.from({ length: size }, () => undefined);
    this.#restarts = Array.from({ length: size }, () => ({ count: 0 }));
    this.#pinger = setInterval(() => this.#ping(), this.#policy.pingEveryMs);
    this.#pinger.unref();
  }

  /** A session whose connection runs in one of the workers. */
  open(options: Omit<VoiceSessionOptions, 'logger' | 'clock'>): VoiceSession {
    const slot = this.#leastBusy();
    const pw = (this.#workers[slot] ??= this.#start(slot));
    const session = new RemoteVoiceSession(options, this.#logger, { stallAfterMs: this.#policy.stallAfterMs });
    session.on('stateChange', (_old, next) => {
      if (next.status !== 'destroyed') return;
      for (const w of this.#workers) for (const [id, s] of w?.sessions ?? []) if (s === session) w!.sessions.delete(id);
    });
    this.#attach(pw, session);
    return session;
  }

  /** Each running worker's packet clock since the last ask (`npm run bench:voice` prints them); a worker that does not answer within a second is left out. */
  async clockTraces(): Promise<WorkerClockTrace[]> {
    const running = this.#workers.filter((w): w is PoolWorker => w !== undefined && !w.hung);
    const answers = await Promise.all(
      running.map(
        (pw) =>
          new Promise<WorkerClockTrace | undefined>((resolve) => {
            const timer = setTimeout(() => resolve(undefined), CLOCK_TRACE_WAIT_MS).unref();
            pw.traceWaiters.push((trace) => {
              clearTimeout(timer);
              resolve(trace);
            });
            pw.worker.postMessage({ type: 'clockTrace' } satisfies ToWorker);
          }),
      ),
    );
    return answers.filter((a) => a !== undefined);
  }

  /** Tests and benchmarks only (YOMIAGE_TEST_VOICE_FAULTS): every running worker fails as `kind` says. */
  injectFault(kind: VoiceWorkerFault): number {
    const running = this.#workers.filter((w): w is PoolWorker => w !== undefined);
    for (const { worker } of running) worker.postMessage({ type: 'fault', kind } satisfies ToWorker);
    return running.length;
  }

  /** Shutdown: the workers leave their calls and end (after a grace, they are ended). */
  close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#pinger);
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

  #attach(pw: PoolWorker, session: RemoteVoiceSession): void {
    const id = this.#nextId++;
    pw.sessions.set(id, session);
    session.attach(pw.worker, id);
  }

  /** The worker with the fewest sessions (one not started yet has none). */
  #leastBusy(): number {
    let best = 0;
    for (let i = 1; i < this.#size; i++) {
      if ((this.#workers[i]?.sessions.size ?? 0) < (this.#workers[best]?.sessions.size ?? 0)) best = i;
    }
    return best;
  }

  /** Asks each worker whether it is there; ends one that has not answered for too long (WorkerLiveness). */
  #ping(): void {
    const now = performance.now();
    const seq = ++this.#pingSeq;
    for (const pw of this.#workers) {
      if (!pw || pw.hung) continue;
      if (pw.liveness.tick(now) === 'hung') {
        pw.hung = true;
        const silentMs = Math.round(pw.liveness.silentFor(now));
        this.#logger.error({ voiceWorker: pw.slot, silentMs, sessions: pw.sessions.size }, 'voice worker stopped answering; replacing it');
        void pw.worker.terminate();
        continue;
      }
      pw.worker.postMessage({ type: 'ping', seq } satisfies ToWorker);
    }
  }

  /** A worker's answer: each session's packets so far; a session whose call went silent is rejoined in this worker. */
  #onPong(pw: PoolWorker, packets: Record<number, number>): void {
    const now = performance.now();
    for (const [id, session] of pw.sessions) {
      if (!session.progress(packets[id] ?? 0, now)) continue;
      this.#logger.warn({ guildId: session.guildId, channelId: session.channelId }, 'voice call silent while speech waits; rejoining it');
      this.#replace(pw, id, session, 'stall');
    }
  }

  /** Rejoins `session`'s call in `pw` with a new connection, ending the old one there without a word to Discord. */
  #replace(pw: PoolWorker, id: number, session: RemoteVoiceSession, cause: VoiceRecoveryCause): void {
    pw.sessions.delete(id);
    // Its leave and adapter destroy come back for an id nobody routes to any more: the bot stays in the channel.
    if (session.detach(cause) !== undefined) pw.worker.postMessage({ type: 'destroy', id, reason: 'replaced' } satisfies ToWorker);
    this.#attach(pw, session);
  }

  #start(slot: number): PoolWorker {
    const data: WorkerData = { logLevel: this.#logger.level, ca: getCACertificates('default') };
    const worker = new Worker(WORKER_URL, { workerData: data, execArgv: ['--experimental-strip-types'] });
    // The process may end while workers run (their sessions end with it).
    worker.unref();
    const logger = this.#logger.child({ voiceWorker: slot });
    const pw: PoolWorker = {
      worker,
      slot,
      sessions: new Map(),
      exited: Promise.resolve(),
      startedAt: performance.now(),
      liveness: new WorkerLiveness(this.#policy, performance.now()),
      hung: false,
      traceWaiters: [],
    };
    const { sessions } = pw;
    worker.on('message', (message: FromWorker) => {
      pw.liveness.answered();
      if (message.type === 'log') return relayLog(logger, message.line);
      if (message.type === 'pong') return this.#onPong(pw, message.packets);
      if (message.type === 'clockTrace') return pw.traceWaiters.shift()?.(message.trace);
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
    pw.exited = new Promise<void>((resolve) =>
      worker.once('exit', (code) => {
        if (this.#workers[slot] === pw) this.#workers[slot] = undefined;
        resolve();
        if (this.#closed && sessions.size === 0) return;
        this.#onLost(pw, code);
      }),
    );
    worker.on('error', (error) => logger.error({ err: error }, 'voice worker failed'));
    return pw;
  }

  /** A worker ended without being asked to: its sessions rejoin from a new one, after a pause when it keeps failing. */
  #onLost(pw: PoolWorker, code: number): void {
    const cause: VoiceRecoveryCause = pw.hung ? 'worker_hang' : 'worker_crash';
    const orphans = [...pw.sessions.values()];
    pw.sessions.clear();
    const restarts = this.#restarts[pw.slot]!;
    if (performance.now() - pw.startedAt >= this.#policy.stableAfterMs) restarts.count = 0;
    restarts.count++;
    if (this.#closed || restarts.count > this.#policy.maxRestarts) {
      this.#logger.error(
        { voiceWorker: pw.slot, code, sessions: orphans.length, restarts: restarts.count - 1 },
        'voice worker stopped; its voice sessions end',
      );
      for (const session of orphans) session.destroy('voice worker stopped');
      return;
    }
    for (const session of orphans) session.detach(cause);
    const delayMs = restarts.count === 1 ? 0 : this.#policy.restartBackoffMs * 2 ** (restarts.count - 2);
    this.#logger.error(
      { voiceWorker: pw.slot, code, cause, sessions: orphans.length, delayMs },
      'voice worker stopped; rejoining its calls from a new one',
    );
    const restart = () => {
      if (this.#closed) return;
      const live = orphans.filter((s) => s.state.status !== 'destroyed');
      if (live.length === 0) return;
      const next = (this.#workers[pw.slot] ??= this.#start(pw.slot));
      for (const session of live) this.#attach(next, session);
    };
    if (delayMs === 0) restart();
    else setTimeout(restart, delayMs).unref();
  }
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
