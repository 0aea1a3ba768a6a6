/**
 * The voice gateway's websocket protocol (v8): Hello, Identify, Select Protocol and Session
 * Description, heartbeats, speaking, Resume with buffered replay, close codes, and the hand-off
 * of DAVE's messages to the call's DAVE gateway. Facts: Discord's voice gateway (v8)
 * and UDP documentation; shapes checked against @discordjs/voice 0.19.2.
 */
import { randomBytes, randomInt } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import type { RawData, WebSocket } from 'ws';
import { LocalDiscordError } from '../errors.ts';
import { LOOPBACK_HOST } from '../loopback.ts';
import type { DaveGateway, DaveParticipant } from './dave/gateway.ts';
import { BINARY_DAVE_OPS } from './dave/opcodes.ts';
import type { FakeVoiceServerEvents, ResolvedOptions, VoiceSession } from './types.ts';

const Op = {
  Identify: 0,
  SelectProtocol: 1,
  Ready: 2,
  Heartbeat: 3,
  SessionDescription: 4,
  Speaking: 5,
  HeartbeatAck: 6,
  Resume: 7,
  Hello: 8,
  Resumed: 9,
} as const;

/** Close codes the voice server uses (Discord voice close event codes). */
export const VoiceCloseCode = {
  UnknownOpcode: 4001,
  FailedToDecode: 4002,
  NotAuthenticated: 4003,
  AuthenticationFailed: 4004,
  AlreadyAuthenticated: 4005,
  SessionNoLongerValid: 4006,
  SessionTimeout: 4009,
  ServerNotFound: 4011,
  UnknownProtocol: 4012,
  Disconnected: 4014,
  VoiceServerCrashed: 4015,
  UnknownEncryptionMode: 4016,
  E2EERequired: 4017,
} as const;

const CLOSE_REASONS: Record<number, string> = {
  4001: 'Unknown opcode',
  4002: 'Failed to decode payload',
  4003: 'Not authenticated',
  4004: 'Authentication failed',
  4005: 'Already authenticated',
  4006: 'Session no longer valid',
  4009: 'Session timeout',
  4011: 'Server not found',
  4012: 'Unknown protocol',
  4014: 'Disconnected',
  4015: 'Voice server crashed',
  4016: 'Unknown encryption mode',
  4017: 'E2EE/DAVE protocol required',
};

const ENCRYPTION_MODE = 'aead_aes256_gcm_rtpsize';

/** Bookkeeping for one voice websocket. */
interface Connection {
  ws: WebSocket;
  session: VoiceSession | undefined;
  /** Set when the server closes it, so the close event can tell who closed. */
  closedByServer: boolean;
}

interface SignallingParts {
  /** Where sessions are kept (the server's public `sessions`). */
  sessions: VoiceSession[];
  dave: DaveGateway;
  events: EventEmitter<FakeVoiceServerEvents>;
  /** Announced in Ready. */
  udpPort: number;
  options: ResolvedOptions;
  /** The voice channel the local Discord said a voice session is in, if it said. */
  channelOf: (serverId: string, userId: string, sessionId: string) => string | undefined;
}

export class VoiceSignalling {
  readonly #parts: SignallingParts;
  readonly #connections = new Set<Connection>();
  /** Messages sent with a seq, replayed after a resume past the client's seq_ack (buffered resume). */
  readonly #outbox = new WeakMap<VoiceSession, { seq: number; data: string | Buffer }[]>();
  /** Each session's place in its guild's DAVE call, once Session Description was sent. */
  readonly #participants = new WeakMap<VoiceSession, DaveParticipant>();
  /** Sessions closed with a resumable code, leaving their DAVE call unless they resume in time. */
  readonly #resumeTimers = new Map<VoiceSession, NodeJS.Timeout>();

  constructor(parts: SignallingParts) {
    this.#parts = parts;
  }

  /** Drops every websocket and forgets the sessions waiting to resume. */
  closeAll(): void {
    for (const conn of this.#connections) conn.ws.terminate();
    this.#connections.clear();
    for (const timer of this.#resumeTimers.values()) clearTimeout(timer);
    this.#resumeTimers.clear();
  }

  /**
   * Closes the open voice websocket of `guildId`'s latest session with `code` (4015, 4014, 4006...).
   * Codes the client may resume on (4015, < 4000) keep the session resumable; others end it.
   */
  closeConnection(guildId: string, code: number, userId?: string): void {
    const conn = [...this.#connections]
      .reverse()
      .find((c) => c.session?.serverId === guildId && (userId === undefined || c.session.userId === userId));
    if (!conn) throw new LocalDiscordError('no_voice_connection', { message: `no open voice websocket for guild ${guildId}` });
    this.#close(conn, code);
  }

  /** Takes a new voice websocket: Hello at once, then Identify or Resume. */
  accept(ws: WebSocket): void {
    const conn: Connection = { ws, session: undefined, closedByServer: false };
    this.#connections.add(conn);
    // Discord sends Hello as soon as the socket opens, before Identify or Resume.
    this.#send(conn, Op.Hello, { v: 8, heartbeat_interval: this.#parts.options.heartbeatIntervalMs }, false);
    ws.on('message', (data, isBinary) => this.#onMessage(conn, data, isBinary));
    ws.on('error', (error) => this.#parts.events.emit('protocolError', `websocket error: ${error.message}`));
    ws.on('close', (code) => {
      this.#connections.delete(conn);
      const session = conn.session;
      if (session && this.#currentConnection(session) === undefined) {
        session.closed = true;
        session.closeCodes.push(code);
        this.#leaveDaveCall(session, conn.closedByServer && session.resumable);
      }
      this.#parts.events.emit('close', session, { code, byServer: conn.closedByServer });
    });
  }

  #currentConnection(session: VoiceSession): Connection | undefined {
    for (const conn of this.#connections) if (conn.session === session) return conn;
    return undefined;
  }

  #close(conn: Connection, code: number): void {
    conn.closedByServer = true;
    // @discordjs/voice resumes only on 4015 or codes below 4000 (Networking.onWsClose).
    if (conn.session && !(code === VoiceCloseCode.VoiceServerCrashed || code < 4000)) conn.session.resumable = false;
    conn.ws.close(code, CLOSE_REASONS[code] ?? 'Closed by fake voice server');
  }

  #send(conn: Connection, op: number, d: unknown, withSeq = true): void {
    if (withSeq && conn.session) return this.#sendToSession(conn.session, op, d);
    if (conn.ws.readyState === conn.ws.OPEN) conn.ws.send(JSON.stringify({ op, d }));
  }

  /** A JSON message with the session's next seq, to its current websocket (or the replay buffer). */
  #sendToSession(session: VoiceSession, op: number, d: unknown): void {
    const seq = ++session.seq;
    this.#deliver(session, seq, JSON.stringify({ op, d, seq }));
  }

  /** A binary DAVE message: `u16 seq, u8 op, payload` (daveprotocol.com, "Voice Gateway Opcodes"). */
  #sendBinaryToSession(session: VoiceSession, op: number, payload: Buffer): void {
    const seq = ++session.seq;
    const head = Buffer.alloc(3);
    head.writeUInt16BE(seq & 0xffff, 0);
    head.writeUInt8(op, 2);
    this.#deliver(session, seq, Buffer.concat([head, payload]));
  }

  #deliver(session: VoiceSession, seq: number, data: string | Buffer): void {
    let outbox = this.#outbox.get(session);
    if (!outbox) this.#outbox.set(session, (outbox = []));
    outbox.push({ seq, data });
    if (outbox.length > 200) outbox.shift();
    const conn = this.#currentConnection(session);
    if (conn && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(data);
  }

  /** The session leaves its DAVE call now, or after the resume grace when it may come back. */
  #leaveDaveCall(session: VoiceSession, mayResume: boolean): void {
    const participant = this.#participants.get(session);
    if (!participant) return;
    clearTimeout(this.#resumeTimers.get(session));
    this.#resumeTimers.delete(session);
    if (!mayResume) {
      this.#parts.dave.leave(participant);
      return;
    }
    const timer = setTimeout(() => {
      this.#resumeTimers.delete(session);
      this.#parts.dave.leave(participant);
    }, this.#parts.options.resumeGraceMs);
    timer.unref();
    this.#resumeTimers.set(session, timer);
  }

  #onMessage(conn: Connection, data: RawData, isBinary: boolean): void {
    if (isBinary) {
      // Binary messages are DAVE's MLS traffic: `u8 op, payload` from the client.
      const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
      const participant = conn.session && this.#participants.get(conn.session);
      if (!participant) {
        this.#parts.events.emit('protocolError', 'binary voice gateway message before Session Description');
        return;
      }
      const op = bytes.length > 0 ? bytes[0]! : -1;
      if (!BINARY_DAVE_OPS.has(op)) {
        this.#parts.events.emit('protocolError', `unexpected binary voice gateway op ${op}`);
        return;
      }
      this.#parts.dave.receiveBinary(participant, op, bytes.subarray(1));
      return;
    }
    let packet: { op?: unknown; d?: unknown };
    try {
      packet = JSON.parse(String(data)) as { op?: unknown; d?: unknown };
    } catch {
      this.#parts.events.emit('protocolError', 'voice gateway message is not JSON');
      this.#close(conn, VoiceCloseCode.FailedToDecode);
      return;
    }
    const d = (typeof packet.d === 'object' && packet.d !== null ? packet.d : {}) as Record<string, unknown>;
    switch (packet.op) {
      case Op.Identify:
        this.#onIdentify(conn, d);
        return;
      case Op.Resume:
        this.#onResume(conn, d);
        return;
      case Op.Heartbeat: {
        if (conn.session) conn.session.heartbeats++;
        const seqAck = typeof d.seq_ack === 'number' ? d.seq_ack : undefined;
        this.#send(conn, Op.HeartbeatAck, { t: d.t }, false);
        this.#parts.events.emit('heartbeat', conn.session, { seqAck });
        return;
      }
      case Op.SelectProtocol:
        this.#onSelectProtocol(conn, d);
        return;
      case Op.Speaking: {
        const session = conn.session;
        if (!session) return this.#close(conn, VoiceCloseCode.NotAuthenticated);
        const speaking = typeof d.speaking === 'number' ? d.speaking : 0;
        if (speaking === 0 && session.speaking !== 0) session.speakingOffCount++;
        session.speaking = speaking;
        this.#parts.events.emit('speaking', session, { speaking });
        return;
      }
      default: {
        // DAVE's text ops (23 ready for transition, 31 invalid commit or welcome).
        const participant = conn.session && this.#participants.get(conn.session);
        if (participant && typeof packet.op === 'number' && this.#parts.dave.receiveJson(participant, packet.op, d)) return;
        this.#parts.events.emit('protocolError', `unhandled voice gateway op ${String(packet.op)}`);
      }
    }
  }

  #tokenOk(token: unknown): boolean {
    return this.#parts.options.expectedToken === undefined || token === this.#parts.options.expectedToken;
  }

  #onIdentify(conn: Connection, d: Record<string, unknown>): void {
    if (conn.session) return this.#close(conn, VoiceCloseCode.AlreadyAuthenticated);
    const { server_id, user_id, session_id, token, max_dave_protocol_version } = d;
    if (typeof server_id !== 'string' || typeof user_id !== 'string' || typeof session_id !== 'string') {
      this.#parts.events.emit('protocolError', 'identify is missing server_id, user_id or session_id');
      return this.#close(conn, VoiceCloseCode.FailedToDecode);
    }
    if (!this.#tokenOk(token)) return this.#close(conn, VoiceCloseCode.AuthenticationFailed);
    let ssrc: number;
    do ssrc = randomInt(1, 2 ** 31);
    while (this.#parts.sessions.some((s) => s.ssrc === ssrc));
    const channelId = this.#parts.channelOf(server_id, user_id, session_id);
    const session: VoiceSession = {
      serverId: server_id,
      ...(channelId === undefined ? {} : { channelId }),
      userId: user_id,
      sessionId: session_id,
      ssrc,
      secretKey: randomBytes(32),
      identifiedAt: this.#parts.options.now(),
      maxDaveProtocolVersion: typeof max_dave_protocol_version === 'number' ? max_dave_protocol_version : undefined,
      daveProtocolVersion: undefined,
      seq: 0,
      mode: undefined,
      clientAddress: undefined,
      closed: false,
      resumable: true,
      closeCodes: [],
      resumes: 0,
      heartbeats: 0,
      speaking: 0,
      speakingOffCount: 0,
    };
    this.#parts.sessions.push(session);
    conn.session = session;
    this.#send(conn, Op.Ready, { ssrc, ip: LOOPBACK_HOST, port: this.#parts.udpPort, modes: [ENCRYPTION_MODE], experiments: [] });
    this.#parts.events.emit('identify', session);
  }

  #onSelectProtocol(conn: Connection, d: Record<string, unknown>): void {
    const session = conn.session;
    if (!session) return this.#close(conn, VoiceCloseCode.NotAuthenticated);
    const data = (typeof d.data === 'object' && d.data !== null ? d.data : {}) as Record<string, unknown>;
    if (d.protocol !== 'udp') return this.#close(conn, VoiceCloseCode.UnknownProtocol);
    if (data.mode !== ENCRYPTION_MODE) return this.#close(conn, VoiceCloseCode.UnknownEncryptionMode);
    session.mode = ENCRYPTION_MODE;
    if (typeof data.address === 'string' && typeof data.port === 'number') {
      session.clientAddress = { address: data.address, port: data.port };
    }
    // Version 0 keeps the client on transport encryption only; 1 makes it a DAVE group member.
    const daveVersion = this.#parts.dave.negotiate(session.serverId, session.maxDaveProtocolVersion ?? 0, session.channelId);
    session.daveProtocolVersion = daveVersion;
    this.#send(conn, Op.SessionDescription, {
      mode: ENCRYPTION_MODE,
      secret_key: [...session.secretKey],
      dave_protocol_version: daveVersion,
      audio_codec: 'opus',
    });
    this.#parts.events.emit('selectProtocol', session);
    const participant: DaveParticipant = {
      kind: 'client',
      userId: session.userId,
      ...(session.channelId === undefined ? {} : { channelId: session.channelId }),
      maxProtocolVersion: session.maxDaveProtocolVersion ?? 0,
      sendJson: (op, payload) => this.#sendToSession(session, op, payload),
      sendBinary: (op, payload) => this.#sendBinaryToSession(session, op, payload),
    };
    this.#participants.set(session, participant);
    this.#parts.dave.join(session.serverId, participant, daveVersion);
  }

  #onResume(conn: Connection, d: Record<string, unknown>): void {
    if (conn.session) return this.#close(conn, VoiceCloseCode.AlreadyAuthenticated);
    const session = this.#parts.sessions.findLast((s) => s.serverId === d.server_id && s.sessionId === d.session_id);
    if (!this.#tokenOk(d.token)) return this.#close(conn, VoiceCloseCode.AuthenticationFailed);
    if (!session || !session.resumable || this.#currentConnection(session)) {
      return this.#close(conn, VoiceCloseCode.SessionNoLongerValid);
    }
    conn.session = session;
    session.closed = false;
    session.resumes++;
    clearTimeout(this.#resumeTimers.get(session));
    this.#resumeTimers.delete(session);
    const seqAck = typeof d.seq_ack === 'number' ? d.seq_ack : -1;
    this.#send(conn, Op.Resumed, null);
    // Buffered resume: what the client missed while away, in order.
    for (const { seq, data } of this.#outbox.get(session) ?? []) {
      if (seq > seqAck && conn.ws.readyState === conn.ws.OPEN) conn.ws.send(data);
    }
    this.#parts.events.emit('resume', session, { seqAck });
  }
}
