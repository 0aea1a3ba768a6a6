// `npm run bench:recovery`: how fast speech comes back after the voice worker fails, through the
// bot as `npm start` runs it (a child process) with two accounts in two calls of one server, both
// in one voice worker, against the local Discord, its voice server (DAVE, a listener in each call)
// and the emulator (test/support/recovery-world.ts). Each trial says a long line in each call,
// makes the worker crash (or hang) for real once both calls speak (YOMIAGE_TEST_VOICE_FAULTS,
// tests and benchmarks only), and measures per call the time from the fault to the first sound of
// the call's new voice session. Also checks each trial's line: heard whole exactly once (again
// from its start), not lost, not twice.
// Target (the issue's): speech back in both calls within 5 s of the fault, p95 over 10 trials of
// each kind. Each fault comes at least SPACING_MS after the one before: a worker that failed within
// 10 s of its start is a crash loop, restarted after a growing pause (src/voice/worker-pool.ts),
// which is not what is measured here. The queue kept behind the cut line is the story's to check
// (test/bot/npm-start-voice-recovery.test.ts): here each call says one long line per trial. Prints PASS/MISS; asserts nothing (shared machine). BENCH_TRIALS
// (10) changes the count.
import { loadavg } from 'node:os';
import { startRecoveryWorld, type CallOutcome } from '../test/support/recovery-world.ts';

const TRIALS = Number(process.env.BENCH_TRIALS ?? 10);
const TARGET_MS = 5_000;
/** Over the pool's `stableAfterMs` (10 s). */
const SPACING_MS = 15_000;
/**
 * One line of about 4 s per call: one request each, so the trials stay well under the 15 grants a
 * minute beyond which the bot paces its requests (a call whose line waits for its grant would not be
 * speaking when the fault comes).
 */
const TRIAL = { long: 1, repeat: 2, short: false } as const;

function percentile(values: number[], p: number): number {
  const sorted = values.toSorted((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const world = await startRecoveryWorld();
console.log(
  `bench:recovery, ${TRIALS} trials of each fault, 2 calls each, 1 voice worker; load ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
let failed = false;
let lastFault = 0;
try {
  for (const kind of ['crash', 'hang'] as const) {
    const resumed: number[] = [];
    const problems: string[] = [];
    for (let trial = 1; trial <= TRIALS; trial++) {
      const wait = lastFault + SPACING_MS - Date.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
      lastFault = Date.now();
      let outcomes: CallOutcome[];
      try {
        outcomes = await world.trial(kind, TRIAL);
      } catch (error) {
        problems.push(`trial ${trial}: ${(error as Error).message}`);
        console.log(`  ${kind} ${String(trial).padStart(2)}: ${(error as Error).message}`);
        continue;
      }
      for (const o of outcomes) {
        if (o.resumedMs === undefined) problems.push(`trial ${trial} ${o.call}: never resumed`);
        else resumed.push(o.resumedMs);
        const lost = o.wholeTimes.filter((n) => n === 0).length;
        const twice = o.wholeTimes.filter((n) => n > 1).length;
        if (lost > 0) problems.push(`trial ${trial} ${o.call}: ${lost} of ${o.requests.length} requests never heard whole`);
        if (twice > 0) problems.push(`trial ${trial} ${o.call}: ${twice} requests heard whole more than once`);
        if (o.partial.length > 1)
          problems.push(`trial ${trial} ${o.call}: ${o.partial.length} partial utterances (${o.partial.join(', ')} ms)`);
        if (o.e2ee.length > 0) problems.push(`trial ${trial} ${o.call}: ${o.e2ee.join('; ')}`);
      }
      const line = outcomes.map((o) => `${o.call} ${o.resumedMs === undefined ? 'never' : `${Math.round(o.resumedMs)} ms`}`).join(', ');
      console.log(`  ${kind} ${String(trial).padStart(2)}: speech back in ${line}`);
    }
    const p95 = resumed.length > 0 ? percentile(resumed, 95) : Infinity;
    const p50 = resumed.length > 0 ? percentile(resumed, 50) : Infinity;
    const ok = p95 <= TARGET_MS && problems.length === 0 && resumed.length === TRIALS * 2;
    failed ||= !ok;
    console.log(
      `${kind}: ${resumed.length} resumptions, p50 ${Math.round(p50)} ms, p95 ${Math.round(p95)} ms, max ${Math.round(Math.max(...resumed))} ms ` +
        `(target p95 <= ${TARGET_MS} ms, nothing lost or heard twice): ${ok ? 'PASS' : 'MISS'}`,
    );
    for (const p of problems) console.log(`  ${p}`);
  }
  const metrics = await (await fetch(`${world.metricsUrl}/metrics`)).text();
  console.log(
    metrics
      .split('\n')
      .filter((l) => l.startsWith('yomiage_voice_recoveries_total{'))
      .join('\n'),
  );
} finally {
  await world.close();
}
console.log(
  `load after: ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
process.exitCode = failed ? 1 : 0;
