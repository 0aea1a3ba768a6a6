import { EventEmitter } from 'node:events';
import type { ReadyAudio } from '../synthesis/synthesize.ts';
import { cutReady } from './clips.ts';
import type { ReadyUtterance, Utterance } from './utterance.ts';

// One batch started from an audience's queue, after @discordjs/voice's AudioPlayer: a state union
// whose transitions are its own methods, through one setter that lets go of the clips the old state
// held and the new one does not, and emits `stateChange`.

/** A batch started from the queue, from the wait for its grant to the end of its delivery. */
export type SlotState =
  /** Waiting for a grant: nothing is taken from the queue yet. */
  | { readonly status: 'planning'; readonly controller: AbortController }
  /**
   * Its utterances taken, its requests under way; `estimateMs`: the audio length expected;
   * `paidCutMs`: the staleness cut its clips are held to when they play (keeping up's cut when it
   * was formed and paid for: dropping audio already paid for would only waste its characters).
   */
  | {
      readonly status: 'synthesizing';
      readonly controller: AbortController;
      readonly items: readonly Utterance[];
      readonly estimateMs: number;
      readonly paidCutMs: number;
    }
  /** Its deliveries made (spoken audio, or failures to tell), waiting for their turn. */
  | {
      readonly status: 'ready';
      readonly items: readonly Utterance[];
      readonly results: readonly ReadyUtterance[];
      readonly paidCutMs: number;
    }
  /** Being delivered: `upcoming` not started, `current` in the sink now (`playing`: what it still counts as read). */
  | {
      readonly status: 'playing';
      readonly items: readonly Utterance[];
      readonly upcoming: readonly ReadyUtterance[];
      readonly current: Playing | null;
      readonly paidCutMs: number;
    }
  /** Out of its queue (delivered, cleared, withdrawn, closed): it holds nothing. */
  | { readonly status: 'done' };

/** The delivery in the sink now. */
export interface Playing {
  readonly ready: ReadyUtterance;
  readonly controller: AbortController;
  /** When it is expected to end (clock time). */
  readonly until: number;
  /** Its utterances still counted as read by it (a withdrawal sends the ones not started back to the queue). */
  readonly playing: readonly Utterance[];
}

/** The clips (leaf audio: a sequence's parts) a state holds pinned until they are played or dropped. */
function heldClips(s: SlotState): Set<ReadyAudio> {
  const held = new Set<ReadyAudio>();
  const add = (r: ReadyUtterance | undefined) => {
    if (r?.audio) for (const a of r.audio.parts ?? [r.audio]) held.add(a);
  };
  if (s.status === 'ready') s.results.forEach(add);
  if (s.status === 'playing') {
    s.upcoming.forEach(add);
    add(s.current?.ready);
  }
  return held;
}

/** What a delivery started by `Slot.startNext` is: what plays (null: the cut dropped all of it) and what the cut dropped. */
interface Started {
  ready: ReadyUtterance | null;
  dropped: Utterance[];
  controller?: AbortController;
}

/**
 * One batch. Its state is read-only from outside: each transition is a method, and the one setter
 * (`#set`) releases every clip the old state held that the new one does not (so a clip is let go
 * exactly when nothing of the batch will play it any more, whichever way it leaves), then emits
 * `stateChange` (old, new).
 */
export class Slot extends EventEmitter<{ stateChange: [SlotState, SlotState] }> {
  #state: SlotState = { status: 'planning', controller: new AbortController() };

  get state(): SlotState {
    return this.#state;
  }

  #set(next: SlotState): void {
    const old = this.#state;
    this.#state = next;
    const kept = heldClips(next);
    for (const a of heldClips(old)) if (!kept.has(a)) a.release?.();
    this.emit('stateChange', old, next);
  }

  /** planning -> synthesizing: its utterances are taken, its requests go out (under the same controller). */
  synthesizing(items: readonly Utterance[], estimateMs: number, paidCutMs: number): void {
    const s = this.#state;
    if (s.status !== 'planning') return;
    this.#set({ status: 'synthesizing', controller: s.controller, items, estimateMs, paidCutMs });
  }

  /**
   * synthesizing -> ready with `results`. A slot no longer synthesising (cleared, withdrawn or closed
   * meanwhile) takes them only to let their audio go: false.
   */
  ready(results: readonly ReadyUtterance[]): boolean {
    const s = this.#state;
    if (s.status !== 'synthesizing') {
      for (const a of heldClips({ status: 'ready', items: [], results, paidCutMs: 0 })) a.release?.();
      return false;
    }
    this.#set({ status: 'ready', items: s.items, results, paidCutMs: s.paidCutMs });
    return true;
  }

  /** ready -> playing: its results are upcoming, nothing in the sink yet. */
  play(): void {
    const s = this.#state;
    if (s.status !== 'ready') return;
    this.#set({ status: 'playing', items: s.items, upcoming: s.results, current: null, paidCutMs: s.paidCutMs });
  }

  /**
   * Takes the next upcoming result into the sink at `now`, cut at the moment of speaking to the
   * batch's paid cut (clips.ts `cutReady`): the clips the cut dropped are let go here.
   * Undefined: not playing, or nothing upcoming.
   */
  startNext(now: number): Started | undefined {
    const s = this.#state;
    if (s.status !== 'playing') return undefined;
    const [result, ...upcoming] = s.upcoming;
    if (!result) return undefined;
    const cut = cutReady(result, now, s.paidCutMs);
    if (!cut.ready) {
      this.#set({ ...s, upcoming, current: null });
      return { ready: null, dropped: cut.dropped };
    }
    const controller = new AbortController();
    const until = now + (cut.ready.audio?.durationMs ?? 0);
    this.#set({ ...s, upcoming, current: { ready: cut.ready, controller, until, playing: cut.ready.items } });
    return { ready: cut.ready, dropped: cut.dropped, controller };
  }

  /** The delivery in the sink settled: its clips are let go; returns the utterances it still counted as read. */
  delivered(): readonly Utterance[] {
    const s = this.#state;
    if (s.status !== 'playing') return [];
    const played = s.current?.playing ?? [];
    this.#set({ ...s, current: null });
    return played;
  }

  /** Stops the delivery in the sink with `reason`; `back` (not started, sent back to the queue) no longer counts as read by it. */
  stopCurrent(reason: unknown, back: readonly Utterance[]): void {
    const s = this.#state;
    if (s.status !== 'playing' || !s.current) return;
    const current = s.current;
    current.controller.abort(reason);
    this.#set({ ...s, current: { ...current, playing: current.playing.filter((u) => !back.includes(u)) } });
  }

  /** While playing: only `kept` of the upcoming results stay (the others' clips are let go). */
  keepUpcoming(kept: readonly ReadyUtterance[]): void {
    const s = this.#state;
    if (s.status !== 'playing') return;
    this.#set({ ...s, upcoming: kept });
  }

  /** Aborts the delivery in the sink (skip, close); changes no state. Whether there was one not aborted yet. */
  stopDelivery(reason: unknown): boolean {
    const s = this.#state;
    const current = s.status === 'playing' ? s.current : null;
    if (!current || current.controller.signal.aborted) return false;
    current.controller.abort(reason);
    return true;
  }

  /** Leaves its queue with nothing under way (it formed nothing, or its deliveries are done). */
  retire(): void {
    if (this.#state.status !== 'done') this.#set({ status: 'done' });
  }

  /** Stops whatever it has under way (a request, a wait for a grant, the delivery in the sink), then leaves: its clips are let go. */
  discard(reason: unknown): void {
    const s = this.#state;
    if (s.status === 'planning' || s.status === 'synthesizing') s.controller.abort(reason);
    else if (s.status === 'playing') s.current?.controller.abort(reason);
    this.retire();
  }
}
