import type { GuildSettings } from './guild-settings.ts';

// A member's own settings in one server (/voice, /config mute, the dashboard): stored by
// src/db/user-settings.ts.

export interface UserSettings {
  guildId: string;
  userId: string;
  /** null = the guild's voice. */
  voice: string | null;
  speed: number | null;
  pitch: number | null;
  /** Name read aloud instead of the display name; null = the display name. */
  nickname: string | null;
  /** Muted members' messages are not read aloud. */
  muted: boolean;
  updatedAt: number | null;
}

/** The fields to change; a field absent or undefined keeps its value. */
export type UserSettingsPatch = { [K in 'voice' | 'speed' | 'pitch' | 'nickname' | 'muted']?: UserSettings[K] | undefined };

/** What a user's message is spoken with: their own choice where set, else the guild's. */
export function effectiveVoice(guild: GuildSettings, user: UserSettings): { voice: string; speed: number; pitch: number } {
  return { voice: user.voice ?? guild.voice, speed: user.speed ?? guild.speed, pitch: user.pitch ?? guild.pitch };
}
