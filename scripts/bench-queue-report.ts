/**
 * The report of `npm run bench:queue` (bench-queue.ts): one mode's figures, the table, and the
 * scheduler's targets as PASS or MISS lines.
 */

/** One mode's figures, as `--json` prints them (waits in unscaled seconds, spoken messages only). */
export interface ModeStats {
  requests: number;
  http_429: number;
  spoken: number;
  dropped_stale: number;
  refused: number;
  failed: number;
  requests_per_spoken: number;
  spoken_fraction: number;
  wait_p50_s: number;
  wait_p95_s: number;
  jain_spoken_fraction: number;
  jain_mean_wait: number;
  chars_paid: number;
}

export interface Report {
  trace: string;
  messages: number;
  bound: { requests_per_spoken: number };
  /** p95 wait if every message were synthesised alone at arrival with no rate limit (bench-queue-traces.ts `playbackFloor`). */
  playback_floor: { wait_p95_s: number };
  scheduler: ModeStats;
  naive: ModeStats;
}

/** `wall`: real time per mode (ms); `cpu`: this process's CPU time per mode (s; the in-process emulator included). */
export function printTable(r: Report, wall: { scheduler: number; naive: number }, cpu: { scheduler: number; naive: number }): void {
  const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  const a = r.scheduler;
  const b = r.naive;
  const rows: Array<[string, string, string]> = [
    ['messages spoken', `${a.spoken}/${r.messages}`, `${b.spoken}/${r.messages}`],
    [
      '  dropped stale / refused / failed',
      `${a.dropped_stale} / ${a.refused} / ${a.failed}`,
      `${b.dropped_stale} / ${b.refused} / ${b.failed}`,
    ],
    ['requests sent (emulator log)', String(a.requests), String(b.requests)],
    ['requests per spoken message', f(a.requests_per_spoken, 3), f(b.requests_per_spoken, 3)],
    ['429s received (emulator log)', String(a.http_429), String(b.http_429)],
    ['wait to the clip p50 (s, unscaled)', f(a.wait_p50_s), f(b.wait_p50_s)],
    ['wait to the clip p95 (s, unscaled)', f(a.wait_p95_s), f(b.wait_p95_s)],
    ["Jain's index, spoken fraction per audience", f(a.jain_spoken_fraction, 3), f(b.jain_spoken_fraction, 3)],
    ["Jain's index, mean wait per audience", f(a.jain_mean_wait, 3), f(b.jain_mean_wait, 3)],
    ['characters paid (emulator account)', String(a.chars_paid), String(b.chars_paid)],
    ['characters paid per spoken message', f(a.chars_paid / Math.max(1, a.spoken)), f(b.chars_paid / Math.max(1, b.spoken))],
    ['wall time (s)', f(wall.scheduler / 1000, 1), f(wall.naive / 1000, 1)],
    ['CPU time (s, bot side + in-process emulator)', f(cpu.scheduler, 1), f(cpu.naive, 1)],
  ];
  const w = Math.max(...rows.map((x) => x[0].length));
  console.log(`\n${'metric'.padEnd(w)}  ${'scheduler'.padStart(12)}  ${'naive'.padStart(12)}`);
  for (const [name, x, y] of rows) console.log(`${name.padEnd(w)}  ${x.padStart(12)}  ${y.padStart(12)}`);
  console.log(`${'bound: requests per spoken message'.padEnd(w)}  ${f(r.bound.requests_per_spoken, 3).padStart(12)}`);
  console.log(`${'playback floor: p95 wait speaking all (s)'.padEnd(w)}  ${f(r.playback_floor.wait_p95_s).padStart(12)}`);
}

/** The targets for this trace: [line, pass]. */
export function targets(r: Report, scenario: string): Array<[string, boolean]> {
  const f = (x: number, d = 2) => (Number.isFinite(x) ? x.toFixed(d) : 'n/a');
  const a = r.scheduler;
  const b = r.naive;
  const pressure = b.http_429 > 0;
  const out: Array<[string, boolean]> = [[`zero 429s (${a.http_429})`, a.http_429 === 0]];
  if (scenario === 'overload') {
    const ratio = r.bound.requests_per_spoken / a.requests_per_spoken;
    out.push([
      `bound / scheduler requests per spoken >= 0.9 (${f(r.bound.requests_per_spoken, 3)} / ${f(a.requests_per_spoken, 3)} = ${f(ratio, 3)})`,
      ratio >= 0.9,
    ]);
  }
  // Every audience served alike: 20 servers starting at random (staggered), or two voice channels of one server among others (channels).
  if (scenario === 'staggered' || scenario === 'channels')
    out.push([`Jain's index of spoken fraction >= 0.95 (${f(a.jain_spoken_fraction, 3)})`, a.jain_spoken_fraction >= 0.95]);
  // Why a wait target misses when it lies below what playback alone makes every spoken message wait.
  const floor = (limit: number) =>
    r.playback_floor.wait_p95_s > limit ? `; playback alone, speaking every message, gives ${f(r.playback_floor.wait_p95_s)} s` : '';
  if (pressure)
    out.push([
      `under pressure (naive saw ${b.http_429} 429s): p95 wait <= naive / 3 (${f(a.wait_p95_s)} s <= ${f(b.wait_p95_s / 3)} s${floor(b.wait_p95_s / 3)})`,
      a.wait_p95_s <= b.wait_p95_s / 3,
    ]);
  else
    out.push([
      `without pressure (naive saw no 429): p95 wait <= 1.1 x naive + 0.25 s (${f(a.wait_p95_s)} s <= ${f(1.1 * b.wait_p95_s + 0.25)} s)`,
      a.wait_p95_s <= 1.1 * b.wait_p95_s + 0.25,
    ]);
  out.push([`spoken >= naive (${a.spoken} >= ${b.spoken})`, a.spoken >= b.spoken]);
  if (scenario === 'names' || scenario === 'overload') {
    const ours = a.chars_paid / Math.max(1, a.spoken);
    const theirs = b.chars_paid / Math.max(1, b.spoken);
    out.push([`characters paid per spoken <= 0.8 x naive (${f(ours)} <= ${f(0.8 * theirs)})`, ours <= 0.8 * theirs]);
  }
  return out;
}
