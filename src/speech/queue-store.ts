import type { Db } from '../db/database.ts';
import { writeTx } from '../db/write.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import type { Utterance, UtteranceKind } from './queue.ts';

interface PendingRow {
  seq: number;
  id: string;
  guild_id: string;
  user_id: string;
  channel_id: string;
  kind: UtteranceKind;
  text: string;
  lang: string | null;
  voice: string;
  speed: number;
  pitch: number;
  advanced: string | null;
  meta: string | null;
  enqueued_at: number;
  saved_at: number;
}

function toRow(u: Utterance, savedAt: number): Omit<PendingRow, 'seq'> {
  return {
    id: u.id,
    guild_id: u.guildId,
    user_id: u.userId,
    channel_id: u.channelId,
    kind: u.kind,
    text: u.text,
    lang: u.lang ?? null,
    voice: u.voice,
    speed: u.speed,
    pitch: u.pitch,
    advanced: u.advanced ? JSON.stringify(u.advanced) : null,
    // meta must be JSON data to survive a restart (ids, not live objects).
    meta: u.meta === undefined ? null : (JSON.stringify(u.meta) ?? null),
    enqueued_at: u.enqueuedAt,
    saved_at: savedAt,
  };
}

function fromRow(row: PendingRow): Utterance {
  const u: Utterance = {
    id: row.id,
    guildId: row.guild_id,
    userId: row.user_id,
    channelId: row.channel_id,
    kind: row.kind,
    text: row.text,
    voice: row.voice,
    speed: row.speed,
    pitch: row.pitch,
    enqueuedAt: row.enqueued_at,
  };
  if (row.lang !== null) u.lang = row.lang;
  if (row.advanced !== null) u.advanced = JSON.parse(row.advanced) as NonNullable<Utterance['advanced']>;
  if (row.meta !== null) u.meta = JSON.parse(row.meta) as unknown;
  return u;
}

/** Queued-but-unspoken utterances across a clean restart (migrations/003_pending_utterances.sql). */
export class PendingUtteranceStore {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #insert;
  readonly #all;
  readonly #delete;

  constructor(db: Db, options: { clock?: Clock } = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#insert = db.prepare<[Omit<PendingRow, 'seq'>]>(`
      INSERT OR REPLACE INTO pending_utterances
        (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, advanced, meta, enqueued_at, saved_at)
      VALUES (@id, @guild_id, @user_id, @channel_id, @kind, @text, @lang, @voice, @speed, @pitch, @advanced, @meta, @enqueued_at, @saved_at)`);
    this.#all = db.prepare<[], PendingRow>('SELECT * FROM pending_utterances ORDER BY seq');
    this.#delete = db.prepare<[number]>('DELETE FROM pending_utterances WHERE seq = ?');
  }

  /** Saves a scheduler snapshot (in order), e.g. the result of `SpeechScheduler.close()`. */
  async save(items: readonly Utterance[]): Promise<number> {
    const now = this.#clock.now();
    await writeTx(this.#db, () => {
      for (const u of items) this.#insert.run(toRow(u, now));
    });
    return items.length;
  }

  /**
   * Removes and returns the saved utterances in order; `owns` picks the guilds this process
   * serves (shards share the file). The text leaves the database as it is read. IMMEDIATE: the
   * read decides the deletes, so a deferred transaction would fail with SQLITE_BUSY_SNAPSHOT
   * when another process wrote in between (two shards starting together).
   */
  take(owns: (guildId: string) => boolean = () => true): Promise<Utterance[]> {
    return writeTx(this.#db, () => {
      const rows = this.#all.all().filter((r) => owns(r.guild_id));
      for (const r of rows) this.#delete.run(r.seq);
      return rows.map(fromRow);
    });
  }
}
