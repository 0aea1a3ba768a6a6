// Child process for job-leases.test.ts: one bot process resuming advanced jobs from a shared
// database. argv[2] is JSON { file, baseUrl, token, mode }. mode 'resume': waits for "go" on stdin,
// resumes every unfinished job it can claim, prints one JSON line {delivered: [jobId...]}.
// mode 'claim': claims every unfinished job with a 1.5 s lease, prints "claimed <expiry ms>", then stays alive
// doing nothing until killed (a process that hung or died holding its leases).
import { openDatabase } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { TtsClient } from '../../src/tts/client.ts';
import { AdvancedJobs } from '../../src/tts/jobs.ts';

const { file, baseUrl, token, mode } = JSON.parse(process.argv[2] ?? '{}') as {
  file: string;
  baseUrl: string;
  token: string;
  mode: 'resume' | 'claim';
};
const db = openDatabase(file);
const repos = createRepositories(db);

if (mode === 'claim') {
  const until = Date.now() + 1_500;
  for (const job of repos.jobs.listUnfinished()) await repos.jobs.claim(job.jobId, `hung-${process.pid}`, until);
  process.stdout.write(`claimed ${until}\n`);
  setInterval(() => {}, 60_000);
} else {
  const client = new TtsClient({
    token,
    baseUrl,
    requestTimeoutMs: 5_000,
    download: { allowLoopback: true },
    jobs: { minPollMs: 50, defaultPollMs: 100 },
  });
  const jobs = new AdvancedJobs({ client, repos });
  process.stdout.write('ready\n');
  process.stdin.once('data', async () => {
    const delivered: string[] = [];
    await jobs.resumeUnfinished(async (job) => {
      delivered.push(job.jobId);
    });
    db.close();
    process.stdout.write(`${JSON.stringify({ delivered })}\n`);
    process.exit(0);
  });
}
