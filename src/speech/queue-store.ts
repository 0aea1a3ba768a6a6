import { failFastOnLock, type Db } from '../db/database.ts';
import { isBusy, writeTx } from '../db/write.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import type { QueueJournal, Utterance, UtteranceKind } from './queue.ts';

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
  restores: number;
}

function toRow(u: Utterance, savedAt: number): Omit<PendingRow, 'seq' | 'restores'> {
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

/** An utterance a previous process accepted, and how many start-ups have taken it back so far. */
export interface ClaimedUtterance {
  utterance: Utterance;
  /** 1 on the first restart after it was accepted. */
  restores: number;
}

type Op = { kind: 'add'; id: string; row: Omit<PendingRow, 'seq' | 'restores'> } | { kind: 'remove'; ids: string[] };

export interface PendingStoreOptions {
  clock?: Clock;
  /** First wait before retrying writes another process's lock refused; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
}

/**
 * Every accepted utterance, on disk from acceptance until it is finished (migrations/003 and 005),
 * so neither a restart nor kill -9 loses one (issue 9 §3). It is the scheduler's QueueJournal.
 *
 * It writes on the thread that also drives the 20 ms audio loop, so a write never waits for a
 * lock (src/db/write.ts): it is tried at once (one small autocommit), and when another process
 * holds the write lock it is kept in memory, in order, and retried on a timer a few milliseconds
 * later. Order matters (a remove must never land before its add), which is why this keeps its own
 * queue instead of one writeTx per call. `npm run bench:store` measures the cost per message and
 * the two-process case.
 */
export class PendingUtteranceStore implements QueueJournal {
  readonly #db: Db;
  readonly #clock: Clock;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #logger: PendingStoreOptions['logger'];
  readonly #insert;
  readonly #delete;
  readonly #all;
  readonly #bump;
  readonly #count;
  /** Writes not yet on disk, in order (only while another process holds the lock). */
  #ops: Op[] = [];
  #retry: NodeJS.Timeout | undefined;
  #wait: number;
  #closed = false;

  constructor(db: Db, options: PendingStoreOptions = {}) {
    this.#db = db;
    this.#clock = options.clock ?? systemClock;
    this.#retryMs = options.retryMs ?? 5;
    this.#maxRetryMs = options.maxRetryMs ?? 200;
    this.#wait = this.#retryMs;
    this.#logger = options.logger;
    // openDatabase already does; said here because everything below relies on it.
    failFastOnLock(db);
    this.#insert = db.prepare<[Omit<PendingRow, 'seq' | 'restores'>]>(`
      INSERT OR REPLACE INTO pending_utterances
        (id, guild_id, user_id, channel_id, kind, text, lang, voice, speed, pitch, advanced, meta, enqueued_at, saved_at)
      VALUES (@id, @guild_id, @user_id, @channel_id, @kind, @text, @lang, @voice, @speed, @pitch, @advanced, @meta, @enqueued_at, @saved_at)`);
    this.#delete = db.prepare<[string]>('DELETE FROM pending_utterances WHERE id = ?');
    this.#all = db.prepare<[], PendingRow>('SELECT * FROM pending_utterances ORDER BY seq');
    this.#bump = db.prepare<[number]>('UPDATE pending_utterances SET restores = restores + 1 WHERE seq = ?');
    this.#count = db.prepare<[], number>('SELECT COUNT(*) FROM pending_utterances').pluck();
  }

  /** Writes an accepted utterance (QueueJournal). */
  add(u: Utterance): void {
    this.#push({ kind: 'add', id: u.id, row: toRow(u, this.#clock.now()) });
  }

  /** Deletes finished utterances (QueueJournal). */
  remove(ids: readonly string[]): void {
    if (ids.length === 0) return;
    // An add still waiting in memory and its remove cancel out: nothing to write for either.
    const gone = new Set(ids);
    const unwritten = new Set(this.#ops.flatMap((op) => (op.kind === 'add' && gone.has(op.id) ? [op.id] : [])));
    if (unwritten.size > 0) this.#ops = this.#ops.filter((op) => !(op.kind === 'add' && unwritten.has(op.id)));
    const left = ids.filter((id) => !unwritten.has(id));
    if (left.length > 0) this.#push({ kind: 'remove', ids: left });
  }

  /**
   * Start-up: the utterances previous processes accepted and did not finish, for the guilds this
   * process serves (shards share the file), in order. They stay on disk until finished; each
   * claim counts one more restore. One IMMEDIATE transaction (writeTx), since what is read decides
   * what is written: two processes starting together must not both act on a stale snapshot.
   */
  claim(owns: (guildId: string) => boolean = () => true): Promise<ClaimedUtterance[]> {
    return writeTx(this.#db, () => {
      const rows = this.#all.all().filter((r) => owns(r.guild_id));
      for (const r of rows) this.#bump.run(r.seq);
      return rows.map((r) => ({ utterance: fromRow(r), restores: r.restores + 1 }));
    });
  }

  /** Rows on disk (for tests and benchmarks). */
  count(): number {
    return this.#count.get()!;
  }

  /** Writes still waiting for another process's lock. */
  get unwritten(): number {
    return this.#ops.length;
  }

  /** Shutdown: writes what is still waiting (waiting for the lock is fine now); later calls are ignored. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    const ops = this.#ops;
    if (ops.length === 0) return;
    try {
      await writeTx(this.#db, () => ops.forEach((op) => this.#apply(op)));
      this.#ops = [];
    } catch (error) {
      this.#logger?.warn({ err: error, unwritten: ops.length }, 'queued speech could not be written at shutdown');
    }
  }

  #push(op: Op): void {
    if (this.#closed) return;
    this.#ops.push(op);
    // Only when nothing is waiting: otherwise the retry keeps the order.
    if (this.#retry === undefined) this.#tryFlush();
  }

  #tryFlush(): void {
    try {
      this.#flush();
      this.#wait = this.#retryMs;
    } catch (error) {
      if (!isBusy(error)) this.#logger?.warn({ err: error, unwritten: this.#ops.length }, 'queued speech could not be written; retrying');
      this.#retry = setTimeout(() => {
        this.#retry = undefined;
        this.#tryFlush();
      }, this.#wait);
      this.#retry.unref?.();
      this.#wait = Math.min(this.#wait * 2, this.#maxRetryMs);
    }
  }

  /** Everything waiting, in order: one statement alone, or one IMMEDIATE transaction for more. */
  #flush(): void {
    if (this.#ops.length === 0) return;
    const ops = this.#ops;
    const single = ops.length === 1 && (ops[0]!.kind === 'add' || ops[0]!.ids.length === 1);
    if (single) this.#apply(ops[0]!);
    else this.#db.transaction(() => ops.forEach((op) => this.#apply(op))).immediate();
    this.#ops = [];
  }

  #apply(op: Op): void {
    if (op.kind === 'add') this.#insert.run(op.row);
    else for (const id of op.ids) this.#delete.run(id);
  }
}
