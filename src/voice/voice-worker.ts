// A voice worker: the voice connections of a group of guilds (voice gateway, UDP, DAVE, the
// players and their packet clock) on a thread of their own, so nothing the main thread does
// (gateway events, interactions, SQLite, its garbage) delays a packet. Started by
// src/voice/worker-pool.ts; the messages are src/voice/worker-protocol.ts.
import { subscribe } from 'node:diagnostics_channel';
import { constants as perfConstants, PerformanceObserver } from 'node:perf_hooks';
import { getCACertificates, setDefaultCACertificates } from 'node:tls';
import { parentPort, threadId, workerData } from 'node:worker_threads';
import {
  VoiceConnectionDisconnectReason,
  VoiceConnectionStatus,
  type DiscordGatewayAdapterCreator,
  type DiscordGatewayAdapterLibraryMethods,
} from '@discordjs/voice';
import { createLogger } from '../util/log.ts';
import { moments } from '../util/moments.ts';
import { warmMp3Decoder } from '../audio/mp3-opus.ts';
import { PacketClock } from './packet-clock.ts';
import { GuildVoiceSession, type PlayableAudio } from './session.ts';
import { VoiceSessionError } from './errors.ts';
import type { FromWorker, ToWorker, VoiceWorkerFault, WorkerClockTrace, WorkerData } from './worker-protocol.ts';

const port = parentPort!;
/** How long a closing worker lets its connections' close frames go out. */
const CLOSE_DELAY_MS = 200;
const data = workerData as WorkerData;
const post = (message: FromWorker) => port.postMessage(message);
const epoch = (at: number) => performance.timeOrigin + at;

// Certificates the main thread was told to trust in code (tests: the local voice server's).
const trusted = new Set(getCACertificates('default').map((c) => c.trim()));
const extra = data.ca.filter((c) => !trusted.has(c.trim()));
if (extra.length > 0) setDefaultCACertificates([...getCACertificates('default'), ...extra]);

const logger = createLogger({ level: data.logLevel, destination: { write: (line: string) => post({ type: 'log', line }) } });
const clock = new PacketClock();
void warmMp3Decoder();

// One call's stray rejection (a library's promise nobody awaited) would end the thread, and with it
// every call it carries: it is logged, and the calls go on. An uncaught exception still ends the
// thread (its state is unknown); the pool then rejoins its calls from a new one.
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection in a voice worker; its calls go on'));

// What the packet clock measured since the last 'clockTrace' ask (a benchmark asks through the
// pool): its ticks (how late, how long sending and preparing took, per packet), the frames it
// caught up and this thread's garbage collection pauses, watched from the first ask on.
const gc = { pauses: 0, totalMs: 0, maxMs: 0, majorMs: 0 };
let gcWatched = false;
let lastStats = { ...clock.stats };
function clockTrace(): WorkerClockTrace {
  if (!gcWatched) {
    gcWatched = true;
    new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) {
        gc.pauses++;
        gc.totalMs += entry.duration;
        gc.maxMs = Math.max(gc.maxMs, entry.duration);
        if ((entry as { detail?: { kind?: number } }).detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR)
          gc.majorMs += entry.duration;
      }
    }).observe({ entryTypes: ['gc'] });
  }
  const trace = clock.trace();
  clock.resetTrace();
  const answer: WorkerClockTrace = {
    thread: threadId,
    trace,
    caughtUp: clock.stats.caughtUp - lastStats.caughtUp,
    restarts: clock.stats.restarts - lastStats.restarts,
    gc: { ...gc },
  };
  lastStats = { ...clock.stats };
  gc.pauses = gc.totalMs = gc.maxMs = gc.majorMs = 0;
  return answer;
}

for (const [name, channel] of Object.entries(moments)) {
  if (name === 'downloaded') continue; // published on the main thread
  subscribe(channel.name, (message) => {
    const m = message as { at: number } & Record<string, unknown>;
    post({ type: 'moment', name, data: { ...m, at: epoch(m.at) } });
  });
}

interface Open {
  session: GuildVoiceSession;
  methods: DiscordGatewayAdapterLibraryMethods | undefined;
  plays: Map<number, AbortController>;
}
const sessions = new Map<number, Open>();

function open(message: Extract<ToWorker, { type: 'open' }>): void {
  const { id } = message;
  const entry: Open = { session: undefined as unknown as GuildVoiceSession, methods: undefined, plays: new Map() };
  // The adapter's other half is on the main thread: payloads go there, updates come from there.
  const adapterCreator: DiscordGatewayAdapterCreator = (methods) => {
    entry.methods = methods;
    return {
      sendPayload: (payload) => {
        post({ type: 'payload', id, payload });
        return true;
      },
      destroy: () => post({ type: 'adapterDestroy', id }),
    };
  };
  const session = new GuildVoiceSession({
    ...message.policy,
    guildId: message.guildId,
    channelId: message.channelId,
    textChannelId: null,
    adapterCreator,
    logger,
    clock,
  });
  entry.session = session;
  sessions.set(id, entry);
  let privacy: string | null = null;
  const reportPrivacy = () => {
    const code = session.connection.voicePrivacyCode ?? null;
    if (code === privacy) return;
    privacy = code;
    post({ type: 'privacy', id, code });
  };
  session.connection.on('transitioned', reportPrivacy);
  session.connection.on('stateChange', reportPrivacy);
  session.on('stateChange', (_old, state) => {
    post({ type: 'state', id, state });
    if (state.status === 'destroyed') sessions.delete(id);
  });
  session.on('clipStarted', () => post({ type: 'clipStarted', id, at: epoch(performance.now()) }));
  session.on('recovered', ({ cause }) => post({ type: 'recovered', id, cause }));
}

/** Tests only (YOMIAGE_TEST_VOICE_FAULTS, via the pool): fails as a real fault would, outside any handler. */
function fault(kind: VoiceWorkerFault): void {
  logger.warn({ kind }, 'voice worker fault injected (tests only)');
  if (kind === 'silence') {
    // Neither this thread's packet clock nor the library's own loop steps these players again.
    for (const { session } of sessions.values()) {
      clock.remove(session.player);
      Object.assign(session.player, { checkPlayable: () => false });
    }
    return;
  }
  setImmediate(() => {
    if (kind === 'crash') throw new VoiceSessionError('fault_injected', { guildId: '' });
    if (kind === 'reject') void Promise.reject(new VoiceSessionError('fault_injected', { guildId: '' }));
    if (kind === 'hang')
      while (true) {
        // hung on purpose: the thread never answers again
      }
  });
}

/** Runs `work` for call `call`, answering with its outcome (an error by its code). */
function answer(call: number, work: Promise<void>): void {
  work.then(
    () => post({ type: 'result', call }),
    (error: unknown) => {
      const e = error as { code?: unknown; message?: unknown };
      post({ type: 'result', call, error: { code: typeof e.code === 'string' ? e.code : 'playback_failed', message: String(e.message) } });
    },
  );
}

/** Structured cloning turns Buffers into Uint8Arrays: the MP3 bytes become a Buffer again (no copy). */
function revive(audio: PlayableAudio): PlayableAudio {
  const mp3 = audio.mp3 ? Buffer.from(audio.mp3.buffer, audio.mp3.byteOffset, audio.mp3.byteLength) : undefined;
  return { ...audio, ...(mp3 ? { mp3 } : {}), ...(audio.parts ? { parts: audio.parts.map(revive) } : {}) };
}

port.on('message', (message: ToWorker) => {
  if (message.type === 'ping') {
    const packets: Record<number, number> = {};
    for (const [id, entry] of sessions) packets[id] = entry.session.packetsSent;
    return post({ type: 'pong', seq: message.seq, packets });
  }
  if (message.type === 'clockTrace') return post({ type: 'clockTrace', trace: clockTrace() });
  if (message.type === 'fault') return fault(message.kind);
  if (message.type === 'close') {
    for (const { session } of [...sessions.values()]) session.destroy('shutdown');
    // A moment for the voice websockets' close frames, then this thread ends (not the process).
    setTimeout(() => process.exit(0), CLOSE_DELAY_MS);
    return;
  }
  if (message.type === 'open') return open(message);
  const entry = sessions.get(message.id);
  if (!entry) {
    // Closed meanwhile: a call still gets its answer.
    if (message.type === 'ready' || message.type === 'play')
      post({ type: 'result', call: message.call, error: { code: 'destroyed', message: 'the voice session was closed' } });
    return;
  }
  const { session } = entry;
  switch (message.type) {
    case 'voiceState':
      return entry.methods?.onVoiceStateUpdate(message.data);
    case 'voiceServer':
      return entry.methods?.onVoiceServerUpdate(message.data);
    case 'adapterGone':
      return entry.methods?.destroy();
    case 'notSent': {
      // What the library does itself when sendPayload answers false: the adapter is unavailable.
      const state = session.connection.state;
      if (state.status === VoiceConnectionStatus.Signalling)
        session.connection.state = {
          ...state,
          status: VoiceConnectionStatus.Disconnected,
          reason: VoiceConnectionDisconnectReason.AdapterUnavailable,
        };
      return;
    }
    case 'ready':
      return answer(message.call, session.ready());
    case 'play': {
      const skip = new AbortController();
      entry.plays.set(message.call, skip);
      return answer(
        message.call,
        session.play(revive(message.audio), skip.signal).finally(() => entry.plays.delete(message.call)),
      );
    }
    case 'skip':
      return entry.plays.get(message.call)?.abort();
    case 'move':
      return session.move(message.channelId);
    case 'destroy':
      return session.destroy(message.reason);
  }
});
