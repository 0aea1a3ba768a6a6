// Child process of `npm run bench:dbwait`: the real bot, configured by the environment like
// `npm start`. BENCH_DB_POLICY=blocking puts back the old policy for comparison: the connection
// waits synchronously (busy_timeout 5000) for a lock another process holds, on this thread.
import { loadConfig } from '../src/config.ts';
import { createBot } from '../src/bot.ts';
import { createLogger } from '../src/util/log.ts';

const config = loadConfig();
const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
const bot = await createBot({
  config,
  logger,
  rateLimits: { standard: { limit: 10_000, windowMs: 60_000 }, advanced: { limit: 10, windowMs: 60_000 } },
});
if (process.env.BENCH_DB_POLICY === 'blocking') bot.db.pragma('busy_timeout = 5000');
await bot.start();

process.on('message', (message: { cmd: string }) => {
  if (message.cmd === 'stop') void bot.stop().then(() => process.exit(0));
});
process.send?.({ ready: true });
