/**
 * `npm run bench:queue -- --family X --sensitivity`: each constant of the scheduler's policy
 * (src/speech/queue/policy.ts `POLICY_DEFAULTS`, and the hold for company, `pressureHoldMs`) at half and
 * twice its value, the rest as shipped, over the same family members in virtual time; each target's
 * 10th percentile side by side. A constant that only works at the value it was tuned to shows up as
 * a target passing at 1x and missing at 0.5x or 2x (a cliff); one that barely moves the targets is
 * not what holds them.
 */
import { POLICY_DEFAULTS } from '../src/speech/queue/policy.ts';
import { SCHEDULER_DEFAULTS, type SchedulerOptions, type SchedulerPolicy } from '../src/speech/queue/options.ts';
import type { BatchRules } from '../src/speech/queue/batching/merging.ts';
import type { Family, FamilyMember } from './bench-queue-family.ts';
import { FAMILY_TARGETS, tenthPercentile, type FamilyTarget, type Report } from './bench-queue-report.ts';

/** Constants counted in whole units (audiences, grants, readings): rounded when scaled. */
const WHOLE = new Set<keyof SchedulerPolicy>(['scarceAudiences', 'scarceGrants', 'reuseAfterReads']);
const FACTORS = [0.5, 2] as const;

type Run = (m: FamilyMember, options: Partial<SchedulerOptions>) => Promise<Report>;

/** Each target's 10th percentile over `members` with `options`. */
async function tenths(members: readonly FamilyMember[], targets: readonly FamilyTarget[], run: Run, options: Partial<SchedulerOptions>) {
  const reports: Report[] = [];
  for (const m of members) reports.push(await run(m, options));
  return targets.map((t) => tenthPercentile(reports.map(t.value), t.higher));
}

const passes = (t: FamilyTarget, x: number) => (t.higher ? x >= t.threshold : x <= t.threshold);
const show = (t: FamilyTarget, x: number) => `${Number.isInteger(x) ? x : x.toFixed(3)}${passes(t, x) ? '' : '*'}`;

/** Prints, per constant, each target's 10th percentile at 0.5x, 1x and 2x, and the cliffs. */
export async function printSensitivity(family: Family, members: readonly FamilyMember[], _rules: BatchRules, run: Run): Promise<void> {
  // Counts that must be zero everywhere are judged on every trace elsewhere; here the 10th percentile of each target.
  const targets = FAMILY_TARGETS[family].filter((t) => !t.realOnly);
  const base = await tenths(members, targets, run, {});
  console.log(
    `\nsensitivity (${family}, ${members.length} traces, virtual time): each target's 10th percentile with one constant at 0.5x / 1x / 2x (* misses)`,
  );
  console.log(`  ${'constant (default)'.padEnd(34)} ${targets.map((t) => t.label.slice(0, 26).padEnd(28)).join('')}`);
  const cliffs: string[] = [];
  const constants: Array<[string, number, (v: number) => Partial<SchedulerOptions>]> = [
    ...(Object.keys(POLICY_DEFAULTS) as Array<keyof SchedulerPolicy>).map(
      (k): [string, number, (v: number) => Partial<SchedulerOptions>] => [
        k,
        POLICY_DEFAULTS[k],
        (v) => ({ policy: { [k]: WHOLE.has(k) ? Math.max(1, Math.round(v)) : v } }),
      ],
    ),
    ['pressureHoldMs', SCHEDULER_DEFAULTS.coalesce.pressureHoldMs, (v) => ({ coalesce: { pressureHoldMs: v } })],
  ];
  for (const [name, value, options] of constants) {
    const at = new Map<number, number[]>([[1, base]]);
    for (const f of FACTORS) at.set(f, await tenths(members, targets, run, options(value * f)));
    const cells = targets.map((t, i) => `${show(t, at.get(0.5)![i]!)} / ${show(t, base[i]!)} / ${show(t, at.get(2)![i]!)}`.padEnd(28));
    console.log(`  ${`${name} (${value})`.padEnd(34)} ${cells.join('')}`);
    targets.forEach((t, i) => {
      for (const f of FACTORS)
        if (passes(t, base[i]!) && !passes(t, at.get(f)![i]!)) cliffs.push(`${name} x${f}: ${t.label} ${show(t, at.get(f)![i]!)}`);
    });
  }
  console.log(
    cliffs.length > 0
      ? `  cliffs (a target passing as shipped, missing at 0.5x or 2x): ${cliffs.join('; ')}`
      : '  no cliffs: every target passing as shipped passes at 0.5x and 2x of each constant',
  );
}
