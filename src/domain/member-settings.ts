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
  /** Loudness of their speech in voice, chosen by the member (0 to 2); null = 1. */
  volume: number | null;
  /** Loudness an admin chose for them (/config volume); wins over the member's own. null = none. */
  adminVolume: number | null;
  updatedAt: number | null;
}

/** The fields to change; a field absent or undefined keeps its value. */
export type UserSettingsPatch = {
  [K in 'voice' | 'speed' | 'pitch' | 'nickname' | 'muted' | 'volume' | 'adminVolume']?: UserSettings[K] | undefined;
};

/** The volumes a member's speech may be played at: silent to twice as loud (as Aivis-chan offers). */
export const VOLUME_RANGE = { min: 0, max: 2 } as const;

/**
 * What a user's message is spoken with: their own choice where set, else their voice of the
 * server's pool (`poolVoice`, src/domain/voice-pool.ts) when it has one, else the guild's.
 */
export function effectiveVoice(
  guild: GuildSettings,
  user: UserSettings,
  poolVoice?: string,
): { voice: string; speed: number; pitch: number } {
  return { voice: user.voice ?? poolVoice ?? guild.voice, speed: user.speed ?? guild.speed, pitch: user.pitch ?? guild.pitch };
}

/** The gain a member's speech is played at in voice: an admin's choice, else their own, else 1. */
export function effectiveVolume(user: Pick<UserSettings, 'volume' | 'adminVolume'>): number {
  return user.adminVolume ?? user.volume ?? 1;
}
