import type { AudioPlayer } from '@discordjs/voice';

/** One Opus frame: what a voice packet carries. */
const FRAME_MS = 20;
/** Frames a late step sends at once to get back on schedule; a stall longer than this starts a new schedule. */
const MAX_CATCH_UP = 5;
/** How long before a step the timer wakes; the rest is waited precisely (Atomics.wait), not on the timer. */
const WAKE_EARLY_MS = 2;
/** Ticks the trace keeps (at 50 a second, 40 s). */
const TRACE_TICKS = 2_048;

/** A summary of the packet clock's recent ticks (see `PacketClock.trace`); milliseconds. */
export interface ClockTrace {
  ticks: number;
  /** Players stepped per tick: mean and most. */
  players: { mean: number; max: number };
  /** How late a tick began after its planned time. */
  late: { p50: number; p99: number; max: number };
  /** A tick's work: sending every prepared packet (dispatched and out on the socket), then preparing every next one (DAVE, AES-GCM). */
  dispatch: { p50: number; p99: number; max: number };
  prepare: { p50: number; p99: number; max: number };
  /** Per packet, over every traced tick: sending and preparing, in microseconds. */
  perPacketUs: { dispatch: number; prepare: number };
}

/** The AudioPlayer methods the library's own 20 ms loop calls (internal, stable since 0.x; its tests call them too). */
interface SteppedPlayer {
  checkPlayable(): boolean;
  _stepDispatch(): void;
  _stepPrepare(): void;
}

/**
 * The packet clock of a voice worker: every player it paces sends one packet per 20 ms step, the
 * steps planned on the monotonic clock (performance.now, never Date.now) from when the clock
 * started. A step that comes late sends the packets it owes at once (catch-up, up to
 * MAX_CATCH_UP frames) instead of shifting every later packet; the timer wakes a little early and
 * the last milliseconds are waited precisely, so timer jitter does not become packet jitter.
 *
 * @discordjs/voice drives every player from one module-wide loop (setTimeout against Date.now);
 * a paced player is taken out of that loop (its checkPlayable answers false there) and stepped
 * here with the library's own methods, so its states, silence frames and events stay the library's.
 */
export class PacketClock {
  readonly #players = new Set<AudioPlayer>();
  readonly #checkPlayable = new WeakMap<AudioPlayer, () => boolean>();
  #timer: NodeJS.Timeout | undefined;
  /** performance.now() of the next step. */
  #next = 0;
  readonly #sleeper = new Int32Array(new SharedArrayBuffer(4));
  /** The players that were playing at the last step. */
  #playing = new WeakSet<AudioPlayer>();
  /** Steps taken, steps caught up (sent late but in a burst) and schedules restarted after a long stall. */
  readonly stats = { steps: 0, caughtUp: 0, restarts: 0 };
  /**
   * The last TRACE_TICKS ticks, for a benchmark (`trace()`): how late each began after its planned
   * time, how long sending the prepared packets and preparing the next ones took, and how many
   * players stepped. Typed arrays written in place: tracing allocates nothing.
   */
  readonly #trace = {
    late: new Float64Array(TRACE_TICKS),
    dispatch: new Float64Array(TRACE_TICKS),
    prepare: new Float64Array(TRACE_TICKS),
    players: new Uint16Array(TRACE_TICKS),
    ticks: 0,
  };

  /** Paces `player` from now on (until `remove`). */
  add(player: AudioPlayer): void {
    if (this.#players.has(player)) return;
    const stepped = player as unknown as SteppedPlayer;
    this.#checkPlayable.set(player, stepped.checkPlayable.bind(player));
    // The library's loop asks this before stepping a player: never, for one paced here.
    stepped.checkPlayable = () => false;
    this.#players.add(player);
    if (this.#players.size === 1) {
      // The first step at once, as the library's loop does; then every 20 ms from it.
      this.#next = performance.now();
      this.#schedule();
    }
  }

  /**
   * A paced player's clip just became readable (Buffering to Playing): its first packet is
   * prepared now, so the next step sends it, instead of preparing it at the next step and
   * sending it at the one after (20 ms sooner to the first packet).
   */
  prime(player: AudioPlayer): void {
    queueMicrotask(() => {
      if (this.#players.has(player) && player.state.status === 'playing') (player as unknown as SteppedPlayer)._stepPrepare();
    });
  }

  remove(player: AudioPlayer): void {
    if (!this.#players.delete(player)) return;
    const own = this.#checkPlayable.get(player);
    if (own) (player as unknown as SteppedPlayer).checkPlayable = own;
    if (this.#players.size === 0) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
  }

  get size(): number {
    return this.#players.size;
  }

  #schedule(): void {
    const wait = this.#next - performance.now() - WAKE_EARLY_MS;
    this.#timer = setTimeout(this.#tick, Math.max(0, wait));
  }

  readonly #tick = (): void => {
    this.#timer = undefined;
    if (this.#players.size === 0) return;
    // The last stretch before the step, waited precisely (a worker may block; it is at most a few ms).
    const early = this.#next - performance.now();
    if (early > 0) Atomics.wait(this.#sleeper, 0, 0, early);
    let owed = Math.max(1, Math.floor((performance.now() - this.#next) / FRAME_MS) + 1);
    if (owed > MAX_CATCH_UP) {
      // Too long a stall to send what it owes at once: start a new schedule from now.
      this.stats.restarts++;
      this.#next = performance.now();
      owed = 1;
    }
    if (owed > 1) this.stats.caughtUp += owed - 1;
    const slot = this.#trace.ticks++ % TRACE_TICKS;
    this.#trace.late[slot] = performance.now() - this.#next;
    this.#trace.dispatch[slot] = 0;
    this.#trace.prepare[slot] = 0;
    this.#trace.players[slot] = 0;
    for (let i = 0; i < owed; i++) {
      this.#step(i < owed - 1, slot);
      this.#next += FRAME_MS;
    }
    // The timer is set now; the last step's preparing (queued behind its sends) runs before it can fire.
    if (this.#players.size > 0) this.#schedule();
  };

  /**
   * One step of every player, as the library's loop does: send what each prepared, then prepare
   * the next. A catch-up step is only for the players that were playing at the step before (one
   * that just started owes nothing) and have their next frame ready: a clip decoded as it plays
   * (a cache miss) makes its frames a few at a time, and a frame asked for before it is made
   * would be sent as silence in the middle of the speech.
   */
  #step(catchUp: boolean, slot: number): void {
    this.stats.steps++;
    const playable: SteppedPlayer[] = [];
    for (const player of this.#players) {
      if (catchUp && !(this.#playing.has(player) && hasFrameReady(player))) continue;
      if (this.#checkPlayable.get(player)!()) playable.push(player as unknown as SteppedPlayer);
    }
    const start = performance.now();
    for (const player of playable) player._stepDispatch();
    this.#trace.players[slot]! += playable.length;
    if (!catchUp) this.#playing = new WeakSet(playable as unknown as AudioPlayer[]);
    const prepare = () => {
      const prepared = performance.now();
      for (const player of playable) player._stepPrepare();
      this.#trace.dispatch[slot]! += prepared - start;
      this.#trace.prepare[slot]! += performance.now() - prepared;
    };
    // A packet sent to an address (as @discordjs/voice sends) leaves on process.nextTick, after its
    // address lookup: the packets just dispatched go out only once this callback returns. Preparing
    // the next ones (DAVE and AES-GCM for every call: 2-3 ms for 200 calls, up to 10 ms with a GC
    // pause) is queued behind them, so they leave at the step's time, not after the preparing. A
    // catch-up step prepares at once: the step after it sends what it prepares.
    if (catchUp) prepare();
    else process.nextTick(prepare);
  }

  /** The traced ticks (the last TRACE_TICKS) in which a player stepped, summarised; undefined when none did. */
  trace(): ClockTrace | undefined {
    const t = this.#trace;
    const kept = Math.min(t.ticks, TRACE_TICKS);
    const busy = Array.from({ length: kept }, (_, i) => i).filter((i) => t.players[i]! > 0);
    if (busy.length === 0) return undefined;
    const summary = (values: Float64Array) => {
      const sorted = busy.map((i) => values[i]!).sort((a, b) => a - b);
      const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
      return { p50: at(0.5), p99: at(0.99), max: sorted.at(-1)! };
    };
    const packets = busy.reduce((n, i) => n + t.players[i]!, 0);
    const total = (values: Float64Array) => busy.reduce((n, i) => n + values[i]!, 0);
    return {
      ticks: busy.length,
      players: { mean: packets / busy.length, max: busy.reduce((m, i) => Math.max(m, t.players[i]!), 0) },
      late: summary(t.late),
      dispatch: summary(t.dispatch),
      prepare: summary(t.prepare),
      perPacketUs: { dispatch: (total(t.dispatch) * 1000) / packets, prepare: (total(t.prepare) * 1000) / packets },
    };
  }

  /** Forgets the traced ticks (a benchmark starts a run). */
  resetTrace(): void {
    this.#trace.ticks = 0;
  }
}

/** Whether `player` is playing and its clip has a frame waiting to be read (no read would come back empty). */
function hasFrameReady(player: AudioPlayer): boolean {
  const state = player.state;
  return state.status === 'playing' && state.resource.playStream.readableLength > 0;
}
