import { EventEmitter } from 'node:events';
import { getVoiceConnection, type DiscordGatewayAdapterCreator } from '@discordjs/voice';
import { warmMp3Decoder } from '../audio/mp3-opus.ts';
import type { Logger } from '../util/log.ts';
import { VoiceSessionError } from './errors.ts';
import {
  GuildVoiceSession,
  VOICE_RECOVERY_CAUSES,
  type ClipStarted,
  type PlayableAudio,
  type VoiceRecovery,
  type VoiceRecoveryCause,
  type VoiceSession,
  type VoiceSessionPolicy,
  type VoiceSessionState,
} from './session.ts';
import type { VoiceWorkerFault, WorkerClockTrace } from './worker-protocol.ts';
import { VoiceWorkerPool, type WorkerPoolPolicy } from './worker-pool.ts';
import { workerVoicePrivacyCode } from './remote-session.ts';

interface JoinRequest {
  guildId: string;
  channelId: string;
  /**
   * The text channel read in the call (where /join was typed). Joining the call the account is
   * already in keeps the channels it reads when this is one of them (or the voice channel's own
   * chat); otherwise, and on a move, it is the one channel read.
   */
  textChannelId: string | null;
  /** More text channels read in the call, after `textChannelId` (a restart rejoining what it read). */
  alsoRead?: readonly string[];
  /** The bot account that joins (its user id): one voice channel per server for each account. */
  accountId: string;
  /** That account's gateway adapter for the guild. */
  adapterCreator: DiscordGatewayAdapterCreator;
  /** A stage channel: the bot enters its audience and is heard only once it is a speaker (`setSuppressed`). */
  stage?: boolean;
}

/** One listening session as the rest of the bot sees it: one account in one voice channel, and the text channels bound to it. */
export interface SessionInfo {
  guildId: string;
  channelId: string;
  /** The first of `textChannelIds` (where notices about the call go first), or null. */
  textChannelId: string | null;
  /** Every text channel read in the call, in the order they were added (src/domain/read-channels.ts). */
  textChannelIds: readonly string[];
  accountId: string;
  /** In a stage's audience: connected, but nobody hears it. */
  suppressed: boolean;
}

/** A session as remembered across a restart (src/db/voice-sessions.ts). */
interface RememberedSession {
  guildId: string;
  voiceChannelId: string;
  textChannelIds: readonly string[];
  accountId: string;
}

/** Where sessions are remembered across a restart (src/db/voice-sessions.ts). */
interface VoiceSessionMemory {
  save(session: RememberedSession): Promise<void>;
  forget(guildId: string, voiceChannelId: string): Promise<void>;
}

/**
 * Why the account may not go back into a voice channel it was dropped from: the channel is gone,
 * or the account may no longer view it or connect to it. Its session then ends with this reason.
 */
export type RejoinRefusal = 'channel_deleted' | 'no_connect';

/** A session's call recovered (VoiceRecovery), and whose session it is. */
export interface SessionRecovery extends VoiceRecovery {
  channelId: string;
  accountId: string;
}

/** One session's health, for /metrics, the dashboard and /diagnose. */
interface SessionHealth {
  guildId: string;
  channelId: string;
  accountId: string;
  status: VoiceSessionState['status'];
  /** How often its call was recovered, by cause, since it was joined. */
  recoveries: Record<VoiceRecoveryCause, number>;
}

/** A session that ended without /leave: disconnected by someone (4014), not allowed back (RejoinRefusal), or unable to reconnect. */
export interface EndedSession {
  guildId: string;
  voiceChannelId: string;
  /** The text channels it read, each told that reading stopped. */
  textChannelIds: readonly string[];
  accountId: string;
  reason: string;
}

/** A clip's first packet left for the call of voice channel `channelId`. */
export interface SessionClipStarted extends ClipStarted {
  channelId: string;
}

/** How a session is connected now (/diagnose). */
export interface SessionConnection {
  status: VoiceSessionState['status'];
  /** The call's voice privacy code while it is end-to-end encrypted (DAVE), else null. */
  privacyCode: string | null;
}

interface Entry {
  accountId: string;
  session: VoiceSession;
  /** The text channels read in the call, in the order they were added. */
  textChannelIds: string[];
  suppressed: boolean;
  /** Was Ready once: a join it sends from now on is a rejoin, which Discord may refuse (RejoinRefusal). */
  wasReady: boolean;
  recoveries: Record<VoiceRecoveryCause, number>;
}

const noRecoveries = () => Object.fromEntries(VOICE_RECOVERY_CAUSES.map((c) => [c, 0])) as Record<VoiceRecoveryCause, number>;

const SHUTDOWN = 'shutdown';

/**
 * Every listening session: one bot account in one voice channel of a server (an account is in at
 * most one voice channel per server, as on Discord; several accounts read several channels). A
 * session that ends for any reason (leave, kick, failed rejoin) is forgotten at once, so "/join
 * says I'm already in" after a disconnect cannot happen. Sessions are remembered (`memory`) until
 * they end for good, so a restart can rejoin them; one that ends without /leave is announced with
 * 'ended', so the reader can be told.
 */
export class VoiceManager extends EventEmitter<{ ended: [EndedSession]; clipStarted: [SessionClipStarted]; recovered: [SessionRecovery] }> {
  /** guildId -> its sessions, in the order they were joined. */
  readonly #guilds = new Map<string, Entry[]>();
  readonly #logger: Logger;
  readonly #memory: VoiceSessionMemory | undefined;
  readonly #sessionOptions: VoiceSessionPolicy;
  readonly #isMain: (accountId: string) => boolean;
  /** Voice workers running the connections (`workers` > 0), else they run on this thread. */
  readonly #workers: VoiceWorkerPool | undefined;
  readonly #mayRejoin: (where: { guildId: string; channelId: string; accountId: string }) => RejoinRefusal | null;
  /** Recoveries by cause in this process, every session's (ended ones' too). */
  readonly #recoveries = noRecoveries();

  /**
   * `isMain`: the main account, whose connections keep @discordjs/voice's default group (the extras'
   * are grouped by account). `mayRejoin`: asked before a session that was Ready signals its channel
   * again (after Discord dropped it, or its worker was replaced); a refusal ends it instead.
   */
  constructor(
    options: {
      logger: Logger;
      memory?: VoiceSessionMemory;
      isMain?: (accountId: string) => boolean;
      mayRejoin?: (where: { guildId: string; channelId: string; accountId: string }) => RejoinRefusal | null;
      workers?: number;
      workerPolicy?: WorkerPoolPolicy;
    } & VoiceSessionPolicy,
  ) {
    super();
    const { logger, memory, isMain, mayRejoin, workers, workerPolicy, ...sessionOptions } = options;
    this.#logger = logger;
    this.#memory = memory;
    this.#isMain = isMain ?? (() => true);
    this.#mayRejoin = mayRejoin ?? (() => null);
    this.#sessionOptions = sessionOptions;
    if (workers) this.#workers = new VoiceWorkerPool({ size: workers, logger, ...workerPolicy });
    // The first cache miss plays from its MP3 at once: the decoder is compiled before it comes.
    if (sessionOptions.playback !== 'mp3') void warmMp3Decoder();
  }

  /** Joins (or moves the account to) a voice channel and waits until the connection is Ready. */
  async join(request: JoinRequest): Promise<VoiceSession> {
    const existing = this.#entryOf(request.guildId, request.accountId);
    if (existing && existing.session.state.status !== 'destroyed') {
      const session = existing.session;
      const stays =
        session.channelId === request.channelId &&
        (request.textChannelId === null ||
          request.textChannelId === request.channelId ||
          existing.textChannelIds.includes(request.textChannelId));
      if (!stays) existing.textChannelIds = textChannelsOf(request);
      session.textChannelId = existing.textChannelIds[0] ?? null;
      if (session.channelId !== request.channelId) {
        existing.suppressed = request.stage === true;
        session.move(request.channelId);
      }
      await session.ready();
      this.#remember(existing);
      return session;
    }
    const { stage, accountId, alsoRead: _alsoRead, ...joining } = request;
    const group = this.#isMain(accountId) ? undefined : accountId;
    // Filled in once the session exists (its connection sends its first join while being made).
    const made: { entry?: Entry } = {};
    const adapterCreator: DiscordGatewayAdapterCreator = (methods) => {
      const adapter = request.adapterCreator(methods);
      return {
        // A rejoin Discord would not answer (the channel is gone, Connect was taken away) is not
        // sent: the session ends, and its audience is told why.
        sendPayload: (payload) => {
          const refusal = made.entry?.wasReady ? this.#refusal(request.guildId, accountId, payload) : null;
          if (!refusal) return adapter.sendPayload(payload);
          const refused = made.entry!.session;
          queueMicrotask(() => refused.destroy(refusal));
          return true;
        },
        destroy: () => adapter.destroy(),
      };
    };
    const options = { ...this.#sessionOptions, ...joining, adapterCreator, ...(group ? { group } : {}) };
    const session = this.#workers ? this.#workers.open(options) : new GuildVoiceSession({ ...options, logger: this.#logger });
    const joined: Entry = {
      accountId,
      session,
      textChannelIds: textChannelsOf(request),
      suppressed: stage === true,
      wasReady: false,
      recoveries: noRecoveries(),
    };
    made.entry = joined;
    this.#guilds.set(request.guildId, [...(this.#guilds.get(request.guildId) ?? []), joined]);
    session.on('clipStarted', (started) => this.emit('clipStarted', { ...started, channelId: session.channelId }));
    session.on('recovered', (recovery) => {
      joined.recoveries[recovery.cause]++;
      this.#recoveries[recovery.cause]++;
      this.emit('recovered', { ...recovery, channelId: session.channelId, accountId });
    });
    session.on('stateChange', (_old, next) => {
      if (next.status === 'ready') joined.wasReady = true;
      if (next.status !== 'destroyed' || !this.#drop(request.guildId, joined)) return;
      this.#logger.info({ guildId: request.guildId, channelId: session.channelId, reason: next.reason }, 'voice session ended');
      // Ended by something other than /leave or a shutdown: not rejoined after a restart, and
      // whoever listens tells the channel that reading stopped.
      if (next.reason === SHUTDOWN) return;
      this.#forget(request.guildId, session.channelId);
      if (joined.wasReady)
        this.emit('ended', {
          guildId: request.guildId,
          voiceChannelId: session.channelId,
          textChannelIds: [...joined.textChannelIds],
          accountId,
          reason: next.reason,
        });
    });
    await session.ready();
    this.#remember(joined);
    return session;
  }

  /** Why `accountId` may not join the channel `payload` (gateway op 4) asks for, if it may not. */
  #refusal(guildId: string, accountId: string, payload: unknown): RejoinRefusal | null {
    const { op, d } = (payload ?? {}) as { op?: unknown; d?: { channel_id?: unknown } };
    if (op !== 4 || typeof d?.channel_id !== 'string') return null;
    const refusal = this.#mayRejoin({ guildId, channelId: d.channel_id, accountId });
    if (refusal) this.#logger.info({ guildId, channelId: d.channel_id, refusal }, 'not rejoining the voice channel');
    return refusal;
  }

  /** Each session's health: where it is, its state, and its recoveries by cause. */
  health(): SessionHealth[] {
    return [...this.#guilds].flatMap(([guildId, entries]) =>
      entries.map((e) => ({
        guildId,
        channelId: e.session.channelId,
        accountId: e.accountId,
        status: e.session.state.status,
        recoveries: { ...e.recoveries },
      })),
    );
  }

  /** Recoveries by cause in this process since it started, ended sessions' included. */
  recoveries(): Record<VoiceRecoveryCause, number> {
    return { ...this.#recoveries };
  }

  /** Each voice worker's packet clock since the last ask (none when voice runs on the main thread). */
  clockTraces(): Promise<WorkerClockTrace[]> {
    return this.#workers?.clockTraces() ?? Promise.resolve([]);
  }

  /** Tests and benchmarks only (YOMIAGE_TEST_VOICE_FAULTS): every voice worker fails as `kind` says; how many there were. */
  injectFault(kind: VoiceWorkerFault): number {
    return this.#workers?.injectFault(kind) ?? 0;
  }

  /** The guild's sessions, in the order they were joined. */
  sessions(guildId: string): SessionInfo[] {
    return (this.#guilds.get(guildId) ?? []).map((e) => info(guildId, e));
  }

  /** The session in voice channel `channelId` of the guild, if one of the accounts is there. */
  at(guildId: string, channelId: string): SessionInfo | undefined {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    return entry && info(guildId, entry);
  }

  /** The session of `accountId` in the guild (an account is in one voice channel per server at most). */
  ofAccount(guildId: string, accountId: string): SessionInfo | undefined {
    const entry = this.#entryOf(guildId, accountId);
    return entry && info(guildId, entry);
  }

  /** The session that reads text channel `channelId`: the one it is bound to, else the one whose voice channel's own chat it is. */
  boundTo(guildId: string, channelId: string): SessionInfo | undefined {
    const entries = this.#guilds.get(guildId) ?? [];
    const entry = entries.find((e) => e.textChannelIds.includes(channelId)) ?? entries.find((e) => e.session.channelId === channelId);
    return entry && info(guildId, entry);
  }

  /**
   * Reads `textChannelId` in the call of `channelId` too, after the channels it reads (the caller
   * applied the rules of src/domain/read-channels.ts); remembered for a restart. False: no session
   * there, or it reads that channel already.
   */
  addTextChannel(guildId: string, channelId: string, textChannelId: string): boolean {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    if (!entry || entry.textChannelIds.includes(textChannelId)) return false;
    entry.textChannelIds = [...entry.textChannelIds, textChannelId];
    entry.session.textChannelId = entry.textChannelIds[0] ?? null;
    this.#remember(entry);
    return true;
  }

  /** Stops reading `textChannelId` in the call of `channelId` (the others stay); remembered. False: it was not read there. */
  removeTextChannel(guildId: string, channelId: string, textChannelId: string): boolean {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    if (!entry?.textChannelIds.includes(textChannelId)) return false;
    entry.textChannelIds = entry.textChannelIds.filter((id) => id !== textChannelId);
    entry.session.textChannelId = entry.textChannelIds[0] ?? null;
    this.#remember(entry);
    return true;
  }

  /**
   * How the session in `channelId` is connected, and its call's privacy code while it is
   * end-to-end encrypted (DAVE): @discordjs/voice's `voicePrivacyCode`, read where the connection runs.
   */
  connection(guildId: string, channelId: string): SessionConnection | undefined {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    if (!entry) return undefined;
    const group = this.#isMain(entry.accountId) ? undefined : entry.accountId;
    const code = this.#workers ? workerVoicePrivacyCode(guildId, group) : getVoiceConnection(guildId, group)?.voicePrivacyCode;
    return { status: entry.session.state.status, privacyCode: code ?? null };
  }

  /** How many sessions `accountId` has, every server together (how busy the account is). */
  countOf(accountId: string): number {
    let n = 0;
    for (const entries of this.#guilds.values()) n += entries.filter((e) => e.accountId === accountId).length;
    return n;
  }

  /** Leaves the voice channel for good (not rejoined after a restart); false when no session is there. */
  leave(guildId: string, channelId: string): boolean {
    this.#forget(guildId, channelId);
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    if (!entry) return false;
    this.#drop(guildId, entry);
    entry.session.destroy('left');
    return true;
  }

  /** The account was disconnected by someone (its voice state went to no channel): ends its session, emitting 'ended'. */
  disconnected(guildId: string, accountId: string, reason: string): boolean {
    const entry = this.#entryOf(guildId, accountId);
    if (!entry) return false;
    entry.session.destroy(reason);
    return true;
  }

  /** Someone moved the account to another channel of the guild: its session's scope follows. */
  moved(guildId: string, accountId: string, channelId: string): boolean {
    const entry = this.#entryOf(guildId, accountId);
    if (!entry || entry.session.channelId === channelId) return false;
    entry.session.channelId = channelId;
    this.#remember(entry);
    return true;
  }

  /**
   * Connected in `channelId` where the bot is heard: in a stage, only while it is a speaker.
   * Everything that decides whether to read aloud or play asks this, so in a stage's audience
   * auto-read spends nothing and /say is attached.
   */
  isConnected(guildId: string, channelId: string): boolean {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    return entry !== undefined && !entry.suppressed;
  }

  /** The account is in a stage's audience (true) or a speaker (false), from its own voice state's `suppress`. */
  setSuppressed(guildId: string, accountId: string, suppressed: boolean): void {
    const entry = this.#entryOf(guildId, accountId);
    if (entry) entry.suppressed = suppressed;
  }

  /** Plays one utterance in the session of `channelId` (see GuildVoiceSession.play). */
  play(guildId: string, channelId: string, audio: PlayableAudio, signal: AbortSignal): Promise<void> {
    const entry = this.#guilds.get(guildId)?.find((e) => e.session.channelId === channelId);
    if (!entry) return Promise.reject(new VoiceSessionError('no_session', { guildId }));
    return entry.session.play(audio, signal);
  }

  /** Every session, every server. */
  get size(): number {
    let n = 0;
    for (const entries of this.#guilds.values()) n += entries.length;
    return n;
  }

  /** Shutdown: leaves every channel but keeps them remembered, so the next start rejoins them. */
  destroyAll(): void {
    const all = [...this.#guilds.values()].flat();
    this.#guilds.clear();
    for (const entry of all) entry.session.destroy(SHUTDOWN);
    void this.#workers?.close();
  }

  #entryOf(guildId: string, accountId: string): Entry | undefined {
    return this.#guilds.get(guildId)?.find((e) => e.accountId === accountId);
  }

  /** Takes `entry` out of the guild's sessions; false when it was not there any more. */
  #drop(guildId: string, entry: Entry): boolean {
    const entries = this.#guilds.get(guildId);
    if (!entries?.includes(entry)) return false;
    const rest = entries.filter((e) => e !== entry);
    if (rest.length > 0) this.#guilds.set(guildId, rest);
    else this.#guilds.delete(guildId);
    return true;
  }

  // Remembering is best effort and never holds up voice: a failed write is logged.
  #remember(entry: Entry): void {
    const { guildId, channelId: voiceChannelId } = entry.session;
    this.#memory
      ?.save({ guildId, voiceChannelId, textChannelIds: [...entry.textChannelIds], accountId: entry.accountId })
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not remember the voice session'));
  }

  #forget(guildId: string, voiceChannelId: string): void {
    this.#memory
      ?.forget(guildId, voiceChannelId)
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not forget the voice session'));
  }
}

function info(guildId: string, e: Entry): SessionInfo {
  const textChannelIds = [...e.textChannelIds];
  return {
    guildId,
    channelId: e.session.channelId,
    textChannelId: textChannelIds[0] ?? null,
    textChannelIds,
    accountId: e.accountId,
    suppressed: e.suppressed,
  };
}

/** The text channels a join reads: the one it was asked from, then those it read before a restart (each once). */
function textChannelsOf(request: Pick<JoinRequest, 'textChannelId' | 'alsoRead'>): string[] {
  const all = [request.textChannelId, ...(request.alsoRead ?? [])].filter((id): id is string => id !== null);
  return [...new Set(all)];
}
