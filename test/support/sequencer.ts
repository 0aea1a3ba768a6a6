/**
 * The order test files start in (vitest.config.ts `sequence.sequencer`): how fast the suite runs,
 * nothing of what it checks.
 *
 * Most of the long files wait on real time (audio played in real time, a bot started as a child
 * process, injected latency) while the short ones keep a core busy. Vitest's own order starts the
 * longest first, so every worker waits at once at the start (both cores half idle for about ten
 * seconds) and the CPU-bound files crowd the end. This order plays the pool forward on each file's
 * expected duration and starts a long file only while fewer than their share of the workers run
 * one, so waiting and computing overlap for the whole run.
 *
 * Expected durations: this checkout's last run (vitest's results cache), else the run recorded in
 * file-durations.json (`npm run bench:suite -- --record`), else (a file added since) the longest of
 * its folder's (`expectedSeconds`), else a second.
 */
import { dirname, join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { recordedDurations } from './file-durations.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** A file expected to take at least this long counts as long (they wait on real time). */
const LONG_S = 5;
/** The expected duration of a file never timed. */
const UNKNOWN_S = 1;

/**
 * `files` in the order to start them with `workers` at once: the pool played forward, a free worker
 * taking the longest waiting long file while fewer than `longSlots` long files run (or when it
 * would otherwise end after everything else), else the longest waiting short one, a long one when
 * no short one is left. Short files go longest first, so the run ends on the shortest ones.
 */
export function interleave<T>(files: { item: T; seconds: number }[], workers: number): T[] {
  // Sorts are stable: files of equal (or unknown) duration keep the order they were given.
  const long = files.filter((f) => f.seconds >= LONG_S).sort((a, b) => b.seconds - a.seconds);
  const short = files.filter((f) => f.seconds < LONG_S).sort((a, b) => b.seconds - a.seconds);
  const total = (list: { seconds: number }[]) => list.reduce((s, f) => s + f.seconds, 0);
  // Long files get the share of the workers that lets them end when the short ones do.
  const share = total(long) / Math.max(total(files), 1e-9);
  const longSlots = Math.max(1, Math.min(workers, Math.round(workers * share)));
  const running: { end: number; long: boolean }[] = [];
  const order: T[] = [];
  let now = 0;
  let waiting = total(files);
  while (long.length > 0 || short.length > 0) {
    while (running.length < workers && (long.length > 0 || short.length > 0)) {
      const runningLong = running.filter((r) => r.long).length;
      // A long file that would end after all the work left, spread over every worker, starts now
      // beyond its slots (else it ends the run alone, late), leaving one worker to the short files.
      const busy = running.reduce((s, r) => s + r.end - now, 0);
      const due = long.length > 0 && long[0]!.seconds >= (waiting + busy) / workers && runningLong < workers - 1;
      const takeLong = long.length > 0 && (runningLong < longSlots || short.length === 0 || due);
      const next = takeLong ? long.shift()! : short.shift()!;
      waiting -= next.seconds;
      running.push({ end: now + next.seconds, long: takeLong });
      order.push(next.item);
    }
    running.sort((a, b) => a.end - b.end);
    now = running.shift()!.end;
  }
  return order;
}

/**
 * The seconds `file` (a path from the repository root) is expected to take: as recorded, else (a
 * file added since) as long as the longest recorded file of its folder, so that a new whole-bot
 * story starts among the first instead of ending the run late (a new short file started early
 * costs nothing), else UNKNOWN_S.
 */
export function expectedSeconds(file: string, recorded: Record<string, number>): number {
  const own = recorded[file];
  if (own !== undefined) return own;
  const folder = dirname(file);
  const near = Object.entries(recorded).filter(([f]) => dirname(f) === folder);
  return near.length > 0 ? Math.max(...near.map(([, s]) => s)) : UNKNOWN_S;
}

export default class InterleavingSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Vitest's order first (failed files first, then the longest, then the largest): files of equal expected length keep it.
    const sorted = await super.sort(files);
    const fromFile = recordedDurations();
    const cached = (spec: TestSpecification) => (this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? 0) / 1000;
    const planned = sorted.map((spec) => ({
      item: spec,
      seconds: cached(spec) > 0 ? cached(spec) : expectedSeconds(relative(ROOT, spec.moduleId), fromFile),
    }));
    return interleave(planned, this.ctx.config.maxWorkers);
  }
}
