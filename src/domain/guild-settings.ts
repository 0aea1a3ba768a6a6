import type { Patch } from './patch.ts';

// A server's settings (/config, the dashboard): stored by src/db/guild-settings.ts.

export interface GuildSettings {
  guildId: string;
  /** Standard voice id. */
  voice: string;
  speed: number;
  pitch: number;
  readAuthorNames: boolean;
  announceJoinLeave: boolean;
  /** Longest message read aloud at the member's speed, in characters. */
  maxLength: number;
  /**
   * A longer message is read up to this many times faster (早口, src/speech/text/fast-reading.ts),
   * and cut only past this many times `maxLength`; 1 is off (cut at `maxLength`).
   */
  fastReadingCeiling: number;
  /** Messages starting with this are not read. */
  ignorePrefix: string;
  /** Per-user monthly characters in this guild; null = the bot's default. */
  userMonthlyLimit: number | null;
  /** Whole-guild monthly characters; null = the bot's default. */
  guildMonthlyLimit: number | null;
  autoJoinChannelId: string | null;
  /** How many text channels one call may read (/config text-channels; src/domain/read-channels.ts). */
  textChannelsPerCall: number;
  /** Locale of the bot's own read-aloud words (announcements). */
  locale: string;
  /** null while the guild has never changed anything (no row). */
  updatedAt: number | null;
}

export type GuildSettingsPatch = Patch<GuildSettings>;

/** Must match the column defaults of 001_init.sql (test/db/repositories.test.ts checks they do). */
export const GUILD_SETTINGS_DEFAULTS = {
  voice: 'ja-JP-Wavenet-B',
  speed: 1.0,
  pitch: 0,
  readAuthorNames: true,
  announceJoinLeave: false,
  maxLength: 100,
  fastReadingCeiling: 2.0,
  ignorePrefix: ';',
  userMonthlyLimit: null,
  guildMonthlyLimit: null,
  autoJoinChannelId: null,
  textChannelsPerCall: 3,
  locale: 'ja',
} as const satisfies Required<GuildSettingsPatch>;
