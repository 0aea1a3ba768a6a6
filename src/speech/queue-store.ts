import { failFastOnLock, type Db } from '../db/database.ts';
import { PendingUtterancesTable, type PendingWrite } from '../db/pending-utterances.ts';
import { isBusy } from '../db/write.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import type { QueueJournal, Utterance } from './queue.ts';

/** An utterance a previous process accepted, and how many start-ups have taken it back so far. */
export interface ClaimedUtterance {
  utterance: Utterance;
  /** 1 on the first restart after it was accepted. */
  restores: number;
}

export interface PendingStoreOptions {
  clock?: Clock;
  /** First wait before retrying writes another process's lock refused; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
}

/**
 * Every accepted utterance, on disk from acceptance until it is finished (src/db/pending-utterances.ts),
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
  readonly #table: PendingUtterancesTable;
  readonly #clock: Clock;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #logger: PendingStoreOptions['logger'];
  /** Writes not yet on disk, in order (only while another process holds the lock). */
  #ops: PendingWrite[] = [];
  #retry: NodeJS.Timeout | undefined;
  #wait: number;
  #closed = false;

  constructor(db: Db, options: PendingStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#retryMs = options.retryMs ?? 5;
    this.#maxRetryMs = options.maxRetryMs ?? 200;
    this.#wait = this.#retryMs;
    this.#logger = options.logger;
    // openDatabase already does; said here because everything below relies on it.
    failFastOnLock(db);
    this.#table = new PendingUtterancesTable(db);
  }

  /** Writes an accepted utterance (QueueJournal). */
  add(u: Utterance): void {
    this.#push({ kind: 'add', utterance: u, savedAt: this.#clock.now() });
  }

  /** Deletes finished utterances (QueueJournal). */
  remove(ids: readonly string[]): void {
    if (ids.length === 0) return;
    // An add still waiting in memory and its remove cancel out: nothing to write for either.
    const gone = new Set(ids);
    const unwritten = new Set(this.#ops.flatMap((op) => (op.kind === 'add' && gone.has(op.utterance.id) ? [op.utterance.id] : [])));
    if (unwritten.size > 0) this.#ops = this.#ops.filter((op) => !(op.kind === 'add' && unwritten.has(op.utterance.id)));
    const left = ids.filter((id) => !unwritten.has(id));
    if (left.length > 0) this.#push({ kind: 'remove', ids: left });
  }

  /**
   * Start-up: the utterances previous processes accepted and did not finish, for the guilds this
   * process serves (shards share the file), in order. They stay on disk until finished; each
   * claim counts one more restore.
   */
  async claim(owns: (guildId: string) => boolean = () => true): Promise<ClaimedUtterance[]> {
    // What was written from an Utterance reads back as one (its JSON fields are ours).
    return (await this.#table.claim(owns)) as ClaimedUtterance[];
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
      await this.#table.apply(ops);
      this.#ops = [];
    } catch (error) {
      this.#logger?.warn({ err: error, unwritten: ops.length }, 'queued speech could not be written at shutdown');
    }
  }

  #push(op: PendingWrite): void {
    if (this.#closed) return;
    this.#ops.push(op);
    // Only when nothing is waiting: otherwise the retry keeps the order.
    if (this.#retry === undefined) this.#tryFlush();
  }

  #tryFlush(): void {
    try {
      if (this.#ops.length > 0) this.#table.applyNow(this.#ops);
      this.#ops = [];
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
}
