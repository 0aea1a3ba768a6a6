// Child process for advanced-jobs.test.ts ("process 1"): starts an advanced job against the
// emulator through AdvancedJobs and exits abruptly as soon as the job is persisted, like a bot
// that crashed or restarted while the job was still pending. argv[2]: { file, baseUrl, token }.
import { openDatabase } from '../../src/db/database.ts';
import { createRepositories } from '../../src/db/repositories.ts';
import { TtsClient } from '../../src/tts/client.ts';
import { AdvancedJobs } from '../../src/tts/jobs.ts';

const { file, baseUrl, token } = JSON.parse(process.argv[2] ?? '{}') as { file: string; baseUrl: string; token: string };
const db = openDatabase(file);
const repos = createRepositories(db);
const client = new TtsClient({ token, baseUrl, requestTimeoutMs: 5_000, download: { allowLoopback: true } });
const jobs = new AdvancedJobs({ client, repos });

jobs
  .run(
    { text: '再起動しても届くはずの読み上げです。', voice: 'Luna', model: 'flash' },
    { guildId: 'g1', userId: 'u1', channelId: 'c1', delivery: { kind: 'attach', channelId: 'c1', replyTo: 'm1' } },
  )
  .catch((err: unknown) => {
    process.stderr.write(`run failed: ${String(err)}\n`);
    process.exit(2);
  });

const timer = setInterval(() => {
  const [job] = repos.jobs.listUnfinished();
  if (job) {
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify({ jobId: job.jobId, state: job.state })}\n`);
    process.exit(0); // no cleanup: the job is left for the next process
  }
}, 5);
