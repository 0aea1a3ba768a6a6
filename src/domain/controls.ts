// What a server's admins control besides its settings (/spend, /dictionary editors): stored by
// src/db/guild-controls.ts and role-allowances.ts.

export interface GuildControls {
  guildId: string;
  /** Members with this role may edit the dictionary besides Manage Server; null = Manage Server only. */
  dictionaryRoleId: string | null;
  /** /narrate texts longer than this (characters) show their cost and ask to confirm. */
  narrateConfirmChars: number;
  updatedAt: number | null;
}

type GuildControlsPatch = Partial<Pick<GuildControls, 'dictionaryRoleId' | 'narrateConfirmChars'>>;

/** Must match the column defaults of 009. */
export const GUILD_CONTROLS_DEFAULTS = { dictionaryRoleId: null, narrateConfirmChars: 200 } as const satisfies Required<GuildControlsPatch>;

export interface RoleAllowance {
  roleId: string;
  monthlyLimit: number;
}
