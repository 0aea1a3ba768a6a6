/**
 * One bot process's start-ups and traffic, for test/speech/queue-store.test.ts: accepts a few
 * utterances for its own guild, claims its guild's rows (as a start-up does) and finishes them,
 * `rounds` times, while another process does the same on the same file.
 * argv[2]: {file, guild, rounds}. Prints "ready", waits for "go" on stdin, prints a JSON summary.
 */
import { createInterface } from 'node:readline';
import { openDatabase } from '../../src/db/database.ts';
import { PendingUtteranceStore } from '../../src/speech/queue/journal.ts';
import type { Utterance } from '../../src/speech/queue/utterance.ts';

const job = JSON.parse(process.argv[2]!) as { file: string; guild: string; rounds: number };
const store = new PendingUtteranceStore(openDatabase(job.file, { migrate: false }), { retryMs: 1, maxRetryMs: 10 });
process.stdout.write('ready\n');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
lines.close();
process.stdin.destroy();

const result = { claims: 0, mismatches: 0, errors: [] as string[] };
let n = 0;
for (let round = 0; round < job.rounds; round++) {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const u: Utterance = {
      id: `${job.guild}-${n++}`,
      guildId: job.guild,
      userId: 'u',
      channelId: 'c',
      kind: 'auto',
      text: `t${n}`,
      voice: 'v',
      speed: 1,
      pitch: 0,
      enqueuedAt: n,
    };
    store.add(u);
    ids.push(u.id);
  }
  while (store.unwritten > 0) await new Promise((r) => setTimeout(r, 1));
  try {
    const claimed = await store.claim((g) => g === job.guild);
    result.claims++;
    if (claimed.map((c) => c.utterance.id).join() !== ids.join()) result.mismatches++;
  } catch (error) {
    result.errors.push(String((error as { code?: string }).code ?? error));
  }
  store.remove(ids);
  while (store.unwritten > 0) await new Promise((r) => setTimeout(r, 1));
}
await store.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
