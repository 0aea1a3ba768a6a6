import { SpeechError } from '../errors.ts';
import type { AudienceQueue } from './audience-queue.ts';
import type { Playing } from './slot.ts';
import type { QueueJournal } from './options.ts';
import { audienceOf, type ReadyUtterance, type Utterance, type UtteranceInput } from './utterance.ts';

// Taking queued speech back when the chat changes under it (a message deleted or edited, a member
// banned, a channel deleted): no read-aloud bot may read a deleted message, nor an edited one as it
// was. The scheduler (scheduler.ts `withdraw`) applies this to each audience's queue of a guild.

/**
 * What becomes of one queued utterance: undefined leaves it as it is, null takes it out, an
 * utterance (same id and arrival) is read in its place.
 */
type Choose = (u: Utterance) => Utterance | null | undefined;

/** What a withdrawal changed. */
interface Withdrawal {
  /** Taken out: never sent again, never played. */
  removed: Utterance[];
  /** Read in place of an utterance of the same id (to be written to the journal again). */
  replaced: Utterance[];
}

/** An edited message read again: what to read instead of `old` (null: nothing). */
export type Replace = (old: Utterance) => UtteranceInput | null;

/**
 * Takes back the audience's utterances `match` picks wherever they are: out of the queue and the
 * journal, never sent (again) or played. A batch being made or ready that carries one is
 * discarded and its other utterances are read in a new request without it (`withdrawFrom`); a
 * delivery playing one is stopped at once, and its other utterances not started yet go back to the
 * front of the queue. With `replace` (an edited message) each is read as
 * `replace` says instead, in its place, with its id and arrival time (null: not at all; the same
 * speech: left where it is, its batch untouched); one already playing is left to finish.
 * Returns what was stopped, taken out or replaced (the old utterances).
 */
export function withdraw(
  g: AudienceQueue,
  o: { guildId: string; match: (u: Utterance) => boolean; replace?: Replace | undefined; journal: QueueJournal; now: number },
): Utterance[] {
  const reason = new SpeechError('aborted', { guildId: o.guildId, message: o.replace ? 'edited' : 'withdrawn' });
  const replaced = new Map<Utterance, Utterance>();
  const done = withdrawFrom(
    g,
    (u) => {
      if (!o.match(u)) return undefined;
      const input = o.replace?.(u);
      if (!input) return null;
      if (sameSpeech(u, input)) return u;
      // The new text is its author's to pay for, whoever paid for the old one (the server's one re-ask stays spent).
      const { paidOnce: _paid, chargedTo: _to, ...fresh } = input as Partial<Utterance> & UtteranceInput;
      const spent = u.paidOnce ? { paidOnce: true as const, chargedTo: fresh.userId } : {};
      // Read in its place, so for the audience whose queue it is in.
      const stay = audienceOf(fresh) === g.audience ? {} : { audience: g.audience };
      const next = { ...fresh, ...stay, id: u.id, enqueuedAt: u.enqueuedAt, ...spent };
      replaced.set(next, u);
      return next;
    },
    reason,
  );
  const slot = g.playing;
  const current = slot?.state.current;
  const stopped = !o.replace && slot && current ? current.playing.filter(o.match) : [];
  if (slot && current && stopped.length > 0) {
    // What that delivery had not started yet is read later, not lost: back to the front of the queue.
    const back = notStarted(current, o.now).filter((u) => !o.match(u));
    slot.stopCurrent(reason, back);
    const ready = current.ready;
    if (back.length > 0) g.putFirst(reask(back, ready.audio !== undefined && !ready.audio.fromCache, stopped[0]!.userId), reason);
  }
  o.journal.remove(done.removed.map((u) => u.id));
  // Same id: on disk too the edited text takes the old one's place.
  for (const u of done.replaced) o.journal.add(u);
  return [...stopped, ...done.removed, ...done.replaced.map((u) => replaced.get(u)!)];
}

/**
 * The items of the delivery playing that have not started at `now`: by `starts` with clips, else
 * by their share of the text of the one merged sound (the service reads at an even pace).
 */
function notStarted(current: Playing, now: number): Utterance[] {
  const ready = current.ready;
  const duration = ready.audio?.durationMs ?? 0;
  const elapsed = now - (current.until - duration);
  const total = ready.items.reduce((n, u) => n + u.text.length, 0) || 1;
  let before = 0;
  return ready.items.filter((u, i) => {
    const start = ready.starts?.[i] ?? (duration * before) / total;
    before += u.text.length;
    return start > elapsed && current.playing.includes(u);
  });
}

/**
 * Utterances of a discarded request read again. When the request was paid for (or may have been),
 * asking again is not their authors' cost (they paid once): the server pays the first time an
 * utterance is asked again, and only once; every later time `by` pays, the member whose deleted or
 * edited message discarded it, so nobody can drain the server's budget by editing again and again.
 */
function reask(kept: readonly Utterance[], paid: boolean, by: string | undefined, fresh: readonly Utterance[] = []): Utterance[] {
  return kept.map((u) => {
    if (!paid || fresh.includes(u)) return u;
    if (!u.paidOnce) return { ...u, paidOnce: true as const };
    return { ...u, chargedTo: by ?? u.userId };
  });
}

/** Whether `input` is spoken exactly as `u` (an edit that did not change what is read changes nothing). */
function sameSpeech(u: Utterance, input: UtteranceInput): boolean {
  return (
    u.text === input.text &&
    u.prefix === input.prefix &&
    u.lang === input.lang &&
    u.voice === input.voice &&
    u.speed === input.speed &&
    u.pitch === input.pitch
  );
}

/**
 * Applies `choose` to everything of the audience not delivered yet: the results of the batch being
 * delivered that have not started (`upcoming`), the batches synthesising or ready, and the pending
 * list. A result or batch that carries a change is discarded: its request aborted with `reason`,
 * its audio unpinned (the characters it cost stay charged: they were spent). Its other utterances,
 * and the replacements, go back to the front of the pending list in their order, to be read in a
 * new request without what was taken out: the others charged as `reask` says (the server once,
 * then the member whose change discarded them), an edit's new text to its author. A batch still planning plans again from the new list.
 * The delivery playing now is the caller's.
 */
export function withdrawFrom(g: AudienceQueue, choose: Choose, reason: unknown): Withdrawal {
  const done: Withdrawal = { removed: [], replaced: [] };
  const apply = (items: readonly Utterance[]) => {
    let by: string | undefined;
    const kept: Utterance[] = [];
    for (const u of items) {
      const next = choose(u);
      if (next === undefined || next === u) {
        kept.push(u);
        continue;
      }
      by ??= u.userId;
      if (next === null) {
        done.removed.push(u);
      } else {
        kept.push(next);
        done.replaced.push(next);
      }
    }
    return { kept, changed: by !== undefined, by };
  };
  const front: Utterance[] = [];
  // The others of a discarded request that was paid for (or may have been, while it was being made): `reask`.
  const again = (kept: Utterance[], paid: boolean, by: string | undefined) => reask(kept, paid, by, done.replaced);
  const paidAudio = (r: ReadyUtterance) => r.audio !== undefined && !r.audio.fromCache;
  const playing = g.playing;
  if (playing) {
    const upcoming: ReadyUtterance[] = [];
    for (const result of playing.state.upcoming) {
      const { kept, changed, by } = apply(result.items);
      if (!changed) {
        upcoming.push(result);
        continue;
      }
      front.push(...again(kept, paidAudio(result), by));
    }
    // The discarded results' clips are let go by the slot.
    if (upcoming.length !== playing.state.upcoming.length) playing.keepUpcoming(upcoming);
  }
  for (const slot of [...g.slots]) {
    const state = slot.state;
    if (state.status !== 'synthesizing' && state.status !== 'ready') continue;
    const { kept, changed, by } = apply(state.items);
    if (!changed) continue;
    g.drop(slot, reason);
    front.push(...again(kept, state.status === 'synthesizing' || state.results.some(paidAudio), by));
  }
  const pending = apply(g.pending);
  if (front.length > 0 || pending.changed) {
    g.replacePending(pending.kept);
    g.putFirst(front, reason);
  }
  return done;
}
