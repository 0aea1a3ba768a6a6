/**
 * The local Discord's gateway: Discord gateway v10, JSON, no compression
 * (https://discord.com/developers/docs/topics/gateway).
 *
 * Sessions survive a dropped connection: events dispatched while the client is away are kept and
 * replayed when it resumes (op 6) with the sequence it last saw, like Discord does. A session
 * closed by the client with 1000/1001, or by the server with 4007/4009, is forgotten; resuming it
 * gets op 9 Invalid Session (d: false) and the client identifies again.
 */
import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { LocalDiscordError } from './errors.ts';
import { randomToken, type FakeGuild } from './fixtures.ts';
import type { FakeBot } from './types.ts';
import { guildCreatePayload, INTENTS, membersChunkPayload, readyPayload } from './gateway-payloads.ts';

export { INTENTS } from './gateway-payloads.ts';

/**
 * The shard that receives a guild's events, by Discord's formula (guild_id >> 22) % shard_count
 * (https://discord.com/developers/docs/events/gateway#sharding). A protocol fact both ends state,
 * not shared code: the bot states it on its side (src/util/shards.ts), and the bot's tests check
 * the two agree.
 */
export function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

const ALL_KNOWN_INTENTS = (1 << 26) - 1;

interface GatewayPayload {
  op: number;
  d: unknown;
  s?: number | null;
  t?: string | null;
}

interface Dispatched {
  s: number;
  t: string;
  d: unknown;
}

export interface GatewaySession {
  id: string;
  /** The bot application whose token identified it. */
  bot: FakeBot;
  intents: number;
  seq: number;
  /** Every dispatch of this session, for replay on resume. */
  backlog: Dispatched[];
  socket: WebSocket | null;
  /** READY (or RESUMED) and all GUILD_CREATEs were written on the current socket. */
  ready: boolean;
  /** [shard_id, shard_count] from Identify ([0, 1] when the client sent none). */
  shard: [number, number];
}

export interface IdentifyRecord {
  /** The bot user that identified (omitted for the main bot). */
  botId?: string;
  intents: number;
  properties: unknown;
  shard: unknown;
  presence: unknown;
}

export interface VoiceStateRequest {
  guild_id: string;
  channel_id: string | null;
  self_mute: boolean;
  self_deaf: boolean;
}

interface GatewayOptions {
  /** The bot a token logs in as, if any. */
  bot: (token: unknown) => FakeBot | undefined;
  mainBotId: string;
  /** Whether a bot is a member of a guild (it hears that guild's events only then). */
  inGuild: (botId: string, guildId: string) => boolean;
  /** The bot a DM channel is with, when it is not the main bot. */
  dmBot: (channelId: string) => string | undefined;
  guilds: FakeGuild[];
  heartbeatIntervalMs: number;
  /** Shards GET /gateway/bot recommends; clients may identify with any count. */
  shardCount: number;
  /** ws:// URL clients resume at (READY `resume_gateway_url`). */
  resumeUrl: () => string;
  /** op 4 from the client. */
  onVoiceStateRequest: (session: GatewaySession, request: VoiceStateRequest) => void;
}

/** Per-dispatch options: the intent that gates the event and a per-session rewrite. */
interface DispatchOptions {
  intent?: number;
  /**
   * The guild the event is about, which picks the shard that receives it; default: the payload's
   * `guild_id`. Events of no guild (DMs) go to shard 0, as on Discord.
   */
  guildId?: string;
  /**
   * The bots whose sessions receive it. Default: the bots in the event's guild; for an event of no
   * guild, the bot whose DM channel it is in (the main bot unless another opened it).
   */
  botIds?: readonly string[];
  transform?: (d: unknown, session: GatewaySession) => unknown;
  /**
   * What members do happens on Discord whether a bot is connected or not (an edit, a deletion while
   * the bot is stopped): sent to nobody then, instead of the error that catches a test which forgot
   * to start its client.
   */
  evenUnheard?: boolean;
}

const MAX_BACKLOG = 2000;

export class FakeGateway extends EventEmitter {
  readonly identifies: IdentifyRecord[] = [];
  /** Every payload the client sent except heartbeats, in order. */
  readonly received: GatewayPayload[] = [];
  readonly sessions = new Map<string, GatewaySession>();
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #options: GatewayOptions;

  constructor(options: GatewayOptions) {
    super();
    this.#options = options;
    this.#wss.on('connection', (socket, request) => this.#onConnection(socket, request));
  }

  /** Hands an HTTP upgrade to the gateway. */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    this.#wss.handleUpgrade(request, socket, head, (ws) => this.#wss.emit('connection', ws, request));
  }

  /** True when a client (of bot `botUserId`, when given) is connected and has been sent READY + GUILD_CREATEs (or RESUMED). */
  isReady(botUserId?: string): boolean {
    for (const session of this.sessions.values()) {
      if (session.ready && session.socket && (botUserId === undefined || session.bot.user.id === botUserId)) return true;
    }
    return false;
  }

  /** The shard ids whose sessions are connected and ready, ascending. */
  readyShards(): number[] {
    const ids = new Set<number>();
    for (const session of this.sessions.values()) if (session.ready && session.socket) ids.add(session.shard[0]);
    return [...ids].sort((a, b) => a - b);
  }

  /** Whether `session` receives the events of `guildId` (Discord's formula; DMs: shard 0). */
  owns(session: GatewaySession, guildId: string | undefined): boolean {
    const [id, count] = session.shard;
    return guildId === undefined ? id === 0 : shardOf(guildId, count) === id;
  }

  /** Resolves when a client (of bot `botUserId`, when given) is ready (see isReady). */
  async waitForReady(timeoutMs: number, botUserId?: string): Promise<void> {
    if (this.isReady(botUserId)) return;
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      while (!this.isReady(botUserId)) await once(this, 'ready', { signal });
    } catch {
      const who = botUserId === undefined ? 'client' : `client of bot ${botUserId}`;
      throw new LocalDiscordError('timeout', { message: `no ${who} became ready within ${timeoutMs} ms` });
    }
  }

  /**
   * Dispatches an event to every live session (connected or waiting to resume) of the shard that
   * owns its guild; resolves once it is written to the connected sockets.
   */
  async dispatch(t: string, d: unknown, options: DispatchOptions = {}): Promise<void> {
    if (this.sessions.size === 0) {
      if (options.evenUnheard) return;
      throw new LocalDiscordError('no_session', { message: `cannot dispatch ${t}: no client has identified` });
    }
    const writes: Promise<void>[] = [];
    const guildId = options.guildId ?? guildIdIn(d);
    const channelId = (d as { channel_id?: unknown } | null)?.channel_id;
    const dmBot = guildId === undefined && typeof channelId === 'string' ? this.#options.dmBot(channelId) : undefined;
    const hears = (botId: string) =>
      options.botIds
        ? options.botIds.includes(botId)
        : guildId === undefined
          ? botId === (dmBot ?? this.#options.mainBotId)
          : this.#options.inGuild(botId, guildId);
    for (const session of this.sessions.values()) {
      if (!hears(session.bot.user.id)) continue;
      if (options.intent !== undefined && (session.intents & options.intent) === 0) continue;
      if (!this.owns(session, guildId)) continue;
      const data = options.transform ? options.transform(d, session) : d;
      writes.push(this.#dispatchTo(session, t, data));
    }
    await Promise.all(writes);
  }

  /** Closes every connected client socket (of the bot with user id `botUserId`, when given) with `code` (resilience tests). */
  closeConnections(code: number, reason = '', botUserId?: string): void {
    for (const session of [...this.sessions.values()]) {
      const socket = session.socket;
      if (!socket || (botUserId !== undefined && session.bot.user.id !== botUserId)) continue;
      this.#detach(session);
      // Discord forgets the session on these codes; a resume then gets Invalid Session.
      if (code === 4004 || code === 4007 || code === 4009) this.sessions.delete(session.id);
      socket.close(code, reason);
    }
  }

  /** Sends op 9 Invalid Session to connected clients; `resumable: false` forgets the sessions. */
  invalidateSessions(resumable: boolean): void {
    for (const session of [...this.sessions.values()]) {
      if (!session.socket) continue;
      send(session.socket, { op: 9, d: resumable });
      if (!resumable) this.sessions.delete(session.id);
    }
  }

  /** Sends op 7 Reconnect to connected clients (they close and resume). */
  requestReconnect(): void {
    for (const session of this.sessions.values()) if (session.socket) send(session.socket, { op: 7, d: null });
  }

  /** Closes all sockets and the WebSocket server. */
  async close(): Promise<void> {
    for (const client of this.#wss.clients) client.terminate();
    this.sessions.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #onConnection(socket: WebSocket, request: IncomingMessage): void {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (url.searchParams.get('v') !== '10') {
      socket.close(4012, 'Invalid API version');
      return;
    }
    if ((url.searchParams.get('encoding') ?? 'json') !== 'json' || url.searchParams.has('compress')) {
      // The fake speaks plain JSON only; zlib-stream would need zlib-sync on the client anyway.
      socket.close(4002, 'Decode error');
      return;
    }
    let session: GatewaySession | null = null;
    socket.on('message', (raw, isBinary) => {
      let payload: GatewayPayload;
      try {
        payload = JSON.parse(isBinary ? Buffer.from(raw as Buffer).toString('utf8') : raw.toString()) as GatewayPayload;
      } catch {
        socket.close(4002, 'Decode error');
        return;
      }
      if (payload.op !== 1) {
        this.received.push(payload);
        this.emit('payload', payload);
      }
      session = this.#onPayload(socket, session, payload);
    });
    socket.on('close', (code) => {
      if (!session || session.socket !== socket) return;
      this.#detach(session);
      // A client closing normally ends its session (discord.js uses 4200 when it means to resume).
      if (code === 1000 || code === 1001) this.sessions.delete(session.id);
    });
    socket.on('error', () => {});
    send(socket, { op: 10, d: { heartbeat_interval: this.#options.heartbeatIntervalMs } });
  }

  #onPayload(socket: WebSocket, session: GatewaySession | null, payload: GatewayPayload): GatewaySession | null {
    switch (payload.op) {
      case 1:
        send(socket, { op: 11 });
        return session;
      case 2:
        if (session) {
          socket.close(4005, 'Already authenticated');
          return session;
        }
        return this.#identify(socket, payload.d as Record<string, unknown>);
      case 6:
        if (session) {
          socket.close(4005, 'Already authenticated');
          return session;
        }
        return this.#resume(socket, payload.d as Record<string, unknown>);
      default:
        break;
    }
    if (!session) {
      socket.close(4003, 'Not authenticated');
      return session;
    }
    switch (payload.op) {
      case 3: // presence update: recorded in `received`, nothing to answer
        return session;
      case 4:
        // Discord takes a guild's voice state only on the shard that owns the guild.
        if (this.owns(session, guildIdIn(payload.d))) this.#options.onVoiceStateRequest(session, payload.d as VoiceStateRequest);
        return session;
      case 8:
        this.#requestGuildMembers(session, payload.d as Record<string, unknown>);
        return session;
      default:
        socket.close(4001, 'Unknown opcode');
        return session;
    }
  }

  #identify(socket: WebSocket, d: Record<string, unknown> | null): GatewaySession | null {
    const bot = d ? this.#options.bot(d.token) : undefined;
    if (!d || !bot) {
      socket.close(4004, 'Authentication failed');
      return null;
    }
    const shard = d.shard;
    if (shard !== undefined && !validShard(shard)) {
      socket.close(4010, 'Invalid shard');
      return null;
    }
    const intents = d.intents;
    if (typeof intents !== 'number' || (intents & ~ALL_KNOWN_INTENTS) !== 0) {
      socket.close(4013, 'Invalid intent(s)');
      return null;
    }
    const main = bot.user.id === this.#options.mainBotId;
    this.identifies.push({ ...(main ? {} : { botId: bot.user.id }), intents, properties: d.properties, shard, presence: d.presence });
    const session: GatewaySession = {
      id: randomToken(16),
      bot,
      intents,
      seq: 0,
      backlog: [],
      socket,
      ready: false,
      shard: shard === undefined ? [0, 1] : [shard[0], shard[1]],
    };
    this.sessions.set(session.id, session);
    void this.#sendReady(session);
    return session;
  }

  async #sendReady(session: GatewaySession): Promise<void> {
    const { user: botUser, applicationId } = session.bot;
    // A shard is told only of its own guilds (READY's list and their GUILD_CREATEs), and a bot only of those it is in.
    const guilds = this.#options.guilds.filter((g) => this.owns(session, g.id) && this.#options.inGuild(botUser.id, g.id));
    const writes = [
      this.#dispatchTo(
        session,
        'READY',
        readyPayload(session.id, { botUser, applicationId, guilds, shard: session.shard, resumeUrl: this.#options.resumeUrl() }),
      ),
    ];
    if (session.intents & INTENTS.Guilds) {
      for (const guild of guilds)
        writes.push(this.#dispatchTo(session, 'GUILD_CREATE', guildCreatePayload(guild, session.intents, botUser.id)));
    }
    await Promise.all(writes).catch(() => {});
    if (session.socket) {
      session.ready = true;
      this.emit('ready', session);
    }
  }

  #resume(socket: WebSocket, d: Record<string, unknown> | null): GatewaySession | null {
    const bot = d ? this.#options.bot(d.token) : undefined;
    if (!d || !bot) {
      socket.close(4004, 'Authentication failed');
      return null;
    }
    const session = typeof d.session_id === 'string' ? this.sessions.get(d.session_id) : undefined;
    if (!session || session.bot !== bot) {
      send(socket, { op: 9, d: false });
      return null;
    }
    if (session.socket && session.socket !== socket) session.socket.terminate();
    session.socket = socket;
    session.ready = false;
    const lastSeen = typeof d.seq === 'number' ? d.seq : 0;
    const writes = session.backlog.filter((e) => e.s > lastSeen).map((e) => sendAsync(socket, { op: 0, s: e.s, t: e.t, d: e.d }));
    writes.push(this.#dispatchTo(session, 'RESUMED', null));
    void Promise.all(writes)
      .catch(() => {})
      .then(() => {
        if (session.socket === socket) {
          session.ready = true;
          this.emit('ready', session);
        }
      });
    return session;
  }

  #requestGuildMembers(session: GatewaySession, d: Record<string, unknown> | null): void {
    const guild = this.#options.guilds.find((g) => g.id === d?.guild_id);
    if (!guild || !d || !this.owns(session, guild.id) || !this.#options.inGuild(session.bot.user.id, guild.id)) return;
    void this.#dispatchTo(session, 'GUILD_MEMBERS_CHUNK', membersChunkPayload(guild, d)).catch(() => {});
  }

  /** Dispatches an event to one session (GUILD_CREATE to a bot that was just added, say). */
  dispatchToSession(session: GatewaySession, t: string, d: unknown): Promise<void> {
    return this.#dispatchTo(session, t, d);
  }

  #dispatchTo(session: GatewaySession, t: string, d: unknown): Promise<void> {
    session.seq += 1;
    const event: Dispatched = { s: session.seq, t, d };
    session.backlog.push(event);
    if (session.backlog.length > MAX_BACKLOG) session.backlog.shift();
    this.emit('dispatch', event);
    if (!session.socket) return Promise.resolve();
    return sendAsync(session.socket, { op: 0, s: event.s, t, d });
  }

  #detach(session: GatewaySession): void {
    session.socket = null;
    session.ready = false;
  }
}

/** Identify's `shard`: [id, count] with 0 <= id < count. */
function validShard(shard: unknown): shard is [number, number] {
  return (
    Array.isArray(shard) &&
    shard.length === 2 &&
    Number.isInteger(shard[0]) &&
    Number.isInteger(shard[1]) &&
    shard[1] >= 1 &&
    shard[0] >= 0 &&
    shard[0] < shard[1]
  );
}

/** The `guild_id` of an event payload, if it has one. */
function guildIdIn(d: unknown): string | undefined {
  const id = (d as { guild_id?: unknown } | null)?.guild_id;
  return typeof id === 'string' ? id : undefined;
}

function send(socket: WebSocket, payload: GatewayPayload | { op: number; d?: unknown }): void {
  if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify(payload));
}

function sendAsync(socket: WebSocket, payload: GatewayPayload): Promise<void> {
  if (socket.readyState !== WebSocket.OPEN) return Promise.resolve();
  return new Promise((resolve) => socket.send(JSON.stringify(payload), () => resolve()));
}
