import type { AdvancedParams, ReadyAudio } from '../synthesis/synthesize.ts';

// What the speech scheduler queues (utterances: accepted messages and requests; src/discord turns
// Discord objects into UtteranceInput), who hears them (audiences) and what it delivers. Its options,
// events and defaults are options.ts.

export type UtteranceKind = 'auto' | 'say' | 'narrate';

export interface UtteranceInput {
  guildId: string;
  userId: string;
  channelId: string;
  kind: UtteranceKind;
  text: string;
  /**
   * The author's name as read before the message (names.ts), when `text` starts with it: the
   * scheduler may play it as a cached clip of its own instead of paying for it again.
   */
  prefix?: string;
  lang?: string;
  voice: string;
  speed: number;
  pitch: number;
  /**
   * The gain it is played at in voice (its author's volume, 0 to 2; absent = 1). Applied by the
   * player to the decoded audio: never part of the request or the cache key, so one cached clip
   * serves every volume. Only utterances of the same volume share a request.
   */
  volume?: number;
  /** Present for the advanced (Beta) endpoint; `narrate` utterances need it. */
  advanced?: AdvancedParams;
  /** Anything the bot needs back at delivery (message id, interaction token, ...). */
  meta?: unknown;
  /**
   * Who may hear or read it (`voiceAudience`, `textAudience`): one request carries the messages of
   * one audience only, so one channel's text never reaches another channel in a merged MP3.
   * Without it, its own text channel's (merged only with messages of that channel).
   */
  audience?: string;
}

/** The audience of the guild's voice session in `voiceChannelId`: everyone there hears it. */
export function voiceAudience(voiceChannelId: string): string {
  return `voice:${voiceChannelId}`;
}

/** The audience of text channel `channelId`: the audio is posted there as a file. */
export function textAudience(channelId: string): string {
  return `text:${channelId}`;
}

/** The voice channel of a voice session's audience (`voiceAudience`), or null for a text channel's. */
export function voiceChannelOf(audience: string): string | null {
  return audience.startsWith('voice:') ? audience.slice('voice:'.length) : null;
}

/** The audience `u` was queued for (its own text channel's when none was said). */
export function audienceOf(u: Pick<UtteranceInput, 'audience' | 'channelId'>): string {
  return u.audience ?? textAudience(u.channelId);
}

export interface Utterance extends UtteranceInput {
  id: string;
  enqueuedAt: number;
  /**
   * Its author already paid for it in a request whose audio was discarded (a message deleted or
   * edited beside it, withdraw.ts): the request that reads it again is charged to the server.
   */
  paidOnce?: true;
  /** Read again after a later withdrawal beside it: the member whose change discarded it pays, not the server again. */
  chargedTo?: string;
}

interface ReadyBase {
  /** Delivery id (the first item's id). */
  readonly id: string;
  readonly guildId: string;
  /** The original utterances merged into this audio, in message order. */
  readonly items: Utterance[];
  /**
   * With audio made of clips (`audio.parts`): where each item starts, in ms from the start of the
   * audio, in `items` order. Absent: every item starts at 0 (one merged sound).
   */
  readonly starts?: readonly number[];
}

/**
 * What the scheduler delivers, never changed once made (a cut or a withdrawal makes a new one):
 * spoken audio, or a failure delivered in its place in the order so the author can be told.
 * Audio made of clips says which utterances each clip reads (`carries`, parallel to `audio.parts`;
 * absent: one sound reading every item), so a staleness cut drops whole clips.
 */
export type ReadyUtterance =
  | (ReadyBase & { readonly audio: ReadyAudio; readonly carries?: readonly (readonly Utterance[])[]; readonly error?: undefined })
  | (ReadyBase & { readonly audio?: undefined; readonly carries?: undefined; readonly error: Error & { code?: string } });

/** Plays or posts one ready utterance; must settle when done (and soon after `signal` aborts). */
export type Sink = (item: ReadyUtterance, signal: AbortSignal) => Promise<void>;
