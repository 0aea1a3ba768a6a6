// `npm run bench:suite`: how long the whole test suite (`npm test`) takes on this machine, against
// the target of under 60 s on 2 cores. Runs vitest as `npm test` does (the project's
// config), `--runs N` times (default 1), and prints each run's wall time, the CPU time of vitest and
// everything it started (workers, child bots, ffmpeg; Linux only), and the test counts. `--fresh`
// clears vitest's result cache (which orders the files, longest first) and Node's compile cache
// before each run, as on a fresh clone in CI. `--record` writes each file's duration in the last
// run to test/support/file-durations.json, which orders the files on a checkout that has no results
// of its own (test/support/sequencer.ts). `--workers N` runs N files at once instead of the config's
// maxWorkers (how the wall time depends on it). Prints numbers; asserts nothing (shared machine).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { DURATIONS_FILE, type RecordedDurations } from '../test/support/file-durations.ts';

const TARGET_S = 60;
const ROOT = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '1' },
    fresh: { type: 'boolean', default: false },
    record: { type: 'boolean', default: false },
    workers: { type: 'string' },
  },
});
const runs = Number(values.runs);
if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a whole number of at least 1 (got ${values.runs})`);
const workers = values.workers === undefined ? undefined : Number(values.workers);
if (workers !== undefined && (!Number.isInteger(workers) || workers < 1)) {
  throw new Error(`--workers must be a whole number of at least 1 (got ${values.workers})`);
}

/** CPU seconds of this process's waited-for descendants (Linux /proc: cutime + cstime, in clock ticks of 1/100 s). */
function childrenCpuSeconds(): number | undefined {
  if (!existsSync('/proc/self/stat')) return undefined;
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

interface Run {
  wallS: number;
  cpuS: number | undefined;
  passed: number;
  failed: number;
  /** The failing tests by file and name (a timing-sensitive test failing under load shows here). */
  failures: string[];
  /** Seconds each file took, by path from the repository root. */
  seconds: Record<string, number>;
}

async function runSuite(): Promise<Run> {
  if (values.fresh) {
    rmSync(join(ROOT, 'node_modules', '.vite', 'vitest'), { recursive: true, force: true });
    rmSync(join(ROOT, 'node_modules', '.cache', 'node-compile-cache'), { recursive: true, force: true });
  }
  const dir = mkdtempSync(join(tmpdir(), 'bench-suite-'));
  const report = join(dir, 'report.json');
  const cpuBefore = childrenCpuSeconds();
  const started = performance.now();
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [
        join(ROOT, 'node_modules', 'vitest', 'vitest.mjs'),
        'run',
        '--reporter=dot',
        '--reporter=json',
        `--outputFile.json=${report}`,
        ...(workers === undefined ? [] : [`--maxWorkers=${workers}`]),
      ],
      { cwd: ROOT, stdio: 'ignore' },
    );
    child.on('error', reject);
    child.on('close', resolve);
  });
  const wallS = (performance.now() - started) / 1000;
  const cpuAfter = childrenCpuSeconds();
  try {
    const json = JSON.parse(readFileSync(report, 'utf8')) as {
      numPassedTests: number;
      numFailedTests: number;
      testResults: {
        name: string;
        startTime: number;
        endTime: number;
        assertionResults: { fullName: string; status: string; failureMessages?: string[] }[];
      }[];
    };
    const failures = json.testResults.flatMap((file) =>
      file.assertionResults
        .filter((a) => a.status === 'failed')
        .map((a) => `${file.name.slice(ROOT.length + 1)} > ${a.fullName}: ${(a.failureMessages?.[0] ?? '').split('\n')[0]!.slice(0, 200)}`),
    );
    return {
      wallS,
      cpuS: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
      passed: json.numPassedTests,
      failed: json.numFailedTests,
      failures,
      seconds: Object.fromEntries(
        json.testResults.map((file) => [relative(ROOT, file.name), Math.round((file.endTime - file.startTime) / 100) / 10]),
      ),
    };
  } catch (cause) {
    throw new Error(`vitest exited with ${code} and wrote no report`, { cause });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

console.log(
  `bench:suite: ${runs} run(s) of the whole suite${values.fresh ? ', caches cleared before each (as a fresh clone)' : ''}${workers === undefined ? '' : `, ${workers} files at once`}; ${availableParallelism()} cores, load average ${loadavg()[0]!.toFixed(2)} at start`,
);
const results: Run[] = [];
for (let i = 1; i <= runs; i++) {
  const r = await runSuite();
  results.push(r);
  const cpu = r.cpuS === undefined ? 'n/a' : `${r.cpuS.toFixed(1)} CPU-s (${(r.cpuS / r.wallS).toFixed(2)} cores busy)`;
  console.log(`run ${i}: ${r.wallS.toFixed(1)} s wall, ${cpu}; ${r.passed} passed, ${r.failed} failed`);
  for (const failure of r.failures) console.log(`  failed: ${failure}`);
}
const worst = Math.max(...results.map((r) => r.wallS));
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log(
  `target: the whole suite under ${TARGET_S} s on 2 cores: slowest run ${worst.toFixed(1)} s → ${worst < TARGET_S ? 'PASS' : 'MISS'}${failed > 0 ? ` (with ${failed} failing tests: not a valid measurement)` : ''}`,
);
if (values.record) {
  const last = results.at(-1)!;
  if (last.failed > 0) throw new Error('not recording file durations from a run with failing tests');
  const sorted = Object.fromEntries(Object.entries(last.seconds).sort(([a], [b]) => a.localeCompare(b)));
  const recorded: RecordedDurations = {
    recorded: `${new Date().toISOString().slice(0, 10)}, ${availableParallelism()} cores`,
    seconds: sorted,
  };
  writeFileSync(DURATIONS_FILE, `${JSON.stringify(recorded, null, 2)}\n`);
  console.log(`recorded the last run's file durations in ${relative(ROOT, DURATIONS_FILE)}`);
}
