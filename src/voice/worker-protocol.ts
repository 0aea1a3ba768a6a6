import type { DiscordGatewayAdapterLibraryMethods } from '@discordjs/voice';
import type { ClockTrace } from './packet-clock.ts';
import type { PlayableAudio, VoiceRecoveryCause, VoiceSessionPolicy, VoiceSessionState } from './session.ts';

/**
 * The messages between the main thread and a voice worker (src/voice/voice-worker.ts), one
 * session per `id`. The main thread keeps Discord's gateway: it relays the voice state and voice
 * server updates @discordjs/voice's adapter takes, and sends the op 4 payloads the worker's
 * connection asks for. What plays crosses as file paths or MP3 bytes, never as packets.
 */
type AdapterData<K extends 'onVoiceStateUpdate' | 'onVoiceServerUpdate'> = Parameters<DiscordGatewayAdapterLibraryMethods[K]>[0];

export type ToWorker =
  | { type: 'open'; id: number; guildId: string; channelId: string; policy: VoiceSessionPolicy }
  | { type: 'voiceState'; id: number; data: AdapterData<'onVoiceStateUpdate'> }
  | { type: 'voiceServer'; id: number; data: AdapterData<'onVoiceServerUpdate'> }
  /** The main gateway could not send the last payload (the library then counts the adapter unavailable). */
  | { type: 'notSent'; id: number }
  /** discord.js dropped the guild's adapter (the client or the guild went away). */
  | { type: 'adapterGone'; id: number }
  | { type: 'ready'; id: number; call: number }
  | { type: 'play'; id: number; call: number; audio: PlayableAudio }
  | { type: 'skip'; id: number; call: number }
  | { type: 'move'; id: number; channelId: string }
  | { type: 'destroy'; id: number; reason: string }
  /** Shutdown: every session left, then the worker ends. */
  | { type: 'close' }
  /** Are you there? Answered with 'pong' (a worker that stops answering is hung, and replaced). */
  | { type: 'ping'; seq: number }
  /** How has the packet clock kept time since the last ask? Answered with 'clockTrace' (a benchmark asks). */
  | { type: 'clockTrace' }
  /** Tests and benchmarks only (YOMIAGE_TEST_VOICE_FAULTS): the worker fails on purpose, as `kind` says. */
  | { type: 'fault'; kind: VoiceWorkerFault };

/**
 * A fault a test makes a voice worker have: 'crash' throws where nothing catches it (the thread
 * ends), 'hang' spins forever (the thread stops answering), 'reject' leaves a promise rejected
 * with no handler (the thread must go on), 'silence' freezes the players of its calls where they
 * are (the thread answers, but no packet goes out).
 */
export type VoiceWorkerFault = 'crash' | 'hang' | 'reject' | 'silence';
export const VOICE_WORKER_FAULTS = ['crash', 'hang', 'reject', 'silence'] as const satisfies readonly VoiceWorkerFault[];

export type FromWorker =
  | { type: 'payload'; id: number; payload: unknown }
  | { type: 'adapterDestroy'; id: number }
  | { type: 'state'; id: number; state: VoiceSessionState }
  /** The call's privacy code (DAVE), after each change. */
  | { type: 'privacy'; id: number; code: string | null }
  /** A clip's first packet left; `at` in epoch milliseconds (timeOrigin + performance.now()). */
  | { type: 'clipStarted'; id: number; at: number }
  | { type: 'result'; call: number; error?: { code: string; message: string } }
  /** A moment of src/util/moments.ts, `at` in epoch milliseconds. */
  | { type: 'moment'; name: string; data: { at: number } & Record<string, unknown> }
  /** One pino line of the worker's logger. */
  | { type: 'log'; line: string }
  /** The answer to 'ping': the voice packets each session (by id) sent so far. */
  | { type: 'pong'; seq: number; packets: Record<number, number> }
  /** The session's connection came back by itself after Discord dropped it (src/voice/session.ts, `recovered`). */
  | { type: 'recovered'; id: number; cause: VoiceRecoveryCause }
  | { type: 'clockTrace'; trace: WorkerClockTrace };

/** A voice worker's packet clock since the last ask: its traced ticks, the frames it caught up, its garbage collection. */
export interface WorkerClockTrace {
  /** The worker's thread id. */
  thread: number;
  /** The ticks in which a player stepped (src/voice/packet-clock.ts); undefined when none did. */
  trace: ClockTrace | undefined;
  /** Frames caught up, and restarts of the clock, since the last ask. */
  caughtUp: number;
  restarts: number;
  /** This thread's garbage collection pauses since the last ask (none counted before the first ask). */
  gc: { pauses: number; totalMs: number; maxMs: number; majorMs: number };
}

export interface WorkerData {
  /** The main thread's log level. */
  logLevel: string;
  /** CA certificates the main thread trusts (TLS trust set in code is per thread). */
  ca: string[];
}
