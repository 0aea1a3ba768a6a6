import { ConfigError, loadConfig } from './config.ts';
import { createBot } from './discord/bot.ts';
import { createLogger } from './util/log.ts';

// `npm start`: parse the environment (fail fast, naming the variable), start the bot, and stop
// cleanly on SIGTERM/SIGINT: no new work, queued speech persisted, database closed.
let config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
const logger = createLogger({ level: config.logLevel, secrets: [config.discord.token, config.tts.token] });
const bot = await createBot({ config, logger });

let stopping = false;
async function shutdown(signal: string) {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down');
  try {
    await bot.stop();
    process.exit(0);
  } catch (error) {
    logger.error({ err: error }, 'shutdown failed');
    process.exit(1);
  }
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

try {
  await bot.start();
} catch (error) {
  logger.fatal({ err: error }, 'could not start (is DISCORD_TOKEN right and the gateway reachable?)');
  await bot.stop().catch(() => {});
  process.exit(1);
}
