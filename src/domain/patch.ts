/** The fields of a guild's row to change; a field absent or undefined keeps its value. */
export type Patch<T> = { [K in Exclude<keyof T, 'guildId' | 'updatedAt'>]?: T[K] | undefined };
