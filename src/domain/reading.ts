import type { Patch } from './patch.ts';

// What auto-read reads and how (/reading, /autoread, the dashboard): stored by
// src/db/reading-settings.ts, reading-lists.ts and auto-read-channels.ts.

/** Messages from bots and webhooks: none, only the allow-list, or all. */
export type BotReading = 'off' | 'listed' | 'all';

export interface ReadingSettings {
  guildId: string;
  bots: BotReading;
  /** Forwarded messages are read (their snapshot, after a lead-in). */
  forwards: boolean;
  /** Unicode emoji are read by name instead of dropped. */
  emoji: boolean;
  /** Only members with this role are read; null = everyone. */
  requiredRoleId: string | null;
  /** Only members in the bot's voice channel are read. */
  requireInVoice: boolean;
  /** Spoken notice when stale auto-read messages were dropped. */
  staleNotice: boolean;
  /** Messages in threads (and forum posts) of a read channel are read. */
  threads: boolean;
  /**
   * The freshness horizon (seconds): when a voice channel is busier than it can be read, what could
   * not be heard within this long of being written is dropped with the spoken summary.
   */
  freshSeconds: number;
  /** Speech may speed up (to at most 1.5x) while a voice channel is behind. */
  speedUp: boolean;
  updatedAt: number | null;
}

export type ReadingSettingsPatch = Patch<ReadingSettings>;

/** The range /reading freshness accepts (and the column's CHECK). */
export const FRESH_SECONDS = { min: 5, max: 600 } as const;

/** Must match the column defaults of migrations 008, 011 and 016 (test/db/reading-controls.test.ts). */
export const READING_DEFAULTS = {
  bots: 'off',
  forwards: true,
  emoji: false,
  requiredRoleId: null,
  requireInVoice: false,
  staleNotice: true,
  threads: true,
  freshSeconds: 20,
  speedUp: true,
} as const satisfies Required<ReadingSettingsPatch>;

/** 'bot': a bot user or webhook id that is read; 'never_role': a role whose members are not. */
export type ReadingListKind = 'bot' | 'never_role';

/** Longest list per guild and kind, so one server cannot grow the per-message lookup without bound. */
export const READING_LIST_MAX = 50;

/** One auto-read channel of a guild and its option (migrations/001, 005). */
export interface AutoReadChannel {
  channelId: string;
  /** Also post MP3s while the bot is in no voice channel (costs characters). */
  postAudio: boolean;
}
