import type { DiscordGatewayAdapterLibraryMethods } from '@discordjs/voice';
import type { PlayableAudio, VoiceSessionPolicy, VoiceSessionState } from './session.ts';

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
  | { type: 'close' };

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
  | { type: 'log'; line: string };

export interface WorkerData {
  /** The main thread's log level. */
  logLevel: string;
  /** CA certificates the main thread trusts (TLS trust set in code is per thread). */
  ca: string[];
}
