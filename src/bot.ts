import { join } from 'node:path';
import { Client, Events, GatewayIntentBits, Options, Partials, type ClientOptions } from 'discord.js';
import { mp3ToOggOpus } from './audio/transcode.ts';
import { ConfigError, type Config } from './config.ts';
import { startCheckpointer } from './db/checkpointer.ts';
import { openDatabase, type Db } from './db/database.ts';
import { createRepositories } from './db/repositories.ts';
import { type StoredJob } from './db/advanced-jobs.ts';
import { ChargeSession } from './billing/charge-session.ts';
import { CharacterBudget } from './billing/budget.ts';
import { GlobalDictionary } from './speech/text/global-dictionary.ts';
import { CuratedDictionaries } from './speech/text/curated-dictionaries.ts';
import { AudioCache } from './speech/synthesis/cache.ts';
import { AnnouncementAllowance, NameReader } from './speech/text/names.ts';
import { SpeechScheduler } from './speech/queue/scheduler.ts';
import { audienceOf } from './speech/queue/utterance.ts';
import { PendingUtteranceStore } from './speech/queue/journal.ts';
import { createSynthesizer } from './speech/synthesis/synthesize.ts';
import { VoiceChecker } from './speech/synthesis/voice-check.ts';
import { countChars } from './tts/chars.ts';
import { TtsClient, type TtsClientInit } from './tts/client.ts';
import { AdvancedJobs, type JobCharging } from './tts/jobs.ts';
import { createSqliteLimiter, FairRateLimiter, type RateLimits } from './tts/limiter/fair.ts';
import { RATE_LIMITS } from './tts/limiter/limiter.ts';
import { PostgresWindowStore } from './tts/limiter/postgres.ts';
import { closePostgres, openPostgres, type PgPool } from './db/postgres.ts';
import { PooledLedger } from './db/pooled-ledger.ts';
import { systemClock, type Clock } from './util/clock.ts';
import type { Logger } from './util/log.ts';
import { makePrivate, type ModeChange } from './util/private-files.ts';
import { VoiceManager } from './voice/manager.ts';
import { VoiceSessionStore } from './db/voice-sessions.ts';
import { RateWindowTable } from './db/rate-window.ts';
import { botReadiness } from './ops/health.ts';
import { meterCharges, meteredSink, meterScheduler } from './ops/instrument.ts';
import { BotMetrics } from './ops/metrics.ts';
import type { Readiness } from './ops/ops-server.ts';
import type { AnyCommand } from './discord/interactions/command.ts';
import type { BotContext } from './discord/interactions/context.ts';
import { describeDictionaryFileProblem } from './usecases/dictionary-problems.ts';
import { PREVIEW_RATE } from './usecases/previews.ts';
import { SlidingCounts } from './util/sliding-counts.ts';
import { dispatchInteraction } from './discord/interactions/interactions.ts';
import { loadCommands } from './discord/interactions/loader.ts';
import { resumeAfterRestart } from './discord/events/start-up.ts';
import { discordRestAgent } from './discord/rest-agent.ts';
import { loadEmojiNames } from './speech/text/emoji.ts';
import { StaleDropNotices } from './discord/events/stale-drop-notices.ts';
import { Audiences } from './discord/audience/audiences.ts';
import { SpeechDelivery } from './discord/delivery/delivery.ts';
import { AutoReader } from './discord/events/auto-read.ts';
import { FloodGate } from './discord/events/flood.ts';
import { ChatChanges } from './discord/events/chat-changes.ts';
import { ButtonQuestions } from './discord/interactions/buttons.ts';
import type { ClearReason } from './discord/delivery/meta.ts';
import { NarrateJobs } from './usecases/narrate-jobs.ts';
import { inviteUrl } from './discord/invite.ts';
import { BotAccounts } from './discord/voice-control/accounts.ts';
import { ExtraLogins } from './discord/voice-control/account-logins.ts';
import { Notices } from './discord/delivery/notices.ts';
import { InteractionReplies } from './discord/delivery/replies.ts';
import { SpeechRequests } from './discord/interactions/speech-requests.ts';
import { VoiceChannelStatus } from './discord/voice-control/voice-status.ts';
import { rejoinRefusal, VoiceControl } from './discord/voice-control/voice-control.ts';
import { VoiceStateEvents } from './discord/events/voice-events.ts';
import { MessageFatesTable } from './db/message-fates.ts';
import { Diagnosis } from './discord/diagnosis/diagnosis.ts';
import { MessageFates, recordDeliveries } from './discord/diagnosis/fates.ts';
import { MessageContentWatch } from './discord/diagnosis/message-content.ts';
import { SessionHealth } from './ops/session-health.ts';

export interface BotOptions {
  config: Config;
  logger: Logger;
  clock?: Clock;
  /** Extra discord.js client options (tests shorten timeouts). */
  clientOptions?: Partial<ClientOptions>;
  /** Voice timings (tests shorten the recipe's waits). */
  voice?: ConstructorParameters<typeof VoiceManager>[0] extends infer O ? Omit<O, 'logger'> : never;
  /** TTS client retry and job policies (tests shorten the spec's waits). */
  tts?: Pick<TtsClientInit, 'retry' | 'jobs'>;
  /** Advanced job leases and the pruning of ended jobs (tests shorten them; pruning is daily). */
  jobs?: { leaseMs?: number; pruneEveryMs?: number };
  /** The service's rate windows (tests that drive many requests against a lenient emulator widen them). */
  rateLimits?: RateLimits;
  /** Shortest time between two spoken stale-drop notices in a guild (events/stale-drop-notices.ts; tests shorten it). */
  staleNoticeIntervalMs?: number;
  /** Where the bot counts; default: a registry of its own without process metrics. */
  metrics?: BotMetrics;
  /** How long a question asked with buttons waits for its click (tests shorten it). */
  buttonTimeoutMs?: number;
  /** How often the global dictionary file and the curated lists are checked for changes (tests shorten it). */
  dictionaryWatchMs?: number;
  /** How long a member past the flood limit is quiet before their summary is spoken (events/flood.ts; tests shorten it). */
  floodQuietMs?: number;
  /** The cache's MP3 to Ogg Opus conversion (default: mp3ToOggOpus, in-process; tests make it fail). */
  transcode?: (mp3: Buffer) => Promise<Buffer>;
}

export interface Bot {
  client: Client;
  context: BotContext;
  commands: Map<string, AnyCommand>;
  db: Db;
  scheduler: SpeechScheduler;
  metrics: BotMetrics;
  /** /readyz: gateway shards ready and the database writable. */
  readiness(): Promise<Readiness>;
  /** Logs in; resolves when the gateway is ready. */
  start(): Promise<void>;
  /** Stops taking work, persists what is still queued, leaves voice, closes the database. */
  stop(): Promise<void>;
}

/** Builds the whole bot from a configuration: every collaborator is created here and passed in. */
export async function createBot(options: BotOptions): Promise<Bot> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics ?? new BotMetrics({ defaultMetrics: false });
  // The operator's bot-wide dictionary: a broken file stops start-up here, naming its problems.
  const globalDictionary = config.globalDictionaryFile
    ? new GlobalDictionary({
        path: config.globalDictionaryFile,
        logger: logger.child({ component: 'dictionary' }),
        describe: (format, problem) => describeDictionaryFileProblem('en', format, problem),
      })
    : undefined;
  const loaded = globalDictionary?.load();
  if (loaded && !loaded.ok)
    throw new ConfigError({ issues: [{ variable: 'GLOBAL_DICTIONARY_FILE', problem: loaded.problems.slice(0, 10).join('; ') }] });
  // The operator's curated lists, which servers may follow: a broken file stops start-up too.
  const curated = config.curatedDictionariesDir
    ? new CuratedDictionaries({
        dir: config.curatedDictionariesDir,
        logger: logger.child({ component: 'dictionary' }),
        describe: (format, problem) => describeDictionaryFileProblem('en', format, problem),
      })
    : undefined;
  const curatedLoaded = curated?.load();
  if (curatedLoaded && !curatedLoaded.ok)
    throw new ConfigError({ issues: [{ variable: 'CURATED_DICTIONARIES_DIR', problem: curatedLoaded.problems.slice(0, 10).join('; ') }] });
  const dbFile = join(config.dataDir, 'bot.sqlite3');
  // DATA_DIR and the database are owner-only; earlier wider modes are narrowed, said once.
  const modes = [makePrivate(config.dataDir, 'dir', { create: true })].filter((c): c is ModeChange => c !== undefined);
  const db = openDatabase(dbFile, { onModes: (changes) => modes.push(...changes) });
  logModes(logger, modes);
  // WAL checkpoints never inside a commit: on a thread of their own only when voice runs on this one.
  const checkpointer = startCheckpointer(db, dbFile, { thread: config.voiceWorkers === 0 });
  // Every accepted utterance is written when accepted; the store never waits for a lock.
  const pendingStore = new PendingUtteranceStore(db, { clock, logger: logger.child({ component: 'queue-store' }) });
  const repos = createRepositories(db, { clock, dictionaryCacheChars: config.dictionaryCacheChars });
  if (globalDictionary) repos.dictionary.setGlobal(globalDictionary);
  if (curated) repos.dictionary.setCurated(curated);
  // What several hosts share lives in PostgreSQL when configured (docs/scaling.md).
  const shared: PgPool[] = [];
  const connect = async (url: string) => {
    const pg = await openPostgres(url);
    shared.push(pg);
    return pg;
  };
  const ledgerError = (err: unknown) => logger.warn({ err }, 'ledger write failed');
  const pooled = config.shared.accountLedgerUrl
    ? new PooledLedger({
        db,
        pg: await connect(config.shared.accountLedgerUrl),
        onError: (err) => logger.warn({ err }, 'copying to the shared account ledger failed; retrying'),
      })
    : undefined;
  const budget = new CharacterBudget({
    db,
    ...(pooled ? { ledger: pooled } : {}),
    clock,
    defaults: {
      userMonthlyLimit: config.limits.userMonthlyChars,
      guildMonthlyLimit: config.limits.guildMonthlyChars,
      accountMonthlyLimit: config.limits.accountMonthlyChars,
    },
    ceilings: config.limits.ceilings,
    period: { anchor: config.limits.billingPeriodStart, days: 30 },
    onCharged: meterCharges(metrics),
    // Role allowances: the member's roles as this process's gateway cache knows them.
    roleAllowance: (guildId, userId) => {
      const member = client.guilds.cache.get(guildId)?.members.cache.get(userId);
      return member ? repos.roleAllowances.largestFor(guildId, member.roles.cache.keys()) : undefined;
    },
  });
  // What this host spent this period before it shared the pool counts in the pool too.
  await pooled?.start(budget.currentPeriod());
  // A process that crashed between holding characters and settling them left holds behind.
  await budget.releaseStale();
  // One rate budget for every process on this host (they share the SQLite file), or for every host
  // behind one IP (RATE_STORE_URL).
  const limits = options.rateLimits ? { limits: options.rateLimits } : {};
  const windowStore = config.shared.rateStoreUrl ? new PostgresWindowStore({ pg: await connect(config.shared.rateStoreUrl) }) : undefined;
  const limiter = windowStore
    ? new FairRateLimiter({ store: windowStore, clock, ...limits })
    : createSqliteLimiter(db, { clock, ...limits });
  const rateWindow = new RateWindowTable(db);
  const windowMs = (kind: 'standard' | 'advanced') => (options.rateLimits ?? RATE_LIMITS)[kind].windowMs;
  const tts = new TtsClient({
    token: config.tts.token,
    baseUrl: config.tts.baseUrl,
    plan: config.tts.plan,
    limiter,
    clock,
    logger: logger.child({ component: 'tts' }),
    download: { allowLoopback: config.tts.allowLoopback },
    onExchange: (call, status) => metrics.ttsRequest(call, status),
    ...options.tts,
  });
  const cache = new AudioCache({
    db,
    dir: join(config.dataDir, 'audio'),
    maxBytes: config.cacheMaxBytes,
    clock,
    transcode: options.transcode ?? ((mp3) => mp3ToOggOpus(mp3)),
  });
  // Advanced jobs are persisted from creation, so a restart resumes polling and still delivers;
  // the ledger follows the jobs this process did not start itself (docs/operating.md, "Characters are money").
  const jobCharge = (job: { guildId: string; userId: string; chars: number | null; request: { text: string | null } }) => [
    { guildId: job.guildId, userId: job.userId, endpoint: 'advanced' as const, chars: job.chars ?? countChars(job.request.text ?? '') },
  ];
  const charging: JobCharging = {
    forJob: (job) =>
      ChargeSession.forExistingJob(budget, jobCharge(job), { guildId: job.guildId, endpoint: 'advanced', onError: ledgerError }),
    ensureCharged: async (job) => void (await budget.recordJobCharge(job.jobId, jobCharge(job))),
    refund: async (jobId) => void (await budget.refundJob(jobId)),
  };
  const jobs = new AdvancedJobs({
    client: tts,
    repos,
    clock,
    logger: logger.child({ component: 'jobs' }),
    charging,
    retentionMs: config.jobRetentionDays * 86_400_000,
    leaseMs: options.jobs?.leaseMs,
  });
  // /narrate's jobs: who holds them until their audio is delivered (src/usecases/narrate-jobs.ts).
  const narrateJobs = new NarrateJobs({ jobs, repos, store: pendingStore, logger: logger.child({ component: 'jobs' }) });
  const synthesizer = createSynthesizer({
    client: tts,
    cache,
    budget,
    history: repos.history,
    logger: logger.child({ component: 'speech' }),
    narrate: narrateJobs.narrate,
  });
  const scheduler = new SpeechScheduler({
    // Itself, not a wrapper: the scheduler looks parts up in the cache through its `lookup` before it
    // asks for a grant (a cached line needs none); cache hits are counted where audio is delivered.
    synthesize: synthesizer,
    clock,
    prefetch: config.limits.prefetch,
    maxPendingCharsPerMember: config.limits.maxPendingCharsPerMember,
    maxAutoAgeMs: config.limits.autoReadMaxAgeMs,
    logger: logger.child({ component: 'queue' }),
    journal: pendingStore,
    // The client's own limiter: batches are formed once its grant is in hand.
    limiter,
    // /reading freshness and speed-up: how a busy voice channel keeps up, read at each decision.
    freshness: (guildId) => {
      const reading = repos.reading.get(guildId);
      return { horizonMs: reading.freshSeconds * 1000, speedUp: reading.speedUp };
    },
  });
  const voiceSessions = new VoiceSessionStore(db, { clock });
  // The main account's id is known once it logged in (before any session is joined).
  const voice = new VoiceManager({
    logger: logger.child({ component: 'voice' }),
    memory: voiceSessions,
    isMain: (accountId) => accountId === accounts.mainId,
    // A session Discord dropped rejoins only where the account may still connect (discord/voice-control/voice-control.ts).
    mayRejoin: (where) => rejoinRefusal(accounts, where),
    workers: config.voiceWorkers,
    ...options.voice,
  });

  const discordRest = { agent: discordRestAgent(), ...(config.discord.apiUrl ? { api: config.discord.apiUrl } : {}) };
  const client = new Client({
    intents: [
      GatewayIntentBits.Guilds,
      GatewayIntentBits.GuildMessages,
      GatewayIntentBits.MessageContent,
      GatewayIntentBits.GuildVoiceStates,
      GatewayIntentBits.GuildMembers,
      // Bans (not privileged): a banned member's queued messages are not read (chat-changes.ts).
      GatewayIntentBits.GuildModeration,
    ],
    // Events about messages it does not cache (all of them, below) still arrive, as partials:
    // deletions and edits need only ids (chat-changes.ts).
    partials: [Partials.GuildMember, Partials.Message],
    // discord.js keeps the last 200 messages of every channel by default: with the Message Content
    // intent, the text of every channel of every server, held for weeks. The bot reads each
    // message once, as it arrives, and answers by id (a reply, a reaction), so it keeps none
    // (`npm run bench:memory` shows the difference).
    makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0 }),
    // Nothing the bot sends pings anyone, whatever a message's text contains.
    allowedMentions: { parse: [], repliedUser: false },
    // Its own HTTP agent: no library imported into this process can change where REST calls go.
    rest: discordRest,
    ...options.clientOptions,
  });
  // The extra accounts (EXTRA_DISCORD_TOKENS) only join voice channels: their servers, their own
  // voice states and nothing else, over the same shards as the main account (so a server's shard
  // lives in one process for every account).
  const makeExtra = () =>
    new Client({
      intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildVoiceStates],
      makeCache: Options.cacheWithLimits({ ...Options.DefaultMakeCacheSettings, MessageManager: 0 }),
      allowedMentions: { parse: [], repliedUser: false },
      rest: discordRest,
      ...options.clientOptions,
    });
  const accounts = new BotAccounts(client, config.discord.extraTokens.map(makeExtra));
  const now = () => clock.now();
  loadEmojiNames(); // before any voice plays (src/speech/text/emoji.ts)
  const names = new NameReader({ clock });
  const notices = new Notices({ client, logger, now });
  const replies = new InteractionReplies({ client, logger, now });

  // Where audio goes: the scheduler's sink, reply progress, and a word for what was dropped.
  // A thread's messages are posted in the thread when its parent posts MP3s (auto-read.ts reads threads for their parent).
  const postsAudio = (guildId: string, channelId: string) => {
    const channel = client.channels.cache.get(channelId);
    return repos.autoRead.postsAudio(guildId, channel?.isThread() ? (channel.parentId ?? channelId) : channelId);
  };
  // Who hears what: the audience of each message and request, and where a batch is played.
  const audiences = new Audiences({ client, voice });
  const delivery = new SpeechDelivery({ client, voice, audiences, replies, notices, jobs: narrateJobs, logger, postsAudio });
  // What became of each message (for "Why wasn't this read?" and /diagnose), and how well each call hears its chat.
  const fates = new MessageFates({ table: new MessageFatesTable(db), now, logger: logger.child({ component: 'fates' }) });
  const health = new SessionHealth();
  const recorded = recordDeliveries(fates, (ready, signal) => delivery.deliver(ready, signal), now);
  scheduler.setDefaultSink(meteredSink(recorded, { metrics, voice, now, health }));
  meterScheduler(scheduler, metrics, { health, now });
  voice.on('recovered', ({ cause }) => metrics.voiceRecovery(cause));
  metrics.setSources({
    rateWindowUsed: (kind) =>
      windowStore ? windowStore.used(kind, clock.now(), windowMs(kind)) : rateWindow.used(kind, clock.now(), windowMs(kind)),
    voiceSessions: () => voice.size,
    queueDepth: () => scheduler.stats().reduce((n, g) => n + g.queued + g.synthesizing + g.ready, 0),
    sessionHealth: () => health.all(clock.now()),
  });
  scheduler.on('progress', (event) => replies.onProgress(event));
  scheduler.on('cleared', ({ items, reason }) => {
    delivery.cancelled(items, (reason as ClearReason | undefined) ?? 'clear');
    fates.noteAll(items, 'cleared', () => ({ reason: reason ?? 'clear' }));
  });
  const staleNotices = new StaleDropNotices({ voice, repos, scheduler, logger, now, minIntervalMs: options.staleNoticeIntervalMs });
  scheduler.on('dropped', ({ guildId, items }) => {
    logger.warn({ guildId, count: items.length }, 'auto-read messages dropped: the queue was too far behind');
    const told = repos.reading.get(guildId).staleNotice;
    fates.noteAll(items, 'too_old', () => ({ told }));
    // Told in the session each was queued for.
    const byAudience = Map.groupBy(items, (item) => audienceOf(item));
    for (const [audience, dropped] of byAudience) staleNotices.onDropped(guildId, dropped.length, audience);
  });

  // What turns Discord's events into speech: commands, messages, voice states.
  const voiceStatus = new VoiceChannelStatus({
    client,
    clientOf: (accountId) => accounts.client(accountId),
    repos,
    logger: logger.child({ component: 'voice-status' }),
  });
  const voiceControl = new VoiceControl({
    client,
    accounts,
    voice,
    scheduler,
    names,
    logger,
    status: voiceStatus,
    // Where a channel's messages are read once one text channel is taken out of a call (a thread: for its parent).
    readIn: (guildId, channelId) => {
      const channel = client.channels.cache.get(channelId);
      return autoRead.scopeOf(guildId, channelId, channel?.isThread() ? channel.parentId : null)?.session?.channelId ?? null;
    },
    onUnread: (items) => fates.noteAll(items, 'cleared', () => ({ reason: 'unbound' })),
  });
  const buttons = new ButtonQuestions({ logger, timeoutMs: options.buttonTimeoutMs });
  // One checker for every surface: a voice the service confirmed is known to all of them.
  const voices = new VoiceChecker({ synthesizer });
  const onRefused = () => metrics.messages('refused');
  const requests = new SpeechRequests({
    client,
    scheduler,
    budget,
    repos,
    replies,
    plan: config.tts.plan,
    voices,
    buttons,
    onRefused,
    audience: (guildId, channelId, userId) => audiences.requestAudience(guildId, channelId, userId),
  });
  const audience = (guildId: string, channelId: string, session?: { channelId: string; suppressed: boolean } | null) =>
    audiences.audience(guildId, channelId, session);
  // The flood limit's counts, and the summaries spoken in place of what was past it.
  const flood = new FloodGate({ scheduler, clock, logger: logger.child({ component: 'flood' }), quietMs: options.floodQuietMs });
  const autoRead = new AutoReader({
    voice,
    repos,
    names,
    scheduler,
    notices,
    audience,
    onNotQueued: (outcome) => metrics.messages(outcome),
    fates,
    now,
    flood,
  });
  const voiceEvents = new VoiceStateEvents({
    client,
    accounts,
    voice,
    repos,
    scheduler,
    control: voiceControl,
    notices,
    logger,
    status: voiceStatus,
    announcements: new AnnouncementAllowance({ now }),
  });
  voice.on('ended', (ended) => voiceEvents.onSessionEnded(ended));

  const previews = new SlidingCounts({ ...PREVIEW_RATE, now });
  const contentWatch = new MessageContentWatch();
  const diagnosis = new Diagnosis({
    voice,
    scheduler,
    budget,
    scopeOf: (guildId, channelId, parentId) => autoRead.scopeOf(guildId, channelId, parentId),
    fates,
    content: contentWatch,
    health,
    rateWindow: (kind) => limiter.look(kind),
    now,
    mainAccountId: () => accounts.mainId,
    recoveries: (guildId, channelId) => voice.health().find((h) => h.guildId === guildId && h.channelId === channelId)?.recoveries,
  });
  const context: BotContext = {
    config,
    logger,
    repos,
    budget,
    voice,
    requests,
    voiceControl,
    autoRead,
    buttons,
    synthesizer,
    voices,
    previews,
    onRefused,
    diagnosis,
  };
  const commands = await loadCommands();

  client.on(Events.InteractionCreate, (interaction) => void dispatchInteraction(interaction, commands, context));
  client.on(Events.MessageCreate, (message) => {
    try {
      // Whether Discord sends message content at all (diagnosis/message-content.ts): every guild message says.
      if (message.inGuild()) contentWatch.saw(message, clock.now());
      autoRead.read(message);
    } catch (error) {
      logger.error({ err: error, guildId: message.guildId, channelId: message.channelId }, 'auto-read failed');
    }
  });
  // Deleted messages are never read, edited ones are read as edited, bans take theirs along.
  const chatChanges = new ChatChanges({ scheduler, autoRead, logger, onTakenBack: (items, why) => fates.noteAll(items, why) });
  chatChanges.listen(client);
  client.on(
    Events.VoiceStateUpdate,
    (oldState, newState) =>
      void voiceEvents
        .onVoiceState(oldState, newState)
        .catch((error: unknown) => logger.error({ err: error, guildId: newState.guild.id }, 'voice state handling failed')),
  );
  // Each account's own voice state, from its own gateway connection.
  const wireAccount = (account: Client) => {
    account.on(Events.ChannelDelete, (channel) => {
      if (!channel.isDMBased()) voiceEvents.channelDeleted(channel.guildId, channel.id);
    });
    account.on(Events.VoiceStateUpdate, (oldState, newState) => {
      if (newState.id === account.user?.id) voiceEvents.ownState(newState.id, oldState, newState);
    });
    if (account === client) return;
    account.on(Events.Error, (error) => logger.error({ err: error, account: account.user?.id }, 'discord client error (extra account)'));
    account.on(Events.ShardDisconnect, (event, shardId) =>
      logger.warn({ code: event.code, shardId, account: account.user?.id }, 'gateway disconnected (extra account)'),
    );
  };
  wireAccount(client);
  // The extra accounts log in (and again, after a failure) through their own lifecycle: each new client is wired there.
  const extraLogins = new ExtraLogins({
    accounts,
    tokens: config.discord.extraTokens,
    makeClient: makeExtra,
    wire: wireAccount,
    logger,
    clock,
    firstRetryMs: config.extraAccountRetryMs,
  });
  client.on(Events.Error, (error) => logger.error({ err: error }, 'discord client error'));
  client.on(Events.ShardDisconnect, (event, shardId) => logger.warn({ code: event.code, shardId }, 'gateway disconnected'));

  let stopped = false;
  let stopWatching = () => {};
  let pruneTimer: NodeJS.Timeout | undefined;
  const prune = () => void jobs.prune().catch((error: unknown) => logger.warn({ err: error }, 'pruning ended advanced jobs failed'));
  return {
    client,
    context,
    commands,
    db,
    scheduler,
    metrics,
    // One probe shared by /readyz and the shard manager's questions (at most one write a second).
    readiness: botReadiness({ client, extras: () => accounts.extras, db }),
    async start() {
      // Every account logged in (or, for an extra one, failed and left to retry) before anything is
      // rejoined: a session may be an extra account's. Only the main account's failure stops the start.
      const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
      await Promise.all([client.login(config.discord.token).then(() => ready), extraLogins.start()]);
      // Back into the voice channels of before, then what was accepted and not yet spoken.
      const resumed = await resumeAfterRestart({
        client,
        accounts,
        voice,
        sessions: voiceSessions,
        store: pendingStore,
        scheduler,
        repos,
        notices,
        logger,
        stillHeard: (guildId, audience) => audiences.stillHeard(guildId, audience),
        requestAudience: (guildId, channelId, userId) => audiences.requestAudience(guildId, channelId, userId),
        chatChanges,
        onNotRestored: (items, why) =>
          why === 'deleted' ? fates.noteAll(items, 'deleted') : fates.noteAll(items, 'cleared', () => ({ reason: 'restart' })),
      });
      logger.info(
        {
          guilds: client.guilds.cache.size,
          shards: client.options.shards,
          ...resumed,
          user: client.user?.tag,
          invite: client.application ? inviteUrl(client.application.id) : undefined,
          // Each extra account's own invite: a server reads as many voice channels at once as it has accounts.
          ...(accounts.extras.length > 0
            ? {
                extraAccounts: accounts.extras.map(({ client: e, state }) => ({
                  user: e.user?.tag,
                  state,
                  invite: e.application ? inviteUrl(e.application.id) : undefined,
                })),
              }
            : {}),
        },
        'bot ready',
      );
      // Advanced jobs a previous process created: finish them and deliver (or say why not). Jobs
      // another live process holds are left to it; those of a process that died are taken over
      // once its lease runs out.
      const deliver = (job: StoredJob, result: { mp3: Buffer; seed?: number }) => delivery.deliverRecoveredJob(job, result);
      const tell = (job: StoredJob, error: { code: string; message: string }) => delivery.tellRecoveredJobFailure(job, error);
      void jobs
        .resumeUnfinished(deliver, tell)
        .then((summary) => {
          if (summary.delivered.length || summary.failed.length)
            logger.info({ delivered: summary.delivered.length, failed: summary.failed.length }, 'resumed advanced jobs');
        })
        .catch((error: unknown) => logger.error({ err: error }, 'resuming advanced jobs failed'));
      stopWatching = jobs.watch(deliver, tell);
      fates.start();
      for (const stopDictionary of [globalDictionary?.watch(options.dictionaryWatchMs), curated?.watch(options.dictionaryWatchMs)]) {
        if (!stopDictionary) continue;
        const stopBefore = stopWatching;
        stopWatching = () => (stopBefore(), stopDictionary());
      }
      // Ended jobs keep job and interaction tokens: deleted after the retention period, now and daily.
      prune();
      pruneTimer = setInterval(prune, options.jobs?.pruneEveryMs ?? 86_400_000);
      pruneTimer.unref();
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      stopWatching();
      flood.close();
      extraLogins.stop();
      buttons.close();
      clearInterval(pruneTimer);
      // Nothing to save: what was accepted is on disk since it was accepted, and close() keeps it
      // there (what it interrupts is spoken again after the restart). Voice sessions stay remembered.
      const unspoken = scheduler.close().length;
      // Jobs left unfinished are the next process's to resume at once, not after the lease runs out.
      await jobs.releaseLeases().catch((error: unknown) => logger.warn({ err: error }, 'could not release advanced job leases'));
      voice.destroyAll();
      await Promise.all(accounts.clients.map((account) => account.destroy()));
      // Writes another process's lock kept in memory: written now (waiting is fine at shutdown).
      await pendingStore.close();
      // A miss's Ogg Opus still being written goes into the cache before the database closes.
      await synthesizer.idle?.();
      // What became of the messages lately, for "Why wasn't this read?" after the restart.
      await fates.stop();
      await checkpointer.stop();
      await pooled?.close();
      await Promise.all(shared.map((pg) => closePostgres(pg)));
      db.close();
      logger.info({ unspoken }, 'bot stopped');
    },
  };
}

/** One line for the paths narrowed to owner-only at start-up, one warning for those left as they were. */
function logModes(logger: Logger, changes: readonly ModeChange[]): void {
  const narrowed = changes.filter((c) => 'to' in c);
  const refused = changes.filter((c) => 'refused' in c);
  if (narrowed.length > 0) logger.info({ paths: narrowed }, 'data directory permissions narrowed to owner-only');
  if (refused.length > 0) logger.warn({ paths: refused }, 'data directory permissions left wider than owner-only');
}
