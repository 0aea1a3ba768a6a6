import { tokenUrl } from './util/token-url.ts';
import { z } from 'zod';
import type { BudgetCeilings } from './billing/policy.ts';
import { BUDGET_DEFAULTS } from './billing/budget.ts';
import { AUDIO_CACHE_DEFAULTS } from './speech/synthesis/cache.ts';
import { DICTIONARY_CACHE_CHARS } from './db/dictionary-cache.ts';
import { SCHEDULER_DEFAULTS } from './speech/queue/options.ts';
import { CodedError } from '@yomiage/coded-error';
import { parseShardIds, shardPlanProblem } from './util/shards.ts';
import { defaultVoiceWorkers } from './voice/worker-pool.ts';

/**
 * Environment -> typed configuration, parsed once at start-up. Every variable is
 * documented in .env.example; a missing or malformed one stops start-up with a message naming it.
 */
const intFrom = (fallback: number, min = 0, tooSmall?: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, 'must be a whole number')
    .transform(Number)
    .pipe(
      z
        .number()
        .int()
        .min(min, tooSmall ? { error: tooSmall } : undefined),
    )
    .prefault(String(fallback));

/** A whole number of at least 1, or undefined when unset (its default depends on another variable). */
const optionalCount = z.string().trim().regex(/^\d+$/, 'must be a whole number').transform(Number).pipe(z.number().int().min(1)).optional();

const MIB = 1024 * 1024;

/** A TCP port to listen on (0: the OS picks one). */
const portNumber = z
  .string()
  .trim()
  .regex(/^\d+$/, 'must be a port number (0-65535)')
  .transform(Number)
  .pipe(z.number().int().max(65_535, { error: 'must be a port number (0-65535)' }));

// A PostgreSQL connection URL (it may hold a password: never echoed in a message).
const postgresUrl = z
  .string()
  .trim()
  .refine((v) => URL.canParse(v) && /^postgres(ql)?:$/.test(new URL(v).protocol), {
    error: 'must be a PostgreSQL URL such as postgres://user:password@host:5432/database',
  });

const BOT_TOKEN = /^[\w-]+\.[\w-]+\.[\w-]+$/;

// The Discord variables, checked by the same rules for `npm start` and `npm run deploy-commands`.
const discordSchema = z
  .object({
    DISCORD_TOKEN: z
      .string({ error: 'is required' })
      .trim()
      .regex(BOT_TOKEN, 'does not look like a bot token (three dot-separated parts, from the Developer Portal)'),
    DISCORD_API_URL: tokenUrl('').optional(),
    // Extra bot accounts (each its own application), comma separated: one voice channel per server each.
    EXTRA_DISCORD_TOKENS: z
      .string()
      .transform((v) => v.split(',').map((t) => t.trim()))
      .superRefine((tokens, ctx) => {
        // Which one is wrong by its position, never by its value (a token).
        const bad = tokens.findIndex((t) => !BOT_TOKEN.test(t));
        if (bad >= 0)
          ctx.addIssue({
            code: 'custom',
            message: `token ${bad + 1} of ${tokens.length} does not look like a bot token (tokens separated by commas, each from its application's Bot page)`,
          });
        else if (new Set(tokens).size < tokens.length) ctx.addIssue({ code: 'custom', message: 'lists the same token twice' });
      })
      .optional(),
  })
  .superRefine((e, ctx) => {
    if (e.EXTRA_DISCORD_TOKENS?.includes(e.DISCORD_TOKEN))
      ctx.addIssue({
        code: 'custom',
        path: ['EXTRA_DISCORD_TOKENS'],
        message: 'lists DISCORD_TOKEN (the main account): extras are other applications',
      });
  });

const schema = discordSchema.safeExtend({
  TTS_TOKEN: z
    .string({ error: 'is required' })
    .trim()
    .length(64, 'must be exactly 64 characters (the access token from the service settings page)'),
  TTS_BASE_URL: tokenUrl('').default('https://ondoku3.com'),
  TTS_PLAN: z.enum(['free', 'paid'], { error: 'must be "free" or "paid"' }).default('free'),
  DATA_DIR: z.string().trim().min(1).default('./data'),
  LOG_LEVEL: z
    .enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], {
      error: 'must be one of fatal, error, warn, info, debug, trace, silent',
    })
    .default('info'),
  // One place defines each default: the module that applies it.
  ACCOUNT_MONTHLY_CHARS: intFrom(BUDGET_DEFAULTS.defaults.accountMonthlyLimit, 1),
  GUILD_MONTHLY_CHARS: intFrom(BUDGET_DEFAULTS.defaults.guildMonthlyLimit, 1),
  USER_MONTHLY_CHARS: intFrom(BUDGET_DEFAULTS.defaults.userMonthlyLimit, 1),
  // The operator's ceilings: server admins set limits within them. Unset: the matching default
  // above (GUILD_MONTHLY_CHARS, USER_MONTHLY_CHARS; roles: the larger of those), so nothing is raised.
  GUILD_MONTHLY_CHARS_MAX: optionalCount,
  USER_MONTHLY_CHARS_MAX: optionalCount,
  ROLE_MONTHLY_CHARS_MAX: optionalCount,
  BILLING_PERIOD_START: z.iso.date({ error: 'must be a date like 2026-11-01' }).default('2026-11-01'),
  CACHE_MAX_MB: intFrom(AUDIO_CACHE_DEFAULTS.maxBytes / MIB, 1),
  // Counts characters (it counted messages in earlier versions): a small old value would refuse chat.
  MAX_PENDING_PER_MEMBER: intFrom(
    SCHEDULER_DEFAULTS.maxPendingCharsPerMember,
    100,
    `counts characters waiting per member now (at least 100; default ${SCHEDULER_DEFAULTS.maxPendingCharsPerMember}), not messages`,
  ),
  AUTO_READ_MAX_AGE_SECONDS: intFrom(60, 1),
  // The first wait before an extra account that cannot log in is tried again (doubling, at most an hour).
  EXTRA_ACCOUNT_RETRY_SECONDS: intFrom(60, 1),
  PREFETCH: intFrom(2, 1),
  JOB_RETENTION_DAYS: intFrom(7, 1),
  // Shards on this host, and what several hosts share (docs/scaling.md).
  SHARD_COUNT: z
    .union([z.literal('auto'), z.string().trim().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(100_000))], {
      error: 'must be a whole number of shards (at least 1) or "auto" (Discord\'s recommendation)',
    })
    .optional(),
  SHARD_IDS: z.string().trim().optional(),
  SHARD_PROCESSES: intFrom(1, 1),
  // Threads running the voice connections; 0 keeps them on the main thread (the bench's baseline).
  VOICE_WORKERS: intFrom(defaultVoiceWorkers()).pipe(z.number().max(64, { error: 'must be at most 64 voice worker threads' })),
  ACCOUNT_LEDGER_URL: postgresUrl.optional(),
  RATE_STORE_URL: postgresUrl.optional(),
  // Metrics and health checks (off when unset; 0 lets the OS pick a port), error reports.
  METRICS_PORT: portNumber.optional(),
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  ERROR_WEBHOOK_URL: tokenUrl(' (a Discord webhook URL, or any endpoint taking a JSON POST)').optional(),
  // The operator's bot-wide reading dictionary (JSON, CSV or TSV).
  GLOBAL_DICTIONARY_FILE: z.string().trim().min(1).optional(),
  // A folder of curated dictionaries (JSON, CSV or TSV, one list a file) servers may follow.
  CURATED_DICTIONARIES_DIR: z.string().trim().min(1).optional(),
  // Characters of dictionary lists kept in memory for reading (src/db/dictionary-cache.ts), not a count.
  DICTIONARY_CACHE_CHARS: intFrom(DICTIONARY_CACHE_CHARS),
  // The web dashboard (off when unset; 0 lets the OS pick a port), signed in with Discord's OAuth2.
  DASHBOARD_PORT: portNumber.optional(),
  DASHBOARD_HOST: z.string().trim().min(1).default('127.0.0.1'),
  // Its public address (the OAuth2 redirect is this plus /auth/callback): https, or http to loopback.
  DASHBOARD_URL: tokenUrl(' (the public address of the dashboard, e.g. https://bot.example.com)').optional(),
  DISCORD_CLIENT_ID: z
    .string()
    .trim()
    .regex(/^\d{5,25}$/, "must be the application's id (digits, from the Developer Portal)")
    .optional(),
  DISCORD_CLIENT_SECRET: z.string().trim().min(8, 'does not look like a client secret (OAuth2 page of the Developer Portal)').optional(),
  // The other hosts' dashboards: "SHARDS=URL" entries separated by spaces, e.g. "4-7=https://b.example.com".
  DASHBOARD_PEERS: z.string().trim().optional(),
});

type Env = z.infer<typeof schema>;

export interface Config {
  /** The main account (`token`: slash commands, chat) and the extra accounts that only join voice channels. */
  discord: { token: string; apiUrl: string | undefined; extraTokens: string[] };
  /** The first wait before an extra account that could not log in is tried again (EXTRA_ACCOUNT_RETRY_SECONDS). */
  extraAccountRetryMs: number;
  tts: { token: string; baseUrl: string; plan: 'free' | 'paid'; allowLoopback: boolean };
  dataDir: string;
  logLevel: Env['LOG_LEVEL'];
  limits: {
    accountMonthlyChars: number;
    guildMonthlyChars: number;
    userMonthlyChars: number;
    /** The operator's ceilings on what server admins may set (*_MONTHLY_CHARS_MAX); stored values above apply as these. */
    ceilings: BudgetCeilings;
    billingPeriodStart: number;
    /** Characters one member may have waiting per server (MAX_PENDING_PER_MEMBER). */
    maxPendingCharsPerMember: number;
    autoReadMaxAgeMs: number;
    prefetch: number;
  };
  cacheMaxBytes: number;
  /** Ended advanced jobs (with their job and interaction tokens) are deleted after this many days. */
  jobRetentionDays: number;
  /**
   * Shards. `count` undefined: one shard, the bot unsharded. `ids`
   * undefined: every shard of `count`. With `processes` > 1, `npm start` runs a shard manager.
   */
  sharding: { count: number | 'auto' | undefined; ids: number[] | undefined; processes: number };
  /** Worker threads running the voice connections (VOICE_WORKERS); 0: on the main thread. */
  voiceWorkers: number;
  /** What several hosts share through PostgreSQL; each unset: this host's SQLite. */
  shared: { accountLedgerUrl: string | undefined; rateStoreUrl: string | undefined };
  /** METRICS_PORT (undefined: off) on METRICS_HOST, and where unexpected errors are reported. */
  ops: { metricsPort: number | undefined; metricsHost: string; errorWebhookUrl: string | undefined };
  /** The operator's bot-wide dictionary file, applied under each server's own entries. */
  globalDictionaryFile: string | undefined;
  /** The operator's curated dictionaries (a folder, a list a file), which servers may follow. */
  curatedDictionariesDir: string | undefined;
  /** Characters of dictionary lists kept in memory for reading, the servers' and the members' together (DICTIONARY_CACHE_CHARS). */
  dictionaryCacheChars: number;
  /** The web dashboard (DASHBOARD_PORT set), or undefined when it is off. */
  dashboard: DashboardConfig | undefined;
}

/** Where the dashboard listens, its public address, and the application's OAuth2 client (the secret is a secret). */
export interface DashboardConfig {
  port: number;
  host: string;
  /** DASHBOARD_URL without a trailing slash; undefined: http://host:port as bound. */
  publicUrl: string | undefined;
  /** DISCORD_CLIENT_ID; undefined: the bot's own application id. */
  clientId: string | undefined;
  clientSecret: string;
  /** The dashboards of the hosts running other shards (DASHBOARD_PEERS), named for the servers they hold. */
  peers: { shards: number[]; url: string }[];
}

/** One environment variable that is missing or malformed, and what is wrong with it (never its value). */
interface ConfigIssue {
  variable: string;
  problem: string;
}

/** The environment cannot start the bot: the message names every bad variable (docs/architecture.md, "Errors": one fixed code). */
export class ConfigError extends CodedError<'config_invalid'> {
  override name = 'ConfigError';
  readonly variables: string[];
  // No `cause`: the schema's own error holds the values, and values are never echoed.
  constructor(options: { issues: readonly ConfigIssue[] }) {
    const lines = options.issues.map((i) => `  ${i.variable}: ${i.problem}`);
    super('config_invalid', {
      message: `Invalid configuration:\n${lines.join('\n')}\nSee .env.example for every variable and its meaning.`,
    });
    this.variables = options.issues.map((i) => i.variable);
  }
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]', '::1']);

/** Parses `env` with `s`; throws ConfigError naming every bad variable (never echoing values). */
function parse<S extends z.ZodType>(s: S, env: Record<string, string | undefined>): z.infer<S> {
  // Empty strings in .env mean "not set", so defaults apply.
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v.trim() !== ''));
  const parsed = s.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw new ConfigError({ issues: parsed.error.issues.map((issue) => ({ variable: String(issue.path[0]), problem: issue.message })) });
}

/** Only the Discord variables (`npm run deploy-commands` needs no TTS_TOKEN); the same rules as loadConfig. */
export function loadDiscordConfig(env: Record<string, string | undefined> = process.env): Config['discord'] {
  const e = parse(discordSchema, env);
  return { token: e.DISCORD_TOKEN, apiUrl: e.DISCORD_API_URL, extraTokens: e.EXTRA_DISCORD_TOKENS ?? [] };
}

/** Parses the environment; throws ConfigError naming every bad variable (never echoing values). */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const e = parse(schema, env);
  const sharding = parseSharding(e);
  const baseHost = new URL(e.TTS_BASE_URL).hostname;
  return {
    discord: { token: e.DISCORD_TOKEN, apiUrl: e.DISCORD_API_URL, extraTokens: e.EXTRA_DISCORD_TOKENS ?? [] },
    extraAccountRetryMs: e.EXTRA_ACCOUNT_RETRY_SECONDS * 1000,
    tts: { token: e.TTS_TOKEN, baseUrl: e.TTS_BASE_URL.replace(/\/+$/, ''), plan: e.TTS_PLAN, allowLoopback: LOOPBACK.has(baseHost) },
    dataDir: e.DATA_DIR,
    logLevel: e.LOG_LEVEL,
    limits: {
      accountMonthlyChars: e.ACCOUNT_MONTHLY_CHARS,
      guildMonthlyChars: e.GUILD_MONTHLY_CHARS,
      userMonthlyChars: e.USER_MONTHLY_CHARS,
      ceilings: parseCeilings(e),
      billingPeriodStart: Date.parse(`${e.BILLING_PERIOD_START}T00:00:00Z`),
      maxPendingCharsPerMember: e.MAX_PENDING_PER_MEMBER,
      autoReadMaxAgeMs: e.AUTO_READ_MAX_AGE_SECONDS * 1000,
      prefetch: e.PREFETCH,
    },
    cacheMaxBytes: e.CACHE_MAX_MB * MIB,
    // '' (not undefined): only the environment given here counts, not process.env.
    jobRetentionDays: e.JOB_RETENTION_DAYS,
    sharding,
    voiceWorkers: e.VOICE_WORKERS,
    shared: { accountLedgerUrl: e.ACCOUNT_LEDGER_URL, rateStoreUrl: e.RATE_STORE_URL },
    ops: { metricsPort: e.METRICS_PORT, metricsHost: e.METRICS_HOST, errorWebhookUrl: e.ERROR_WEBHOOK_URL },
    globalDictionaryFile: e.GLOBAL_DICTIONARY_FILE,
    curatedDictionariesDir: e.CURATED_DICTIONARIES_DIR,
    dictionaryCacheChars: e.DICTIONARY_CACHE_CHARS,
    dashboard: parseDashboard(e),
  };
}

/** The dashboard's variables together: a port needs the client secret, and an address needs a port. */
function parseDashboard(e: Env): DashboardConfig | undefined {
  const fail = (variable: string, problem: string): never => {
    throw new ConfigError({ issues: [{ variable, problem }] });
  };
  if (e.DASHBOARD_PORT === undefined) {
    if (e.DASHBOARD_URL !== undefined) fail('DASHBOARD_URL', 'needs DASHBOARD_PORT (the dashboard is off without it)');
    return undefined;
  }
  if (e.DISCORD_CLIENT_SECRET === undefined)
    return fail('DISCORD_CLIENT_SECRET', "is required with DASHBOARD_PORT (the application's OAuth2 client secret)");
  const peers = (e.DASHBOARD_PEERS ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map((entry) => {
      const eq = entry.indexOf('=');
      const shards = eq > 0 ? parseShardIds(entry.slice(0, eq)) : undefined;
      const url = entry.slice(eq + 1).replace(/\/+$/, '');
      if (!shards?.ok || !/^https:\/\/|^http:\/\/(127\.|localhost|\[::1\])/.test(url) || !URL.canParse(url))
        return fail(
          'DASHBOARD_PEERS',
          'must be entries like 4-7=https://b.example.com (shard ids, "=", that host\'s DASHBOARD_URL), separated by spaces',
        );
      return { shards: shards.ids, url };
    });
  return {
    port: e.DASHBOARD_PORT,
    host: e.DASHBOARD_HOST,
    publicUrl: e.DASHBOARD_URL?.replace(/\/+$/, ''),
    clientId: e.DISCORD_CLIENT_ID,
    clientSecret: e.DISCORD_CLIENT_SECRET,
    peers,
  };
}

/** The ceilings, each at least the default it bounds (a lower one would refuse the bot's own default). */
function parseCeilings(e: Env): BudgetCeilings {
  const guild = e.GUILD_MONTHLY_CHARS_MAX ?? e.GUILD_MONTHLY_CHARS;
  const user = e.USER_MONTHLY_CHARS_MAX ?? e.USER_MONTHLY_CHARS;
  // Roles unset: the server ceiling (a member never spends more than the server), never below the member one.
  const role = e.ROLE_MONTHLY_CHARS_MAX ?? Math.max(guild, user);
  const ceilings = { guildMonthlyLimit: guild, userMonthlyLimit: user, roleMonthlyLimit: role };
  const issues: ConfigIssue[] = [];
  const atLeast = (variable: string, value: number, floor: number, of: string) => {
    if (value >= floor) return;
    issues.push({ variable, problem: `must be at least ${of} (${floor}): a ceiling below the default would refuse the default itself` });
  };
  atLeast('GUILD_MONTHLY_CHARS_MAX', ceilings.guildMonthlyLimit, e.GUILD_MONTHLY_CHARS, 'GUILD_MONTHLY_CHARS');
  atLeast('USER_MONTHLY_CHARS_MAX', ceilings.userMonthlyLimit, e.USER_MONTHLY_CHARS, 'USER_MONTHLY_CHARS');
  // A role allowance raises the member limit; below the member default it could raise nothing.
  atLeast('ROLE_MONTHLY_CHARS_MAX', ceilings.roleMonthlyLimit, e.USER_MONTHLY_CHARS, 'USER_MONTHLY_CHARS');
  if (issues.length > 0) throw new ConfigError({ issues });
  return ceilings;
}

/** The shard variables together: SHARD_IDS and SHARD_PROCESSES need a SHARD_COUNT to mean something. */
function parseSharding(e: Env): Config['sharding'] {
  const fail = (variable: string, problem: string): never => {
    throw new ConfigError({ issues: [{ variable, problem }] });
  };
  let ids: number[] | undefined;
  if (e.SHARD_IDS !== undefined) {
    const parsed = parseShardIds(e.SHARD_IDS);
    if (!parsed.ok) fail('SHARD_IDS', `${parsed.problem} (expected ids and ranges such as 0,1 or 4-7)`);
    else ids = parsed.ids;
  }
  const count = e.SHARD_COUNT;
  if (count === undefined && (ids !== undefined || e.SHARD_PROCESSES > 1)) {
    fail(
      ids !== undefined ? 'SHARD_IDS' : 'SHARD_PROCESSES',
      'needs SHARD_COUNT (the total number of shards across every host, or "auto")',
    );
  }
  if (typeof count === 'number') {
    const problem = shardPlanProblem({ count, ids: ids ?? Array.from({ length: count }, (_, i) => i), processes: e.SHARD_PROCESSES });
    if (problem) fail(problem.variable, problem.problem);
  }
  return { count, ids, processes: e.SHARD_PROCESSES };
}
