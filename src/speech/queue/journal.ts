import { failFastOnLock, type Db } from '../../db/database.ts';
import { PendingUtterancesTable, type PendingWrite } from '../../db/pending-utterances.ts';
import { isBusy } from '../../db/write.ts';
import type { Clock } from '../../util/clock.ts';
import { systemClock } from '../../util/clock.ts';
import type { QueueJournal } from './options.ts';
import type { Utterance } from './utterance.ts';

/** Longest wait between two retries while the disk refuses writes. */
const DISK_RETRY_MAX_MS = 5_000;

/** An utterance a previous process accepted, and how many start-ups have taken it back so far. */
export interface ClaimedUtterance {
  utterance: Utterance;
  /** 1 on the first restart after it was accepted. */
  restores: number;
}

interface PendingStoreOptions {
  clock?: Clock;
  /** First wait before retrying writes another process's lock refused; doubles up to maxRetryMs. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Accepted utterances kept in memory at most while their writes wait; past it new ones are refused. */
  maxUnwritten?: number;
  logger?: { error(obj: object, msg?: string): void; warn(obj: object, msg?: string): void; info(obj: object, msg?: string): void };
}

/**
 * Every accepted utterance, on disk from acceptance until it is finished (src/db/pending-utterances.ts),
 * so neither a restart nor kill -9 loses one. It is the scheduler's QueueJournal.
 *
 * It writes on the thread that also drives the 20 ms audio loop, so a write never waits for a
 * lock (src/db/write.ts): it is tried at once (one small autocommit), and when another process
 * holds the write lock it is kept in memory, in order, and retried on a timer a few milliseconds
 * later. Order matters (a remove must never land before its add), which is why this keeps its own
 * queue instead of one writeTx per call. `npm run bench:store` measures the cost per message and
 * the two-process case.
 *
 * A disk that refuses writes (full, read-only, failing) is not a lock to wait for: an utterance
 * whose write fails that way is not kept, and `add` says so (the scheduler refuses it and the
 * member is told). The writes already waiting are retried, and at most `maxUnwritten` accepted
 * utterances wait in memory in any case. The operator is told once when writes start failing and
 * once when they land again, not on every retry.
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
  readonly #maxUnwritten: number;
  /**
   * While writes cannot be kept: the disk refuses them, or too many wait for another process's
   * lock. Since when, and how many utterances were refused since (told to the operator at its end).
   */
  #outage: { cause: 'disk' | 'backlog'; since: number; refused: number } | undefined;
  #closed = false;

  constructor(db: Db, options: PendingStoreOptions = {}) {
    this.#clock = options.clock ?? systemClock;
    this.#retryMs = options.retryMs ?? 5;
    this.#maxRetryMs = options.maxRetryMs ?? 200;
    this.#wait = this.#retryMs;
    this.#maxUnwritten = options.maxUnwritten ?? 1_000;
    this.#logger = options.logger;
    // openDatabase already does; said here because everything below relies on it.
    failFastOnLock(db);
    this.#table = new PendingUtterancesTable(db);
  }

  /**
   * Writes an accepted utterance (QueueJournal); false when it cannot be kept: the disk refuses the
   * write, or too many writes already wait in memory.
   */
  add(u: Utterance): boolean {
    if (this.#closed) return true;
    if (this.#ops.filter((op) => op.kind === 'add').length >= this.#maxUnwritten) return this.#refuse('backlog');
    const op: PendingWrite = { kind: 'add', utterance: u, savedAt: this.#clock.now() };
    this.#ops.push(op);
    // While the disk refuses writes every add tries at once: the first one that lands ends the outage.
    if (this.#retry !== undefined && this.#outage?.cause !== 'disk') return true;
    if (this.#tryFlush() !== 'refused') return true;
    // Not written, and not for a lock: not kept (the writes before it keep waiting, in order).
    this.#ops = this.#ops.filter((o) => o !== op);
    if (this.#ops.length === 0) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
    return this.#refuse('disk');
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
    // Removes in a row are one write: a long outage keeps one list of ids, not one entry per delivery.
    const last = this.#ops.at(-1);
    if (op.kind === 'remove' && last?.kind === 'remove' && this.#retry !== undefined) {
      this.#ops[this.#ops.length - 1] = { kind: 'remove', ids: [...last.ids, ...op.ids] };
    } else this.#ops.push(op);
    // Only when nothing is waiting: otherwise the retry keeps the order.
    if (this.#retry === undefined) this.#tryFlush();
  }

  #refuse(cause: 'disk' | 'backlog'): false {
    if (this.#outage) this.#outage.refused++;
    else {
      // Reached only for the backlog (a disk outage starts in #tryFlush): another process has held
      // the lock that long. One error, as for a disk.
      this.#outage = { cause, since: this.#clock.now(), refused: 1 };
      const msg = 'queued speech cannot be written for now: too many writes wait for the lock; new messages are refused';
      this.#logger?.error({ unwritten: this.#ops.length }, msg);
    }
    return false;
  }

  /** Writes what waits, in order; on failure retries later (backing off). */
  #tryFlush(): 'written' | 'busy' | 'refused' {
    clearTimeout(this.#retry);
    this.#retry = undefined;
    try {
      if (this.#ops.length > 0) this.#table.applyNow(this.#ops);
      this.#ops = [];
      this.#wait = this.#retryMs;
      if (this.#outage) {
        const { since, refused } = this.#outage;
        this.#outage = undefined;
        this.#logger?.info({ refused, outageMs: this.#clock.now() - since }, 'queued speech is written again; new messages are accepted');
      }
      return 'written';
    } catch (error) {
      const busy = isBusy(error);
      if (!busy && this.#outage?.cause !== 'disk') {
        this.#outage = { cause: 'disk', since: this.#outage?.since ?? this.#clock.now(), refused: this.#outage?.refused ?? 0 };
        const msg = 'queued speech cannot be written (the disk refuses writes); new messages are refused until it takes them again';
        this.#logger?.error({ err: error, unwritten: this.#ops.length }, msg);
      }
      this.#retry = setTimeout(() => this.#tryFlush(), this.#wait);
      this.#retry.unref?.();
      // A refusing disk is retried less often than a lock: new messages try it at once anyway.
      this.#wait = Math.min(this.#wait * 2, this.#outage?.cause === 'disk' ? DISK_RETRY_MAX_MS : this.#maxRetryMs);
      return busy ? 'busy' : 'refused';
    }
  }
}
