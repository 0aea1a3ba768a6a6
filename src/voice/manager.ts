import { EventEmitter } from 'node:events';
import { getVoiceConnection, type DiscordGatewayAdapterCreator } from '@discordjs/voice';
import { warmMp3Decoder } from '../audio/mp3-opus.ts';
import type { Logger } from '../util/log.ts';
import { VoiceSessionError } from './errors.ts';
import {
  GuildVoiceSession,
  type ClipStarted,
  type PlayableAudio,
  type VoiceSession,
  type VoiceSessionPolicy,
  type VoiceSessionState,
} from './session.ts';
import { VoiceWorkerPool, workerVoicePrivacyCode } from './worker-pool.ts';

export interface JoinRequest {
  guildId: string;
  channelId: string;
  textChannelId: string | null;
  /** The bot account that joins (its user id): one voice channel per server for each account. */
  accountId: string;
  /** That account's gateway adapter for the guild. */
  adapterCreator: DiscordGatewayAdapterCreator;
  /** A stage channel: the bot enters its audience and is heard only once it is a speaker (`setSuppressed`). */
  stage?: boolean;
}

/** One listening session as the rest of the bot sees it: one account in one voice channel, and the text channel bound to it. */
export interface SessionInfo {
  guildId: string;
  channelId: string;
  textChannelId: string | null;
  accountId: string;
  /** In a stage's audience: connected, but nobody hears it. */
  suppressed: boolean;
}

/** A session as remembered across a restart (src/db/voice-sessions.ts). */
export interface RememberedSession {
  guildId: string;
  voiceChannelId: string;
  textChannelId: string | null;
  accountId: string;
}

/** Where sessions are remembered across a restart (src/db/voice-sessions.ts). */
export interface VoiceSessionMemory {
  save(session: RememberedSession): Promise<void>;
  forget(guildId: string, voiceChannelId: string): Promise<void>;
}

/** A session that ended without /leave: disconnected by someone (4014) or unable to reconnect. */
export interface EndedSession {
  guildId: string;
  voiceChannelId: string;
  textChannelId: string | null;
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
  suppressed: boolean;
}

const SHUTDOWN = 'shutdown';

/**
 * Every listening session: one bot account in one voice channel of a server (an account is in at
 * most one voice channel per server, as on Discord; several accounts read several channels). A
 * session that ends for any reason (leave, kick, failed rejoin) is forgotten at once, so "/join
 * says I'm already in" after a disconnect cannot happen. Sessions are remembered (`memory`) until
 * they end for good, so a restart can rejoin them; one that ends without /leave is announced with
 * 'ended', so the reader can be told.
 */
export class VoiceManager extends EventEmitter<{ ended: [EndedSession]; clipStarted: [SessionClipStarted] }> {
  /** guildId -> its sessions, in the order they were joined. */
  readonly #guilds = new Map<string, Entry[]>();
  readonly #logger: Logger;
  readonly #memory: VoiceSessionMemory | undefined;
  readonly #sessionOptions: VoiceSessionPolicy;
  readonly #isMain: (accountId: string) => boolean;
  /** Voice workers running the connections (`workers` > 0), else they run on this thread. */
  readonly #workers: VoiceWorkerPool | undefined;

  /** `isMain`: the main account, whose connections keep @discordjs/voice's default group (the extras' are grouped by account). */
  constructor(
    options: {
      logger: Logger;
      memory?: VoiceSessionMemory;
      isMain?: (accountId: string) => boolean;
      workers?: number;
    } & VoiceSessionPolicy,
  ) {
    super();
    const { logger, memory, isMain, workers, ...sessionOptions } = options;
    this.#logger = logger;
    this.#memory = memory;
    this.#isMain = isMain ?? (() => true);
    this.#sessionOptions = sessionOptions;
    if (workers) this.#workers = new VoiceWorkerPool({ size: workers, logger });
    // The first cache miss plays from its MP3 at once: the decoder is compiled before it comes.
    if (sessionOptions.playback !== 'mp3') void warmMp3Decoder();
  }

  /** Joins (or moves the account to) a voice channel and waits until the connection is Ready. */
  async join(request: JoinRequest): Promise<VoiceSession> {
    const existing = this.#entryOf(request.guildId, request.accountId);
    if (existing && existing.session.state.status !== 'destroyed') {
      const session = existing.session;
      session.textChannelId = request.textChannelId;
      if (session.channelId !== request.channelId) {
        existing.suppressed = request.stage === true;
        session.move(request.channelId);
      }
      await session.ready();
      this.#remember(existing);
      return session;
    }
    const { stage, accountId, ...joining } = request;
    const group = this.#isMain(accountId) ? undefined : accountId;
    const options = { ...this.#sessionOptions, ...joining, ...(group ? { group } : {}) };
    const session = this.#workers ? this.#workers.open(options) : new GuildVoiceSession({ ...options, logger: this.#logger });
    const entry: Entry = { accountId, session, suppressed: stage === true };
    this.#guilds.set(request.guildId, [...(this.#guilds.get(request.guildId) ?? []), entry]);
    session.on('clipStarted', (started) => this.emit('clipStarted', { ...started, channelId: session.channelId }));
    let wasReady = false;
    session.on('stateChange', (_old, next) => {
      if (next.status === 'ready') wasReady = true;
      if (next.status !== 'destroyed' || !this.#drop(request.guildId, entry)) return;
      this.#logger.info({ guildId: request.guildId, channelId: session.channelId, reason: next.reason }, 'voice session ended');
      // Ended by something other than /leave or a shutdown: not rejoined after a restart, and
      // whoever listens tells the channel that reading stopped.
      if (next.reason === SHUTDOWN) return;
      this.#forget(request.guildId, session.channelId);
      if (wasReady)
        this.emit('ended', {
          guildId: request.guildId,
          voiceChannelId: session.channelId,
          textChannelId: session.textChannelId,
          accountId,
          reason: next.reason,
        });
    });
    await session.ready();
    this.#remember(entry);
    return session;
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
    const entry = entries.find((e) => e.session.textChannelId === channelId) ?? entries.find((e) => e.session.channelId === channelId);
    return entry && info(guildId, entry);
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
    const { guildId, channelId: voiceChannelId, textChannelId } = entry.session;
    this.#memory
      ?.save({ guildId, voiceChannelId, textChannelId, accountId: entry.accountId })
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not remember the voice session'));
  }

  #forget(guildId: string, voiceChannelId: string): void {
    this.#memory
      ?.forget(guildId, voiceChannelId)
      .catch((error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not forget the voice session'));
  }
}

function info(guildId: string, e: Entry): SessionInfo {
  const { channelId, textChannelId } = e.session;
  return { guildId, channelId, textChannelId, accountId: e.accountId, suppressed: e.suppressed };
}
