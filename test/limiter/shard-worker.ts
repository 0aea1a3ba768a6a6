// A bot shard in miniature, run as its own Node process by multiprocess.test.ts: it shares the
// rate budget through the SQLite file and sends standard requests to the given service.
import { openDatabase } from '../../src/db/database.ts';
import { createSqliteLimiter } from '../../src/tts/limiter/fair.ts';

interface WorkerConfig {
  dbFile: string;
  baseUrl: string;
  token: string;
  limit: number;
  windowMs: number;
  marginMs: number;
  /** Requests per guild; guilds run concurrently. */
  perGuild: number;
  guilds: string[];
}

const config = JSON.parse(process.argv[2]!) as WorkerConfig;
const db = openDatabase(config.dbFile);
const rate = { limit: config.limit, windowMs: config.windowMs };
const limiter = createSqliteLimiter(db, {
  limits: { standard: rate, advanced: rate },
  safety: { marginMs: config.marginMs },
  recheckMs: 100,
});

const results: { guild: string; status: number; grantedAt: number }[] = [];

async function guildLoop(guild: string): Promise<void> {
  for (let i = 0; i < config.perGuild; i++) {
    await limiter.acquire('standard', { key: guild });
    const grantedAt = Date.now();
    const response = await fetch(new URL('/text_to_speech_api/', config.baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', token: config.token },
      body: JSON.stringify({ voice: 'ja-JP-Wavenet-B', text: `${guild} ${i}`, speed: 1, pitch: 0 }),
    });
    await response.arrayBuffer();
    results.push({ guild, status: response.status, grantedAt });
  }
}

// Barrier: say ready, then start on the parent's "go", so both shards contend from the same moment.
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.pause();
await Promise.all(config.guilds.map(guildLoop));
db.close();
process.stdout.write(JSON.stringify(results));
