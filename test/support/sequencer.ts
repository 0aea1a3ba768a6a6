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
 * file-durations.json (`npm run bench:suite -- --record`), else a second.
 */
import { join, relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { recordedDurations } from './file-durations.ts';

const ROOT = join(import.meta.dirname, '..', '..');
/** A file expected to take at least this long counts as long (they wait on real time). */
const LONG_S = 5;
/** The expected duration of a file never timed. */
const UNKNOWN_S = 1;

/**
 * `files` in the order to start them with `workers` at once: the pool played forward, a free worker
 * taking the longest waiting long file while fewer than `longSlots` long files run, else the next
 * short one (in `files`' order), a long one when no short one is left.
 */
export function interleave<T>(files: { item: T; seconds: number }[], workers: number): T[] {
  const long = files.filter((f) => f.seconds >= LONG_S).sort((a, b) => b.seconds - a.seconds);
  const short = files.filter((f) => f.seconds < LONG_S);
  const total = (list: { seconds: number }[]) => list.reduce((s, f) => s + f.seconds, 0);
  // Long files get the share of the workers that lets them end when the short ones do.
  const share = total(long) / Math.max(total(files), 1e-9);
  const longSlots = Math.max(1, Math.min(workers, Math.round(workers * share)));
  const running: { end: number; long: boolean }[] = [];
  const order: T[] = [];
  let now = 0;
  while (long.length > 0 || short.length > 0) {
    while (running.length < workers && (long.length > 0 || short.length > 0)) {
      const runningLong = running.filter((r) => r.long).length;
      const takeLong = long.length > 0 && (runningLong < longSlots || short.length === 0);
      const next = takeLong ? long.shift()! : short.shift()!;
      running.push({ end: now + next.seconds, long: takeLong });
      order.push(next.item);
    }
    running.sort((a, b) => a.end - b.end);
    now = running.shift()!.end;
  }
  return order;
}

export default class InterleavingSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    // Vitest's order first (failed files first, then the longest, then the largest): the short files keep it.
    const sorted = await super.sort(files);
    const fromFile = recordedDurations();
    const cached = (spec: TestSpecification) => (this.ctx.cache.getTestSpecificationResult(spec)?.duration ?? 0) / 1000;
    const planned = sorted.map((spec) => ({
      item: spec,
      seconds: cached(spec) > 0 ? cached(spec) : (fromFile[relative(ROOT, spec.moduleId)] ?? UNKNOWN_S),
    }));
    return interleave(planned, this.ctx.config.maxWorkers);
  }
}
