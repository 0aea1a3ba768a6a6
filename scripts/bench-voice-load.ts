// Part of `npm run bench:voice` (scripts/bench-voice.ts): the IPC helper for its child processes and
// the load runs (guilds speaking at once), with their table.
import { spawn, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';

const epochNow = () => performance.timeOrigin + performance.now();

/** The p-th percentile (nearest rank); NaN when empty. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

/** A child process answering {id, cmd} requests with {id, ...}; other messages go to `onOther`. */
export class Child {
  readonly child: ChildProcess;
  #next = 0;
  readonly #pending = new Map<number, { resolve: (m: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  onOther: (message: Record<string, unknown>) => void = () => {};

  constructor(child: ChildProcess) {
    this.child = child;
    child.on('message', (m: Record<string, unknown>) => {
      const waiter = typeof m.id === 'number' ? this.#pending.get(m.id) : undefined;
      if (!waiter) return this.onOther(m);
      this.#pending.delete(m.id as number);
      if (typeof m.error === 'string') waiter.reject(new Error(m.error));
      else waiter.resolve(m);
    });
  }

  ask<T = Record<string, unknown>>(cmd: string, body: object = {}): Promise<T> {
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (m: Record<string, unknown>) => void, reject });
      this.child.send({ id, cmd, ...body });
    });
  }

  /** The next message that `pick` accepts. */
  next<T>(pick: (m: Record<string, unknown>) => T | undefined): Promise<T> {
    return new Promise((resolve) => {
      const listener = (m: Record<string, unknown>) => {
        const picked = pick(m);
        if (picked === undefined) return;
        this.child.off('message', listener);
        resolve(picked);
      };
      this.child.on('message', listener);
    });
  }

  exited(): Promise<void> {
    return new Promise((resolve) => (this.child.exitCode !== null ? resolve() : this.child.once('exit', () => resolve())));
  }
}

export interface LoadResult {
  /** Where the bot ran voice: 'workers' (VOICE_WORKERS) or 'main' (VOICE_WORKERS=0, the design before). */
  design: string;
  /** The bot's main thread was kept busy 50 ms out of every 500 during the run. */
  stressed: boolean;
  guilds: number;
  streams: number;
  intervals: number;
  p50: number;
  p99: number;
  max: number;
  overlapMs: number;
  overlapP99: number;
  worstStreamP99: number;
  /** The worst stream's p99 interval within the stretch when every stream was playing. */
  overlapWorstStreamP99: number;
  e2ee: number;
  plain: number;
  undecryptable: number;
  /** Packets missing from the streams' RTP sequences. */
  lost: number;
  bot: { cpuPercent: number; loopDelayP99Ms: number; loopDelayMaxMs: number; peakRss: number; gcMs: number; gcMaxMs: number };
  serverLoopDelayP99Ms: number;
  /** The voice server's work per packet (transport decryption, DAVE for the listeners, checks), in microseconds. */
  serverPerPacketUs: number;
  /** The voice server's garbage collection pauses while it timed the run: total and longest. */
  serverGc: { totalMs: number; maxMs: number };
  loadAvg: number;
  /** p99 interval of a bare 20 ms timer loop in another process during the run (the machine's floor). */
  floorP99: number;
}

interface StreamReport {
  arrivals: number[];
  audible: number;
  e2ee: number;
  plain: number;
  undecryptable: number;
  speakingOffAt: number;
  lost: number;
}

/**
 * `guildIds` get the same (cached) long message at the same moment (`send`); the server times every
 * packet, and a bare 20 ms timer loop in a process of its own shows the machine's own jitter meanwhile.
 */
export async function loadRun(
  server: Child,
  bot: { load<T>(start: boolean): Promise<T> },
  guildIds: string[],
  send: () => Promise<unknown>,
): Promise<Omit<LoadResult, 'design' | 'stressed'>> {
  const since = epochNow();
  await server.ask('record', { since });
  await bot.load<string>(true);
  const floor = startTimerFloor();
  const ended = server.ask('streamsEnded', { guildIds, after: since });
  await send();
  await ended;
  const floorIntervals = await floor();
  const botLoad = await bot.load<LoadResult['bot']>(false);
  const report = await server.ask<{
    streams: Record<string, StreamReport>;
    loopDelayP99Ms: number;
    perPacketUs: number;
    gc: LoadResult['serverGc'];
  }>('report');
  const streams = Object.values(report.streams).filter((s) => s.arrivals.length > 1);
  const intervals = streams.flatMap((s) => s.arrivals.slice(1).map((t, i) => t - s.arrivals[i]!));
  // The stretch when every stream was playing: from the last first packet to the first last packet.
  const from = streams.reduce((m, s) => Math.max(m, s.arrivals[0]!), 0);
  if (process.env.BENCH_DEBUG) {
    const f = streams.map((s) => s.arrivals[0]! - since).sort((a, b) => a - b);
    const l = streams.map((s) => s.arrivals.at(-1)! - since).sort((a, b) => a - b);
    const ms = (x: number | undefined) => `${(x ?? Number.NaN).toFixed(0)} ms`;
    console.error(`streams started ${ms(f[0])} to ${ms(f.at(-1))} after the messages, ended ${ms(l[0])} to ${ms(l.at(-1))}`);
  }
  const to = streams.reduce((m, s) => Math.min(m, s.arrivals.at(-1)!), Number.POSITIVE_INFINITY);
  const inOverlap = (s: StreamReport) =>
    s.arrivals.slice(1).flatMap((t, i) => (s.arrivals[i]! >= from && t <= to ? [t - s.arrivals[i]!] : []));
  const overlap = streams.flatMap(inOverlap);
  const perStreamOverlap = to > from ? streams.map((s) => percentile(inOverlap(s), 99)).filter((x) => Number.isFinite(x)) : [];
  const perStream = streams.map((s) =>
    percentile(
      s.arrivals.slice(1).map((t, i) => t - s.arrivals[i]!),
      99,
    ),
  );
  return {
    guilds: guildIds.length,
    streams: streams.length,
    intervals: intervals.length,
    p50: percentile(intervals, 50),
    p99: percentile(intervals, 99),
    max: intervals.reduce((m, x) => Math.max(m, x), 0),
    overlapMs: Math.max(0, to - from),
    overlapP99: percentile(overlap, 99),
    worstStreamP99: perStream.reduce((m, x) => Math.max(m, x), 0),
    overlapWorstStreamP99: perStreamOverlap.reduce((m, x) => Math.max(m, x), 0),
    e2ee: streams.reduce((n, s) => n + s.e2ee, 0),
    plain: streams.reduce((n, s) => n + s.plain, 0),
    undecryptable: streams.reduce((n, s) => n + s.undecryptable, 0),
    lost: streams.reduce((n, s) => n + s.lost, 0),
    bot: botLoad,
    serverLoopDelayP99Ms: report.loopDelayP99Ms,
    serverPerPacketUs: report.perPacketUs,
    serverGc: report.gc,
    loadAvg: loadavg()[0]!,
    floorP99: percentile(floorIntervals, 99),
  };
}

// The loop @discordjs/voice runs (a 20 ms step, each scheduled from the planned time, so a late step
// is caught up), doing nothing else: what a stream's intervals cannot beat on this machine right now.
const TIMER_LOOP = `const t = []; let next = performance.now() + 20; let timer;
const step = () => { t.push(performance.now()); next += 20; timer = setTimeout(step, Math.max(0, next - performance.now())); };
timer = setTimeout(step, 20);
process.stdin.on('end', () => { clearTimeout(timer); process.stdout.write(JSON.stringify(t.slice(1).map((v, i) => v - t[i]))); });
process.stdin.resume();`;

/** Starts the bare timer loop in a process of its own; the function returned stops it and gives its intervals. */
function startTimerFloor(): () => Promise<number[]> {
  const child = spawn(process.execPath, ['-e', TIMER_LOOP], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return () => {
    child.stdin.end();
    return new Promise((resolve) => child.once('close', () => resolve(out ? (JSON.parse(out) as number[]) : [])));
  };
}

export function printLoadHeader(): void {
  console.log(
    '\nguilds speaking at once (one bot process, DAVE on, voice server in its own process); packet intervals per stream at the voice server:',
  );
  console.log(
    'design  | stressed | guilds | intervals (lost) | p50 ms | p99 ms | max ms | all-playing p99 (span) | worst stream p99 (all-playing) | bot CPU | bot loop delay p99/max | bot GC total/max | bot peak RSS | server loop p99, GC total/max (work per packet) | bare timer p99 | load avg',
  );
}

export function printLoadRow(r: LoadResult): void {
  const mb = (b: number) => b / 1024 / 1024;
  console.log(
    `${r.design.padEnd(7)} | ${(r.stressed ? 'yes' : 'no').padEnd(8)} | ${String(r.guilds).padStart(6)} | ${String(r.intervals).padStart(9)} (${r.lost}) | ${r.p50.toFixed(1).padStart(6)} | ${r.p99.toFixed(1).padStart(6)} | ${r.max.toFixed(1).padStart(6)} | ` +
      `${r.overlapMs > 0 ? `${r.overlapP99.toFixed(1)} ms` : 'none'} (${(r.overlapMs / 1000).toFixed(1)} s) | ${r.worstStreamP99.toFixed(1)} ms (${r.overlapMs > 0 ? `${r.overlapWorstStreamP99.toFixed(1)} ms` : 'none'}) | ${r.bot.cpuPercent.toFixed(0)}% | ` +
      `${r.bot.loopDelayP99Ms.toFixed(1)}/${r.bot.loopDelayMaxMs.toFixed(1)} ms | ${r.bot.gcMs.toFixed(0)}/${r.bot.gcMaxMs.toFixed(1)} ms | ${mb(r.bot.peakRss).toFixed(0)} MB | ${r.serverLoopDelayP99Ms.toFixed(1)} ms, ${r.serverGc.totalMs.toFixed(0)}/${r.serverGc.maxMs.toFixed(1)} ms (${r.serverPerPacketUs.toFixed(0)} µs) | ${r.floorP99.toFixed(1)} ms | ${r.loadAvg.toFixed(2)}`,
  );
  if (r.streams !== r.guilds) console.log(`  only ${r.streams} of ${r.guilds} streams were heard`);
  if (r.plain > 0 || r.undecryptable > 0)
    console.log(`  DAVE: ${r.plain} audible frames were not end-to-end encrypted, ${r.undecryptable} undecryptable`);
}
