import { createHash } from 'node:crypto';
import type { Db } from './database.ts';
import { writeTx } from './write.ts';
import { systemClock, type Clock } from '../util/clock.ts';

// Typed access to the tables of migrations/001_init.sql. Every statement is prepared once in a
// constructor; every table's rows are mapped snake_case -> camelCase in exactly one `from*Row`.
// Writes are asynchronous (src/db/write.ts): a lock held by another process never blocks this
// thread, which also drives the audio; reads are synchronous (WAL readers never wait).

export type Endpoint = 'standard' | 'advanced';

// ---------------------------------------------------------------------------------------------
// guild_settings

export interface GuildSettings {
  guildId: string;
  /** Standard voice id. */
  voice: string;
  speed: number;
  pitch: number;
  readAuthorNames: boolean;
  announceJoinLeave: boolean;
  /** Longest message read aloud, in characters. */
  maxLength: number;
  /** Messages starting with this are not read. */
  ignorePrefix: string;
  /** Per-user monthly characters in this guild; null = the bot's default. */
  userMonthlyLimit: number | null;
  /** Whole-guild monthly characters; null = the bot's default. */
  guildMonthlyLimit: number | null;
  autoJoinChannelId: string | null;
  /** Locale of the bot's own read-aloud words (announcements). */
  locale: string;
  /** null while the guild has never changed anything (no row). */
  updatedAt: number | null;
}

export type GuildSettingsPatch = Partial<Omit<GuildSettings, 'guildId' | 'updatedAt'>>;

/** Must match the column defaults of 001_init.sql (test/db/repositories.test.ts checks they do). */
export const GUILD_SETTINGS_DEFAULTS = {
  voice: 'ja-JP-Wavenet-B',
  speed: 1.0,
  pitch: 0,
  readAuthorNames: true,
  announceJoinLeave: false,
  maxLength: 100,
  ignorePrefix: ';',
  userMonthlyLimit: null,
  guildMonthlyLimit: null,
  autoJoinChannelId: null,
  locale: 'ja',
} as const satisfies Required<GuildSettingsPatch>;

interface GuildSettingsRow {
  guild_id: string;
  voice: string;
  speed: number;
  pitch: number;
  read_author_names: number;
  announce_join_leave: number;
  max_length: number;
  ignore_prefix: string;
  user_monthly_limit: number | null;
  guild_monthly_limit: number | null;
  auto_join_channel_id: string | null;
  locale: string;
  updated_at: number;
}

function fromGuildSettingsRow(row: GuildSettingsRow): GuildSettings {
  return {
    guildId: row.guild_id,
    voice: row.voice,
    speed: row.speed,
    pitch: row.pitch,
    readAuthorNames: row.read_author_names === 1,
    announceJoinLeave: row.announce_join_leave === 1,
    maxLength: row.max_length,
    ignorePrefix: row.ignore_prefix,
    userMonthlyLimit: row.user_monthly_limit,
    guildMonthlyLimit: row.guild_monthly_limit,
    autoJoinChannelId: row.auto_join_channel_id,
    locale: row.locale,
    updatedAt: row.updated_at,
  };
}

function toGuildSettingsRow(s: GuildSettings & { updatedAt: number }): GuildSettingsRow {
  return {
    guild_id: s.guildId,
    voice: s.voice,
    speed: s.speed,
    pitch: s.pitch,
    read_author_names: s.readAuthorNames ? 1 : 0,
    announce_join_leave: s.announceJoinLeave ? 1 : 0,
    max_length: s.maxLength,
    ignore_prefix: s.ignorePrefix,
    user_monthly_limit: s.userMonthlyLimit,
    guild_monthly_limit: s.guildMonthlyLimit,
    auto_join_channel_id: s.autoJoinChannelId,
    locale: s.locale,
    updated_at: s.updatedAt,
  };
}

/** Drops keys whose value is `undefined`, so `{voice: undefined}` does not erase a setting. */
function definedOnly<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export class GuildSettingsRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #select;
  readonly #upsert;
  readonly #delete;

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#select = db.prepare<[string], GuildSettingsRow>('SELECT * FROM guild_settings WHERE guild_id = ?');
    this.#upsert = db.prepare<[GuildSettingsRow]>(`
      INSERT INTO guild_settings (guild_id, voice, speed, pitch, read_author_names, announce_join_leave,
        max_length, ignore_prefix, user_monthly_limit, guild_monthly_limit, auto_join_channel_id, locale, updated_at)
      VALUES (@guild_id, @voice, @speed, @pitch, @read_author_names, @announce_join_leave,
        @max_length, @ignore_prefix, @user_monthly_limit, @guild_monthly_limit, @auto_join_channel_id, @locale, @updated_at)
      ON CONFLICT (guild_id) DO UPDATE SET voice = excluded.voice, speed = excluded.speed, pitch = excluded.pitch,
        read_author_names = excluded.read_author_names, announce_join_leave = excluded.announce_join_leave,
        max_length = excluded.max_length, ignore_prefix = excluded.ignore_prefix,
        user_monthly_limit = excluded.user_monthly_limit, guild_monthly_limit = excluded.guild_monthly_limit,
        auto_join_channel_id = excluded.auto_join_channel_id, locale = excluded.locale, updated_at = excluded.updated_at`);
    this.#delete = db.prepare<[string]>('DELETE FROM guild_settings WHERE guild_id = ?');
  }

  /** The guild's settings, with defaults for a guild that never changed anything. */
  get(guildId: string): GuildSettings {
    const row = this.#select.get(guildId);
    return row ? fromGuildSettingsRow(row) : { guildId, ...GUILD_SETTINGS_DEFAULTS, updatedAt: null };
  }

  /** Changes only the given fields (an `undefined` value leaves the field as it is); returns the result. */
  update(guildId: string, patch: GuildSettingsPatch): Promise<GuildSettings> {
    // Read-modify-write in one IMMEDIATE transaction so two processes' partial updates do not clobber.
    return writeTx(this.#db, () => {
      const next = { ...this.get(guildId), ...definedOnly(patch), guildId, updatedAt: this.#clock.now() };
      this.#upsert.run(toGuildSettingsRow(next));
      return next;
    });
  }

  /** Back to all defaults (e.g. the bot left the guild). */
  reset(guildId: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#delete.run(guildId).changes > 0);
  }
}

// ---------------------------------------------------------------------------------------------
// auto_read_channels

export class AutoReadRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #insert;
  readonly #delete;
  readonly #list;
  readonly #exists;
  readonly #deleteGuild;
  readonly #postAudio;
  readonly #entries;

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#insert = db.prepare<[string, string, number, number]>(
      'INSERT INTO auto_read_channels (guild_id, channel_id, created_at, post_audio) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET post_audio = excluded.post_audio',
    );
    this.#postAudio = db.prepare<[string, string], number>('SELECT post_audio FROM auto_read_channels WHERE guild_id = ? AND channel_id = ?').pluck();
    this.#entries = db.prepare<[string], { channel_id: string; post_audio: number }>(
      'SELECT channel_id, post_audio FROM auto_read_channels WHERE guild_id = ? ORDER BY created_at, channel_id',
    );
    this.#delete = db.prepare<[string, string]>('DELETE FROM auto_read_channels WHERE guild_id = ? AND channel_id = ?');
    this.#list = db
      .prepare<[string], string>('SELECT channel_id FROM auto_read_channels WHERE guild_id = ? ORDER BY created_at, channel_id')
      .pluck();
    this.#exists = db.prepare<[string, string], number>('SELECT 1 FROM auto_read_channels WHERE guild_id = ? AND channel_id = ?').pluck();
    this.#deleteGuild = db.prepare<[string]>('DELETE FROM auto_read_channels WHERE guild_id = ?');
  }

  /**
   * Reads the channel aloud while the bot is in voice; with `postAudio`, also posts MP3s while it is
   * not (migrations/005). Adding a listed channel again updates that option; resolves false then.
   */
  add(guildId: string, channelId: string, options: { postAudio?: boolean } = {}): Promise<boolean> {
    // One IMMEDIATE transaction: whether it existed decides the answer.
    return writeTx(this.#db, () => {
      const existed = this.isAutoRead(guildId, channelId);
      this.#insert.run(guildId, channelId, this.#clock.now(), options.postAudio ? 1 : 0);
      return !existed;
    });
  }

  /** Whether the channel is auto-read with MP3 posts while the bot is in no voice channel. */
  postsAudio(guildId: string, channelId: string): boolean {
    return this.#postAudio.get(guildId, channelId) === 1;
  }

  /** Channels with their option, oldest first. */
  entries(guildId: string): { channelId: string; postAudio: boolean }[] {
    return this.#entries.all(guildId).map((r) => ({ channelId: r.channel_id, postAudio: r.post_audio === 1 }));
  }

  /** Resolves false when the channel was not auto-read. */
  remove(guildId: string, channelId: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#delete.run(guildId, channelId).changes > 0);
  }

  /** Channel ids, oldest first. */
  list(guildId: string): string[] {
    return this.#list.all(guildId);
  }

  /** Whether messages in this channel are read aloud automatically. */
  isAutoRead(guildId: string, channelId: string): boolean {
    return this.#exists.get(guildId, channelId) !== undefined;
  }

  /** Forgets every auto-read channel of the guild; resolves with how many there were. */
  clear(guildId: string): Promise<number> {
    return writeTx(this.#db, () => this.#deleteGuild.run(guildId).changes);
  }
}

// ---------------------------------------------------------------------------------------------
// user_settings

export interface UserSettings {
  guildId: string;
  userId: string;
  /** null = the guild's voice. */
  voice: string | null;
  speed: number | null;
  pitch: number | null;
  /** Name read aloud instead of the display name; null = the display name. */
  nickname: string | null;
  muted: boolean;
  updatedAt: number | null;
}

export type UserVoicePatch = Partial<Pick<UserSettings, 'voice' | 'speed' | 'pitch'>>;

interface UserSettingsRow {
  guild_id: string;
  user_id: string;
  voice: string | null;
  speed: number | null;
  pitch: number | null;
  nickname: string | null;
  muted: number;
  updated_at: number;
}

function fromUserSettingsRow(row: UserSettingsRow): UserSettings {
  return {
    guildId: row.guild_id,
    userId: row.user_id,
    voice: row.voice,
    speed: row.speed,
    pitch: row.pitch,
    nickname: row.nickname,
    muted: row.muted === 1,
    updatedAt: row.updated_at,
  };
}

function toUserSettingsRow(s: UserSettings & { updatedAt: number }): UserSettingsRow {
  return {
    guild_id: s.guildId,
    user_id: s.userId,
    voice: s.voice,
    speed: s.speed,
    pitch: s.pitch,
    nickname: s.nickname,
    muted: s.muted ? 1 : 0,
    updated_at: s.updatedAt,
  };
}

/** What a user's message is spoken with: their own choice where set, else the guild's. */
export function effectiveVoice(guild: GuildSettings, user: UserSettings): { voice: string; speed: number; pitch: number } {
  return { voice: user.voice ?? guild.voice, speed: user.speed ?? guild.speed, pitch: user.pitch ?? guild.pitch };
}

export class UserSettingsRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #select;
  readonly #upsert;
  readonly #delete;
  readonly #listMuted;

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#select = db.prepare<[string, string], UserSettingsRow>('SELECT * FROM user_settings WHERE guild_id = ? AND user_id = ?');
    this.#upsert = db.prepare<[UserSettingsRow]>(`
      INSERT INTO user_settings (guild_id, user_id, voice, speed, pitch, nickname, muted, updated_at)
      VALUES (@guild_id, @user_id, @voice, @speed, @pitch, @nickname, @muted, @updated_at)
      ON CONFLICT (guild_id, user_id) DO UPDATE SET voice = excluded.voice, speed = excluded.speed,
        pitch = excluded.pitch, nickname = excluded.nickname, muted = excluded.muted, updated_at = excluded.updated_at`);
    this.#delete = db.prepare<[string, string]>('DELETE FROM user_settings WHERE guild_id = ? AND user_id = ?');
    this.#listMuted = db
      .prepare<[string], string>('SELECT user_id FROM user_settings WHERE guild_id = ? AND muted = 1 ORDER BY user_id')
      .pluck();
  }

  /** The user's settings in the guild; all null / not muted when never set. */
  get(guildId: string, userId: string): UserSettings {
    const row = this.#select.get(guildId, userId);
    return row
      ? fromUserSettingsRow(row)
      : { guildId, userId, voice: null, speed: null, pitch: null, nickname: null, muted: false, updatedAt: null };
  }

  /** Sets voice/speed/pitch (null = back to the guild default; undefined = unchanged). */
  set(guildId: string, userId: string, patch: UserVoicePatch): Promise<UserSettings> {
    return this.#change(guildId, userId, definedOnly(patch));
  }

  /** Forgets everything about the user in this guild (voice, nickname, mute). */
  reset(guildId: string, userId: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#delete.run(guildId, userId).changes > 0);
  }

  /** Muted users' messages are not read aloud. */
  setMuted(guildId: string, userId: string, muted: boolean): Promise<UserSettings> {
    return this.#change(guildId, userId, { muted });
  }

  isMuted(guildId: string, userId: string): boolean {
    return this.get(guildId, userId).muted;
  }

  listMuted(guildId: string): string[] {
    return this.#listMuted.all(guildId);
  }

  /** The name read aloud for the user; null = their display name. */
  setNickname(guildId: string, userId: string, nickname: string | null): Promise<UserSettings> {
    return this.#change(guildId, userId, { nickname });
  }

  #change(guildId: string, userId: string, patch: Partial<UserSettings>): Promise<UserSettings> {
    return writeTx(this.#db, () => {
      const next = { ...this.get(guildId, userId), ...patch, guildId, userId, updatedAt: this.#clock.now() };
      this.#upsert.run(toUserSettingsRow(next));
      return next;
    });
  }
}

// ---------------------------------------------------------------------------------------------
// dictionary_entries

export interface DictionaryEntry {
  guildId: string;
  word: string;
  reading: string;
  createdBy: string;
  createdAt: number;
}

interface DictionaryRow {
  guild_id: string;
  word: string;
  reading: string;
  created_by: string;
  created_at: number;
}

function fromDictionaryRow(row: DictionaryRow): DictionaryEntry {
  return { guildId: row.guild_id, word: row.word, reading: row.reading, createdBy: row.created_by, createdAt: row.created_at };
}

export class DictionaryRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #exists;
  readonly #upsert;
  readonly #delete;
  readonly #list;
  readonly #count;
  readonly #version;
  readonly #bump;
  /**
   * The last list read per guild with its version: the same array is returned until the guild's
   * dictionary changes (in any process), so the compiled trie cached per array (dictionary.ts)
   * is built once per version instead of once per message.
   */
  readonly #lists = new Map<string, { version: number; entries: DictionaryEntry[] }>();

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#exists = db.prepare<[string, string], number>('SELECT 1 FROM dictionary_entries WHERE guild_id = ? AND word = ?').pluck();
    this.#upsert = db.prepare<[DictionaryRow]>(`
      INSERT INTO dictionary_entries (guild_id, word, reading, created_by, created_at)
      VALUES (@guild_id, @word, @reading, @created_by, @created_at)
      ON CONFLICT (guild_id, word) DO UPDATE SET reading = excluded.reading, created_by = excluded.created_by,
        created_at = excluded.created_at`);
    this.#delete = db.prepare<[string, string]>('DELETE FROM dictionary_entries WHERE guild_id = ? AND word = ?');
    // Longest word first, so "GitHub Actions" is replaced before "GitHub" (SQLite length() counts characters).
    this.#list = db.prepare<[string], DictionaryRow>(
      'SELECT * FROM dictionary_entries WHERE guild_id = ? ORDER BY length(word) DESC, word',
    );
    this.#count = db.prepare<[string], number>('SELECT COUNT(*) FROM dictionary_entries WHERE guild_id = ?').pluck();
    this.#version = db.prepare<[string], number>('SELECT version FROM dictionary_versions WHERE guild_id = ?').pluck();
    this.#bump = db.prepare<[string]>(
      'INSERT INTO dictionary_versions (guild_id, version) VALUES (?, 1) ON CONFLICT (guild_id) DO UPDATE SET version = version + 1',
    );
  }

  /** Adds the word, or replaces its reading; says which. */
  add(guildId: string, word: string, reading: string, createdBy: string): Promise<'added' | 'updated'> {
    return writeTx(this.#db, () => {
      const existed = this.#exists.get(guildId, word) !== undefined;
      this.#upsert.run({ guild_id: guildId, word, reading, created_by: createdBy, created_at: this.#clock.now() });
      this.#bump.run(guildId);
      return existed ? 'updated' : 'added';
    });
  }

  /** Resolves false when the word was not in the dictionary. */
  remove(guildId: string, word: string): Promise<boolean> {
    return writeTx(this.#db, () => {
      const removed = this.#delete.run(guildId, word).changes > 0;
      if (removed) this.#bump.run(guildId);
      return removed;
    });
  }

  /**
   * Every entry of the guild, longest word first (the order to apply them in). The same array
   * while the dictionary is unchanged: treat it as immutable.
   */
  list(guildId: string): readonly DictionaryEntry[] {
    const version = this.#version.get(guildId) ?? 0;
    const cached = this.#lists.get(guildId);
    if (cached?.version === version) return cached.entries;
    const entries = this.#list.all(guildId).map(fromDictionaryRow);
    Object.freeze(entries);
    this.#lists.set(guildId, { version, entries });
    return entries;
  }

  count(guildId: string): number {
    return this.#count.get(guildId) ?? 0;
  }
}

// ---------------------------------------------------------------------------------------------
// generation_history

export interface HistoryEntry {
  id: number;
  /** The service's generation history id (spec: `pk`); null when the service gave none. */
  pk: number | null;
  endpoint: Endpoint;
  url: string | null;
  voice: string;
  characters: number;
  /** sha256 hex of the text; the text itself is never stored. */
  textHash: string;
  guildId: string;
  userId: string;
  createdAt: number;
}

export interface NewHistoryEntry {
  pk: number | null;
  endpoint: Endpoint;
  url: string | null;
  voice: string;
  characters: number;
  /** Hashed here; never stored. */
  text: string;
  guildId: string;
  userId: string;
}

interface HistoryRow {
  id: number;
  pk: number | null;
  endpoint: Endpoint;
  url: string | null;
  voice: string;
  characters: number;
  text_hash: string;
  guild_id: string;
  user_id: string;
  created_at: number;
}

function fromHistoryRow(row: HistoryRow): HistoryEntry {
  return {
    id: row.id,
    pk: row.pk,
    endpoint: row.endpoint,
    url: row.url,
    voice: row.voice,
    characters: row.characters,
    textHash: row.text_hash,
    guildId: row.guild_id,
    userId: row.user_id,
    createdAt: row.created_at,
  };
}

/** sha256 hex of a text, as stored in the history (privacy: the text itself is not kept). */
export function hashText(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export class HistoryRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #insert;
  readonly #recent;

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#insert = db.prepare<[Omit<HistoryRow, 'id'>]>(`
      INSERT INTO generation_history (pk, endpoint, url, voice, characters, text_hash, guild_id, user_id, created_at)
      VALUES (@pk, @endpoint, @url, @voice, @characters, @text_hash, @guild_id, @user_id, @created_at)`);
    this.#recent = db.prepare<[string, number], HistoryRow>(
      'SELECT * FROM generation_history WHERE guild_id = ? ORDER BY created_at DESC, id DESC LIMIT ?',
    );
  }

  /** Records one generated audio. */
  async record(entry: NewHistoryEntry): Promise<HistoryEntry> {
    const row = {
      pk: entry.pk,
      endpoint: entry.endpoint,
      url: entry.url,
      voice: entry.voice,
      characters: entry.characters,
      text_hash: hashText(entry.text),
      guild_id: entry.guildId,
      user_id: entry.userId,
      created_at: this.#clock.now(),
    };
    const id = await writeTx(this.#db, () => Number(this.#insert.run(row).lastInsertRowid));
    return fromHistoryRow({ id, ...row });
  }

  /** The guild's latest generations, newest first. */
  recent(guildId: string, limit = 20): HistoryEntry[] {
    return this.#recent.all(guildId, limit).map(fromHistoryRow);
  }
}

// ---------------------------------------------------------------------------------------------
// advanced_jobs

export type JobState = 'pending' | 'running' | 'succeeded' | 'failed' | 'delivered';

/** The advanced request as stored: the service's fields plus the text, which is cleared once the job ends. */
export interface StoredJobRequest {
  text: string | null;
  voice?: string;
  tone?: string;
  model?: string;
  seed?: number;
  speed?: number;
  pitch?: number;
  temperature?: number;
}

export interface StoredJob {
  jobId: string;
  /** Secret (spec: X-Job-Token): never log it. */
  jobToken: string;
  guildId: string;
  userId: string;
  channelId: string;
  /** Where to deliver the result; opaque JSON owned by the caller. */
  delivery: unknown;
  request: StoredJobRequest;
  state: JobState;
  attempt: number;
  createdAt: number;
  updatedAt: number;
  url: string | null;
  pk: number | null;
  seed: number | null;
  errorCode: string | null;
  /** The process following the job, and until when (issue 10 §5); null when nobody holds it. */
  leaseOwner: string | null;
  leaseExpiresAt: number | null;
  /** Nobody wants the result any more (/clear, /leave): followed to its end for the ledger, never delivered. */
  discard: boolean;
  /** Characters the service charged at creation; null for jobs stored before migration 004. */
  chars: number | null;
}

export interface NewJob {
  jobId: string;
  jobToken: string;
  guildId: string;
  userId: string;
  channelId: string;
  delivery: unknown;
  request: StoredJobRequest;
  state?: JobState;
  attempt?: number;
  /** The seed sent with this job, when known (a fixed or resubmit seed). */
  seed?: number;
  /** When the service created it (defaults to now). */
  createdAt?: number;
  /** The creating process holds the job from the start. */
  lease?: { owner: string; expiresAt: number };
  /** Characters the service charged at creation. */
  chars?: number;
}

export interface JobResultFields {
  url?: string | null;
  pk?: number | null;
  seed?: number | null;
  errorCode?: string | null;
}

interface JobRow {
  job_id: string;
  job_token: string;
  guild_id: string;
  user_id: string;
  channel_id: string;
  delivery: string;
  request: string;
  state: JobState;
  attempt: number;
  created_at: number;
  updated_at: number;
  url: string | null;
  pk: number | null;
  seed: number | null;
  error_code: string | null;
  lease_owner: string | null;
  lease_expires_at: number | null;
  discard: number;
  chars: number | null;
}

function fromJobRow(row: JobRow): StoredJob {
  return {
    jobId: row.job_id,
    jobToken: row.job_token,
    guildId: row.guild_id,
    userId: row.user_id,
    channelId: row.channel_id,
    delivery: JSON.parse(row.delivery) as unknown,
    request: JSON.parse(row.request) as StoredJobRequest,
    state: row.state,
    attempt: row.attempt,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    url: row.url,
    pk: row.pk,
    seed: row.seed,
    errorCode: row.error_code,
    leaseOwner: row.lease_owner,
    leaseExpiresAt: row.lease_expires_at,
    discard: row.discard === 1,
    chars: row.chars,
  };
}

export class JobsRepo {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #insert;
  readonly #select;
  readonly #update;
  readonly #unfinished;
  readonly #clearText;
  readonly #deleteOld;
  readonly #claim;
  readonly #renew;
  readonly #release;
  readonly #releaseAll;
  readonly #discard;

  constructor(db: Db, clock: Clock = systemClock) {
    this.#db = db;
    this.#clock = clock;
    this.#insert = db.prepare<[JobRow]>(`
      INSERT INTO advanced_jobs (job_id, job_token, guild_id, user_id, channel_id, delivery, request, state, attempt,
        created_at, updated_at, url, pk, seed, error_code, lease_owner, lease_expires_at, discard, chars)
      VALUES (@job_id, @job_token, @guild_id, @user_id, @channel_id, @delivery, @request, @state, @attempt,
        @created_at, @updated_at, @url, @pk, @seed, @error_code, @lease_owner, @lease_expires_at, @discard, @chars)`);
    this.#select = db.prepare<[string], JobRow>('SELECT * FROM advanced_jobs WHERE job_id = ?');
    // A field left NULL in the update keeps its value (COALESCE), so a poll without `seed` keeps the stored one.
    this.#update = db.prepare<[{ job_id: string; state: JobState; updated_at: number; url: string | null; pk: number | null; seed: number | null; error_code: string | null }]>(`
      UPDATE advanced_jobs SET state = @state, updated_at = @updated_at, url = COALESCE(@url, url),
        pk = COALESCE(@pk, pk), seed = COALESCE(@seed, seed), error_code = COALESCE(@error_code, error_code)
      WHERE job_id = @job_id`);
    this.#unfinished = db.prepare<[], JobRow>(
      "SELECT * FROM advanced_jobs WHERE state IN ('pending', 'running', 'succeeded') ORDER BY created_at, job_id",
    );
    this.#clearText = db.prepare<[number, string]>(
      "UPDATE advanced_jobs SET request = json_set(request, '$.text', json('null')), updated_at = ? WHERE job_id = ?",
    );
    this.#deleteOld = db.prepare<[number]>("DELETE FROM advanced_jobs WHERE state IN ('failed', 'delivered') AND updated_at < ?");
    // One statement reads and decides: the job is taken only if free or its holder's lease ran out.
    this.#claim = db.prepare<[{ job_id: string; owner: string; now: number; until: number }]>(`
      UPDATE advanced_jobs SET lease_owner = @owner, lease_expires_at = @until
      WHERE job_id = @job_id AND state IN ('pending', 'running', 'succeeded')
        AND (lease_owner IS NULL OR lease_expires_at IS NULL OR lease_expires_at <= @now)`);
    this.#renew = db.prepare<[{ job_id: string; owner: string; until: number }]>(
      'UPDATE advanced_jobs SET lease_expires_at = @until WHERE job_id = @job_id AND lease_owner = @owner',
    );
    this.#release = db.prepare<[string, string]>('UPDATE advanced_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE job_id = ? AND lease_owner = ?');
    this.#releaseAll = db.prepare<[string]>('UPDATE advanced_jobs SET lease_owner = NULL, lease_expires_at = NULL WHERE lease_owner = ?');
    this.#discard = db.prepare<[number, string]>('UPDATE advanced_jobs SET discard = 1, updated_at = ? WHERE job_id = ?');
  }

  /** Persists a job the service just created. */
  async insert(job: NewJob): Promise<StoredJob> {
    const now = this.#clock.now();
    const row: JobRow = {
      job_id: job.jobId,
      job_token: job.jobToken,
      guild_id: job.guildId,
      user_id: job.userId,
      channel_id: job.channelId,
      delivery: JSON.stringify(job.delivery ?? null),
      request: JSON.stringify(job.request),
      state: job.state ?? 'pending',
      attempt: job.attempt ?? 1,
      created_at: job.createdAt ?? now,
      updated_at: now,
      url: null,
      pk: null,
      seed: job.seed ?? null,
      error_code: null,
      lease_owner: job.lease?.owner ?? null,
      lease_expires_at: job.lease?.expiresAt ?? null,
      discard: 0,
      chars: job.chars ?? null,
    };
    await writeTx(this.#db, () => this.#insert.run(row));
    return fromJobRow(row);
  }

  get(jobId: string): StoredJob | undefined {
    const row = this.#select.get(jobId);
    return row ? fromJobRow(row) : undefined;
  }

  /** Moves the job to `state`, recording result fields given (others keep their values). Resolves false for an unknown job. */
  updateState(jobId: string, state: JobState, result: JobResultFields = {}): Promise<boolean> {
    const params = {
      job_id: jobId,
      state,
      updated_at: this.#clock.now(),
      url: result.url ?? null,
      pk: result.pk ?? null,
      seed: result.seed ?? null,
      error_code: result.errorCode ?? null,
    };
    return writeTx(this.#db, () => this.#update.run(params).changes > 0);
  }

  /** Jobs not yet delivered nor failed: still to poll (pending/running) or to deliver (succeeded), oldest first. */
  listUnfinished(): StoredJob[] {
    return this.#unfinished.all().map(fromJobRow);
  }

  /** The result reached its destination. */
  markDelivered(jobId: string): Promise<boolean> {
    return this.updateState(jobId, 'delivered');
  }

  /** Drops the text from the stored request (privacy: kept only while it may be needed to resubmit). */
  clearText(jobId: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#clearText.run(this.#clock.now(), jobId).changes > 0);
  }

  /** Deletes ended jobs (failed, delivered) last touched before `before` (ms), tokens and all; resolves with how many. */
  deleteEndedBefore(before: number): Promise<number> {
    return writeTx(this.#db, () => this.#deleteOld.run(before).changes);
  }

  /** Takes the lease of an unfinished job until `until` if it is free or its holder's lease expired. */
  claim(jobId: string, owner: string, until: number): Promise<boolean> {
    return writeTx(this.#db, () => this.#claim.run({ job_id: jobId, owner, now: this.#clock.now(), until }).changes > 0);
  }

  /** Extends our lease; resolves false when the job is no longer ours (another process took it over). */
  renew(jobId: string, owner: string, until: number): Promise<boolean> {
    return writeTx(this.#db, () => this.#renew.run({ job_id: jobId, owner, until }).changes > 0);
  }

  /** Gives the lease back (the next process may take the job at once). */
  release(jobId: string, owner: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#release.run(jobId, owner).changes > 0);
  }

  /** Gives back every lease `owner` holds (a clean shutdown). */
  releaseAll(owner: string): Promise<number> {
    return writeTx(this.#db, () => this.#releaseAll.run(owner).changes);
  }

  /** Nobody wants the job's result any more: it is still followed to its end, never delivered. */
  markDiscard(jobId: string): Promise<boolean> {
    return writeTx(this.#db, () => this.#discard.run(this.#clock.now(), jobId).changes > 0);
  }
}

// ---------------------------------------------------------------------------------------------

export interface Repositories {
  guildSettings: GuildSettingsRepo;
  autoRead: AutoReadRepo;
  userSettings: UserSettingsRepo;
  dictionary: DictionaryRepo;
  history: HistoryRepo;
  jobs: JobsRepo;
}

/** Every repository over one open (migrated) database. */
export function createRepositories(db: Db, options: { clock?: Clock } = {}): Repositories {
  const clock = options.clock ?? systemClock;
  return {
    guildSettings: new GuildSettingsRepo(db, clock),
    autoRead: new AutoReadRepo(db, clock),
    userSettings: new UserSettingsRepo(db, clock),
    dictionary: new DictionaryRepo(db, clock),
    history: new HistoryRepo(db, clock),
    jobs: new JobsRepo(db, clock),
  };
}
