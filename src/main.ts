import { ConfigError, loadConfig, type Config } from './config.ts';
import { createBot } from './discord/bot.ts';
import { resolveShardPlan, type ShardPlan } from './ops/shard-plan.ts';
import { ShardProcessManager } from './ops/shard-manager.ts';
import { answerCollect } from './ops/shard-ipc.ts';
import { createLogger, type Logger } from './util/log.ts';

// `npm start`: parse the environment (fail fast, naming the variable), then either start the bot
// (one process: the shards of SHARD_IDS, or one shard when SHARD_COUNT is unset) or, with
// SHARD_PROCESSES > 1, the shard manager that runs one bot process per group of shards
// (src/ops/shard-manager.ts). Both stop cleanly on SIGTERM/SIGINT: no new work, queued speech
// persisted, database closed.
let config: Config;
try {
  config = loadConfig();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
const secrets = [config.discord.token, config.tts.token, ...urlPasswords(config)];
const base = createLogger({ level: config.logLevel, secrets });
// A process the manager started says which it is on every line.
const logger = process.env.YOMIAGE_SHARD_PROCESS !== undefined ? base.child({ shardProcess: Number(process.env.YOMIAGE_SHARD_PROCESS) }) : base;

let plan: ShardPlan | undefined;
try {
  plan = await resolveShardPlan(config);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  logger.fatal({ err: error }, 'could not ask Discord for the recommended shard count (SHARD_COUNT=auto)');
  process.exit(1);
}

if (plan && plan.groups.length > 1) await runManager(plan, logger);
else await runBot(plan, logger);

async function runManager(plan: ShardPlan, logger: Logger): Promise<void> {
  const manager = new ShardProcessManager({ token: config.discord.token, shardCount: plan.count, groups: plan.groups, logger });
  onStop(async () => manager.stop(), logger);
  logger.info({ shardCount: plan.count, shards: plan.ids, processes: plan.groups.length }, 'starting the shard manager');
  await manager.start();
}

async function runBot(plan: ShardPlan | undefined, logger: Logger): Promise<void> {
  const clientOptions = plan ? { shards: plan.ids, shardCount: plan.count } : {};
  let bot;
  try {
    bot = await createBot({ config, logger, clientOptions });
  } catch (error) {
    // PostgreSQL (ACCOUNT_LEDGER_URL / RATE_STORE_URL) not answering is the likely cause here.
    logger.fatal({ err: error }, 'could not start (is the database, or a shared PostgreSQL, reachable?)');
    process.exit(1);
  }
  onStop(() => bot.stop(), logger);
  // Under the shard manager: answer its questions, and stop when it is gone (no orphan shards).
  answerCollect('status', () => ({ pid: process.pid, shards: plan?.ids ?? [0], guilds: [...bot.client.guilds.cache.keys()] }));
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  try {
    await bot.start();
  } catch (error) {
    logger.fatal({ err: error }, 'could not start (is DISCORD_TOKEN right and the gateway reachable?)');
    await bot.stop().catch(() => {});
    process.exit(1);
  }
}

function onStop(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await stop();
      process.exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
}

/** Passwords inside the PostgreSQL URLs: scrubbed from every log line like the tokens. */
function urlPasswords(config: Config): string[] {
  return [config.shared.accountLedgerUrl, config.shared.rateStoreUrl].flatMap((url) => {
    const password = url ? decodeURIComponent(new URL(url).password) : '';
    return password ? [password, new URL(url!).password] : [];
  });
}
