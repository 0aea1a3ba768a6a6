import { readFileSync } from 'node:fs';
import { flushCompileCache, getCompileCacheDir } from 'node:module';
import pino from 'pino';
import { ConfigError, loadConfig, type Config } from './config.ts';
import type { ShardPlan } from './ops/shard-plan.ts';
import type { OpsEndpoints } from './ops/ops-server.ts';
import type { Logger } from './util/log.ts';
import type { Bot } from './bot.ts';
import { VOICE_WORKER_FAULTS, type VoiceWorkerFault } from './voice/worker-protocol.ts';

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
// The rest (discord.js above all: about 0.4 s of CPU) is loaded once the environment is valid, so a
// misconfigured start names the variable in about 0.1 s.
const [
  { createBot },
  { discordRestAgent },
  { recommendedShardCount, resolveShardPlan },
  { ShardProcessManager },
  { answerCollect },
  { ErrorReporter, reportingDestination },
  { botEndpoints },
  { COLLECT_TOPICS, managerEndpoints },
  { BotMetrics },
  { startOpsServer },
  { createLogger },
  { clientView },
  { startDashboard },
  { slashCommands },
] = await Promise.all([
  import('./bot.ts'),
  import('./discord/rest-agent.ts'),
  import('./ops/shard-plan.ts'),
  import('./ops/shard-manager.ts'),
  import('./ops/shard-ipc.ts'),
  import('./ops/error-reports.ts'),
  import('./ops/health.ts'),
  import('./ops/manager-ops.ts'),
  import('./ops/metrics.ts'),
  import('./ops/ops-server.ts'),
  import('./util/log.ts'),
  import('./dashboard/access.ts'),
  import('./dashboard/server.ts'),
  import('./discord/interactions/command.ts'),
]);
// With NODE_COMPILE_CACHE set, Node writes what it compiled only when the process exits normally:
// a bot that is killed (or runs for weeks) would leave the next start to compile everything again.
// Written once the modules are loaded and again once the bot is started (what it loaded on the way).
const writeCompileCache = () => (getCompileCacheDir() ? flushCompileCache() : undefined);
writeCompileCache();
const secrets = [
  config.discord.token,
  ...config.discord.extraTokens,
  config.tts.token,
  ...(config.dashboard ? [config.dashboard.clientSecret] : []),
  ...urlPasswords(config),
  ...(config.ops.errorWebhookUrl ? [config.ops.errorWebhookUrl] : []),
];
// Unexpected errors (logged at error or fatal with an error object) are also posted to
// ERROR_WEBHOOK_URL, built from the scrubbed log line (src/ops/error-reports.ts).
const reporter = config.ops.errorWebhookUrl
  ? new ErrorReporter({ url: config.ops.errorWebhookUrl, onFailure: (problem) => reportFailed(problem) })
  : undefined;
const stdout = pino.destination({ dest: 1, sync: true });
const base = createLogger({ level: config.logLevel, secrets, destination: reporter ? reportingDestination(stdout, reporter) : stdout });
// Never logged through the reporting path at error level: a failing webhook must not report itself.
const reportFailed = (problem: { status?: number; code?: string }) =>
  base.warn({ ...problem }, 'could not post an error report to ERROR_WEBHOOK_URL');
// A process the manager started says which it is on every line.
const logger =
  process.env.YOMIAGE_SHARD_PROCESS !== undefined ? base.child({ shardProcess: Number(process.env.YOMIAGE_SHARD_PROCESS) }) : base;

let plan: ShardPlan | undefined;
try {
  plan = await resolveShardPlan(config, () => recommendedShardCount(config.discord, discordRestAgent()));
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  logger.fatal({ err: error }, 'could not ask Discord for the recommended shard count (SHARD_COUNT=auto)');
  await exit(1);
}

if (plan && plan.groups.length > 1) await runManager(plan, logger);
else await runBot(plan, logger);

async function runManager(plan: ShardPlan, logger: Logger): Promise<void> {
  const manager = new ShardProcessManager({ token: config.discord.token, shardCount: plan.count, groups: plan.groups, logger });
  // The manager serves METRICS_PORT (the sum over its processes); they answer it over IPC.
  const ops = await serveOps(managerEndpoints(manager), logger);
  onStop(async () => {
    await manager.stop();
    await ops?.close();
  }, logger);
  logger.info({ shardCount: plan.count, shards: plan.ids, processes: plan.groups.length }, 'starting the shard manager');
  await manager.start();
}

async function runBot(plan: ShardPlan | undefined, logger: Logger): Promise<void> {
  const clientOptions = plan ? { shards: plan.ids, shardCount: plan.count } : {};
  const metrics = new BotMetrics();
  let bot;
  try {
    bot = await createBot({ config, logger, clientOptions, metrics });
  } catch (error) {
    // PostgreSQL (ACCOUNT_LEDGER_URL / RATE_STORE_URL) not answering is the likely cause here.
    logger.fatal({ err: error }, 'could not start (is the database, or a shared PostgreSQL, reachable?)');
    return exit(1);
  }
  // Listening before the gateway is: /healthz answers at once, /readyz says when it is ready.
  const ops = await serveOps(botEndpoints(metrics, bot.readiness), logger);
  const dashboard = await serveDashboard(bot, plan, logger);
  onStop(async () => {
    await dashboard?.close();
    await ops?.close();
    await bot.stop();
  }, logger);
  // Under the shard manager: answer its questions, and stop when it is gone (no orphan shards).
  answerCollect('status', () => ({ pid: process.pid, shards: plan?.ids ?? [0], guilds: [...bot.client.guilds.cache.keys()] }));
  answerCollect(COLLECT_TOPICS.metrics, () => metrics.registry.getMetricsAsJSON());
  answerCollect(COLLECT_TOPICS.ready, () => bot.readiness());
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));
  try {
    await bot.start();
  } catch (error) {
    logger.fatal({ err: error }, 'could not start (is DISCORD_TOKEN right and the gateway reachable?)');
    await bot.stop().catch(() => {});
    await exit(1);
  }
  writeCompileCache();
  // Tests and benchmarks only: YOMIAGE_TEST_VOICE_FAULTS names a file; on SIGUSR2 every voice
  // worker fails as the word in it says (crash, hang, reject, silence; src/voice/worker-protocol.ts).
  const faultFile = process.env.YOMIAGE_TEST_VOICE_FAULTS;
  if (faultFile) {
    logger.warn({ file: faultFile }, 'YOMIAGE_TEST_VOICE_FAULTS: SIGUSR2 makes the voice workers fail on purpose');
    process.on('SIGUSR2', () => {
      const kind = readFileSync(faultFile, 'utf8').trim();
      if (!(VOICE_WORKER_FAULTS as readonly string[]).includes(kind)) return logger.warn({ kind }, 'unknown voice worker fault');
      const workers = bot.context.voice.injectFault(kind as VoiceWorkerFault);
      logger.warn({ kind, workers, at: performance.timeOrigin + performance.now() }, 'voice worker fault injected on purpose');
    });
  }
}

/** METRICS_PORT's server when set; a port that cannot be bound stops start-up with a clear message. */
async function serveOps(endpoints: OpsEndpoints, logger: Logger) {
  const { metricsPort, metricsHost } = config.ops;
  if (metricsPort === undefined) return undefined;
  try {
    return await startOpsServer({ port: metricsPort, host: metricsHost, endpoints, logger });
  } catch (error) {
    logger.fatal(
      { code: (error as { code?: string }).code, host: metricsHost, port: metricsPort },
      'could not listen on METRICS_HOST:METRICS_PORT',
    );
    return exit(1);
  }
}

/**
 * DASHBOARD_PORT's web dashboard, served by one process of this host: the bot itself, or under
 * the shard manager its first process (for the guilds of every process here: they share the
 * database, and members and guilds are fetched from Discord). A port that cannot be bound stops start-up.
 */
async function serveDashboard(bot: Bot, plan: ShardPlan | undefined, logger: Logger) {
  const dashboard = config.dashboard;
  const processIndex = process.env.YOMIAGE_SHARD_PROCESS;
  if (!dashboard || (processIndex !== undefined && processIndex !== '0')) return undefined;
  try {
    return await startDashboard({
      config: dashboard,
      discordApiUrl: config.discord.apiUrl,
      applicationId: () => bot.client.application?.id,
      deps: {
        ctx: bot.context,
        commands: slashCommands(bot.commands.values()).map((c) => c.data),
        view: clientView(bot.client, plan ? { shardCount: plan.count, shards: hostShards(plan) } : undefined, dashboard.peers),
      },
      logger: logger.child({ component: 'dashboard' }),
    });
  } catch (error) {
    logger.fatal(
      { code: (error as { code?: string }).code, host: dashboard.host, port: dashboard.port },
      'could not listen on DASHBOARD_HOST:DASHBOARD_PORT',
    );
    return exit(1);
  }
}

/** The shards of this host: under the shard manager every process's (it says so), else this process's. */
function hostShards(plan: ShardPlan): number[] {
  const all = process.env.YOMIAGE_HOST_SHARDS?.split(',').filter(Boolean).map(Number);
  return all && all.length > 0 && all.every(Number.isInteger) ? all : plan.ids;
}

/** Exits once pending error reports were posted (at most 5 s). */
async function exit(code: number): Promise<never> {
  if (reporter) await Promise.race([reporter.flush(), new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
  process.exit(code);
}

function onStop(stop: () => Promise<void>, logger: Logger): void {
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    try {
      await stop();
      await exit(0);
    } catch (error) {
      logger.error({ err: error }, 'shutdown failed');
      await exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  // Logged (and reported) before the process ends, as Node would end it.
  process.on('uncaughtException', (error) => {
    logger.fatal({ err: error }, 'uncaught exception');
    void exit(1);
  });
}

/** Passwords inside the PostgreSQL URLs: scrubbed from every log line like the tokens. */
function urlPasswords(config: Config): string[] {
  return [config.shared.accountLedgerUrl, config.shared.rateStoreUrl].flatMap((url) => {
    const password = url ? decodeURIComponent(new URL(url).password) : '';
    return password ? [password, new URL(url!).password] : [];
  });
}
