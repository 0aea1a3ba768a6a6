import type { FateRetention, MessageFatesTable, StoredFate } from '../../db/message-fates.ts';
import type { Delivered } from '../../ops/instrument.ts';
import { audienceOf, type ReadyUtterance, type Utterance } from '../../speech/queue/utterance.ts';
import type { Logger } from '../../util/log.ts';
import type { UtteranceMeta } from '../delivery/meta.ts';
import type { NotRead } from '../../domain/reading-rules.ts';

// What became of each message auto-read considered, written where each decision is made (the
// auto-reader, the queue's drops and clears, deletions and edits, delivery), for "Why wasn't this
// read?" and /diagnose. Ids, codes and times only: never a message's text. Kept in memory until
// written to SQLite (every few seconds, and at shutdown), so a restart still answers; a few hours
// and a few hundred messages per server are kept, which covers "my message a moment ago".

/** Why a message in a read channel was not queued (the reading rules, who could hear, what it said). */
type NotQueued =
  | Exclude<NotRead, 'self'>
  /** Everyone in the call was deafened. */
  | 'deafened'
  /** Someone in the call cannot view the channel (and it posts no MP3s). */
  | 'hidden'
  /** It starts with the server's ignore prefix. */
  | 'ignored_prefix'
  /** One of the server's filters skips it (/filter). */
  | 'filtered'
  /** Its author was past the server's flood limit (`limit` messages in 10 s): counted in a spoken summary instead. */
  | 'flooded'
  /** Nothing readable was left (an empty message, a poll without text, emoji with emoji off). */
  | 'nothing_to_read'
  /** It arrived with no text at all: Discord did not send its content (the Message Content intent). */
  | 'no_content'
  /** The member's queue was full (`limit` characters). */
  | 'queue_full'
  /** The disk refused to keep it. */
  | 'not_saved'
  /** The bot was shutting down. */
  | 'closed';

/** Why queued speech was taken back (chat-changes.ts) or cleared (/clear, /leave, a disconnect). */
type TakenBack = 'deleted' | 'bulk_deleted' | 'channel_deleted' | 'banned' | 'edited' | 'edited_unread';

/** Every fate a message can have; the last one recorded is its fate now. */
export type Fate =
  | NotQueued
  | 'queued'
  | TakenBack
  /** Heard in voice (`voiceChannelId`), at `at`. */
  | 'read'
  /** Posted as an MP3 (an MP3 channel, or it could not be played). */
  | 'attached'
  /** Too old by its turn: dropped (`told`: the server's spoken notice says how many). */
  | 'too_old'
  /** Dropped by /clear, /leave, a leave or a disconnect, or after a restart where it could not be read (`reason`). */
  | 'cleared'
  /** Stopped with /skip. */
  | 'skipped'
  /** A character limit refused it (`scope`, `limit`). */
  | 'budget'
  /** Speech could not be made or played (`code`). */
  | 'failed';

/** A message another one was read with (in the same request). */
interface MessageRef {
  channelId: string;
  messageId: string;
}

/** What is known of one message. */
export interface FateRecord {
  guildId: string;
  messageId: string;
  channelId: string;
  userId: string;
  /** When the bot saw it arrive. */
  arrivedAt: number;
  fate: Fate;
  /** When its fate was decided. */
  at: number;
  /** The voice channel it was queued for or read in (absent: posted as a file, or never queued). */
  voiceChannelId?: string;
  /** read, attached: the other messages read in the same request (at most 10). */
  mergedWith?: MessageRef[];
  /** cleared: why (a ClearReason, or 'restart'); failed: the error code. */
  reason?: string;
  /** budget: whose limit; queue_full and budget: the limit in characters; flooded: the messages per 10 s. */
  scope?: 'user' | 'guild' | 'account';
  limit?: number;
  /** too_old: the server's spoken notice says so. */
  told?: boolean;
  /** It arrived with no text at all (content blanked). */
  blank?: true;
}

/** One message as it arrives, before any fate. */
export type Arrival = Pick<FateRecord, 'guildId' | 'messageId' | 'channelId' | 'userId' | 'arrivedAt'> & { blank?: boolean };

/** The details a fate carries (everything but the message and when). */
export type FateDetail = Omit<FateRecord, keyof Arrival | 'fate' | 'at' | 'blank'>;

/** Defaults: six hours and 500 messages a server; written every 3 s. */
export const FATE_DEFAULTS = { keepMs: 6 * 3_600_000, perGuild: 500, flushEveryMs: 3_000, maxMergedWith: 10 } as const;

const key = (guildId: string, messageId: string) => `${guildId}:${messageId}`;

/** The message an utterance reads, if it is a member's message (auto-read; not /say, not the bot's own clips). */
function arrivalOf(u: Utterance): Arrival | undefined {
  const meta = u.meta as UtteranceMeta | undefined;
  if (u.kind !== 'auto' || meta?.delivery.kind !== 'message' || meta.botClip || !meta.delivery.messageId) return undefined;
  return { guildId: u.guildId, messageId: meta.delivery.messageId, channelId: u.channelId, userId: u.userId, arrivedAt: u.enqueuedAt };
}

/** The voice channel of a voice audience (`voice:<id>`). */
const voiceOf = (u: Utterance) => {
  const audience = audienceOf(u);
  return audience.startsWith('voice:') ? { voiceChannelId: audience.slice('voice:'.length) } : {};
};

/**
 * The record of message fates: one per message, the latest decision winning (where and when it
 * arrived, and whether it arrived blank, stay). Written to `table` in the background.
 */
export class MessageFates {
  readonly #table: MessageFatesTable | undefined;
  readonly #now: () => number;
  readonly #logger: Logger | undefined;
  readonly #keep: FateRetention;
  /** Decided since the last write, by guild:message (a write takes them all). */
  #unwritten = new Map<string, FateRecord>();
  /** Taken by the write under way (read from here until it is in the table). */
  #writingNow = new Map<string, FateRecord>();
  #timer: NodeJS.Timeout | undefined;
  #writing: Promise<void> = Promise.resolve();

  constructor(options: { table?: MessageFatesTable; now: () => number; logger?: Logger; keep?: Partial<FateRetention> }) {
    this.#table = options.table;
    this.#now = options.now;
    this.#logger = options.logger;
    this.#keep = { keepMs: options.keep?.keepMs ?? FATE_DEFAULTS.keepMs, perGuild: options.keep?.perGuild ?? FATE_DEFAULTS.perGuild };
  }

  /** Writes what was decided every `everyMs` until `stop`. */
  start(everyMs: number = FATE_DEFAULTS.flushEveryMs): void {
    this.#timer ??= setInterval(() => void this.flush(), everyMs).unref();
  }

  /** Stops the background writes and writes what is left. */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Records `fate` for a message, decided `at` (default: now); its arrival as first seen stays. */
  note(arrival: Arrival, fate: Fate, detail: FateDetail = {}, at: number = this.#now()): void {
    const k = key(arrival.guildId, arrival.messageId);
    const before = this.#unwritten.get(k) ?? this.#writingNow.get(k) ?? this.#stored(arrival.guildId, arrival.messageId);
    const blank = before?.blank || arrival.blank;
    const record: FateRecord = {
      guildId: arrival.guildId,
      messageId: arrival.messageId,
      channelId: before?.channelId ?? arrival.channelId,
      userId: before?.userId ?? arrival.userId,
      arrivedAt: before?.arrivedAt ?? arrival.arrivedAt,
      fate,
      at,
      ...detail,
      ...(blank ? { blank: true as const } : {}),
    };
    this.#unwritten.delete(k); // to the back: the newest
    this.#unwritten.set(k, record);
    // Nothing is lost for a slow disk, but memory stays bounded: the oldest unwritten decisions go first.
    while (this.#unwritten.size > 50 * this.#keep.perGuild) this.#unwritten.delete(this.#unwritten.keys().next().value!);
  }

  /** Queued utterances taken back or cleared: each message read by one gets `fate`. */
  noteAll(items: readonly Utterance[], fate: Fate, detail: (u: Utterance) => FateDetail = () => ({})): void {
    for (const u of items) {
      const arrival = arrivalOf(u);
      if (arrival) this.note(arrival, fate, { ...voiceOf(u), ...detail(u) });
    }
  }

  /** What became of a message, if the bot recorded anything. */
  get(guildId: string, messageId: string): FateRecord | undefined {
    const k = key(guildId, messageId);
    return this.#unwritten.get(k) ?? this.#writingNow.get(k) ?? this.#stored(guildId, messageId);
  }

  /** The member's latest messages of the guild the bot recorded (newest first). */
  recentOf(guildId: string, userId: string, limit: number): FateRecord[] {
    const since = this.#now() - this.#keep.keepMs;
    const byId = new Map<string, FateRecord>();
    for (const s of this.#table?.recentOf(guildId, userId, since, limit) ?? []) byId.set(s.messageId, fromStored(s));
    for (const r of [...this.#writingNow.values(), ...this.#unwritten.values()])
      if (r.guildId === guildId && r.userId === userId && r.arrivedAt >= since) byId.set(r.messageId, r);
    return [...byId.values()].sort((a, b) => b.arrivedAt - a.arrivedAt || (a.messageId < b.messageId ? 1 : -1)).slice(0, limit);
  }

  /** Writes what was decided since the last write (a failed write is kept for the next one). */
  flush(): Promise<void> {
    this.#writing = this.#writing.then(async () => {
      if (!this.#table || this.#unwritten.size === 0) return;
      const batch = this.#unwritten;
      this.#unwritten = new Map();
      this.#writingNow = batch;
      try {
        await this.#table.save([...batch.values()].map(toStored), this.#now(), this.#keep);
      } catch (error) {
        this.#logger?.warn({ err: error, count: batch.size }, 'could not write message fates; retrying');
        for (const [k, r] of batch) if (!this.#unwritten.has(k)) this.#unwritten.set(k, r);
      } finally {
        this.#writingNow = new Map();
      }
    });
    return this.#writing;
  }

  #stored(guildId: string, messageId: string): FateRecord | undefined {
    const stored = this.#table?.get(guildId, messageId);
    return stored && stored.arrivedAt >= this.#now() - this.#keep.keepMs ? fromStored(stored) : undefined;
  }
}

/**
 * Around the scheduler's sink: each delivered message's fate (read in voice, posted, refused for a
 * limit, failed, skipped), with the messages read with it. A delivery cut short by a shutdown is
 * delivered again after the restart, and one stopped by a deletion or an edit is recorded there.
 */
export function recordDeliveries(
  fates: MessageFates,
  deliver: (ready: ReadyUtterance, signal: AbortSignal) => Promise<Delivered | undefined>,
  now: () => number,
): (ready: ReadyUtterance, signal: AbortSignal) => Promise<Delivered | undefined> {
  return async (ready, signal) => {
    const startedAt = now();
    let delivered: Delivered | undefined;
    try {
      delivered = await deliver(ready, signal);
      return delivered;
    } finally {
      const outcome = deliveryFate(ready, delivered, signal);
      if (outcome) {
        const messages = ready.items.flatMap((u) => {
          const a = arrivalOf(u);
          return a ? [{ u, a }] : [];
        });
        for (const { u, a } of messages) {
          const others = messages.filter((m) => m.a !== a).slice(0, FATE_DEFAULTS.maxMergedWith);
          const mergedWith = others.map((m) => ({ channelId: m.a.channelId, messageId: m.a.messageId }));
          const heard = outcome.fate === 'read' || outcome.fate === 'attached';
          fates.note(
            a,
            outcome.fate,
            {
              ...(outcome.fate === 'read' ? voiceOf(u) : {}),
              ...(heard && mergedWith.length > 0 ? { mergedWith } : {}),
              ...outcome.detail,
            },
            // Read when its delivery started, not when it ended.
            heard ? startedAt : now(),
          );
        }
      }
    }
  };
}

/** A delivery's fate for its messages, or undefined when it is decided elsewhere (a shutdown, a deletion, an edit). */
function deliveryFate(
  ready: ReadyUtterance,
  delivered: Delivered | undefined,
  signal: AbortSignal,
): { fate: Fate; detail: FateDetail } | undefined {
  if (ready.error) {
    const refusal = (ready.error as { refusal?: { scope?: unknown; limit?: unknown } }).refusal;
    if (ready.error.code === 'budget_refused' && refusal) {
      const scope = refusal.scope === 'user' || refusal.scope === 'guild' || refusal.scope === 'account' ? refusal.scope : undefined;
      return {
        fate: 'budget',
        detail: { ...(scope ? { scope } : {}), ...(typeof refusal.limit === 'number' ? { limit: refusal.limit } : {}) },
      };
    }
    return { fate: 'failed', detail: { reason: ready.error.code ?? 'failed' } };
  }
  // Cut short by a shutdown: it stays queued on disk and is delivered again after the restart.
  if (signal.aborted && (signal.reason as { code?: string } | undefined)?.code === 'closed') return undefined;
  if (delivered?.played) return { fate: 'read', detail: {} };
  if (delivered?.attached) return { fate: 'attached', detail: {} };
  if (signal.aborted) {
    const why = (signal.reason as { code?: string; message?: string } | undefined) ?? {};
    return why.code === 'aborted' && why.message === 'skipped' ? { fate: 'skipped', detail: {} } : undefined;
  }
  return { fate: 'failed', detail: { reason: 'not_delivered' } };
}

function toStored(r: FateRecord): StoredFate {
  const { guildId, messageId, channelId, userId, arrivedAt, fate, at, ...detail } = r;
  return { guildId, messageId, channelId, userId, arrivedAt, fate, decidedAt: at, detail };
}

function fromStored(s: StoredFate): FateRecord {
  return {
    ...(s.detail as FateDetail & { blank?: true }),
    guildId: s.guildId,
    messageId: s.messageId,
    channelId: s.channelId,
    userId: s.userId,
    arrivedAt: s.arrivedAt,
    fate: s.fate as Fate,
    at: s.decidedAt,
  };
}
