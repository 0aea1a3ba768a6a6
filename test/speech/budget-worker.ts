// Child process for budget-processes.test.ts: reserves characters against a shared database file.
// argv[2] is JSON: { file, plan: Charge[][], commitEvery, limits, anchor }. Waits for "go" on stdin
// so both processes start together, then prints one JSON line with what was accepted.
import { openDatabase } from '../../src/db/database.ts';
import type { Charge } from '../../src/billing/ledger.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';

interface Job {
  file: string;
  plan: Charge[][];
  commitEvery: number;
  limits: { userMonthlyLimit: number; guildMonthlyLimit: number; accountMonthlyLimit: number };
  anchor: number;
}

const job = JSON.parse(process.argv[2] ?? '{}') as Job;
const db = openDatabase(job.file);
const budget = new CharacterBudget({ db, defaults: job.limits, period: { anchor: job.anchor, days: 30 } });

process.stdout.write('ready\n');
process.stdin.once('data', async () => {
  let accepted = 0;
  const refused: Record<string, number> = {};
  for (const [i, charges] of job.plan.entries()) {
    const r = await budget.reserve(charges);
    if (r.ok) {
      accepted++;
      if (i % job.commitEvery === 0) await budget.charge(r.reservation);
    } else {
      refused[r.refusal.scope] = (refused[r.refusal.scope] ?? 0) + 1;
    }
    // Yield so the two processes interleave their transactions.
    await new Promise((resolve) => setImmediate(resolve));
  }
  db.close();
  process.stdout.write(`${JSON.stringify({ accepted, refused })}\n`);
  process.exit(0);
});
