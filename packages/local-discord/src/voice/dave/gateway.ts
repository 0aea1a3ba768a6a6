/**
 * The DAVE side of the local voice gateway: MLS delivery service and external sender for each
 * guild's call (daveprotocol.com, "Group Key Exchange"). It tracks who is in each call, sends the
 * external sender package (op 25) and the clients-connect/disconnect notices (op 11/13), routes
 * the MLS traffic to the key exchange (key-exchange.ts: proposals, commits, welcomes, transitions,
 * re-creation) and recovers from an invalid commit or welcome (op 31).
 *
 * Participants are the bot's voice websocket sessions ("clients") and simulated listeners in the
 * test process. Commit ordering is the gateway's choice (the protocol's "Commit Ordering"): a
 * simulated listener's commit is taken only when no client can commit, so the bot's own commit
 * path is the one exercised whenever the bot is in the group.
 *
 * Deliberate simplifications: one call per guild (the server keeps no channel per session; the
 * group id comes from the listeners' channel), no proposal batching delays, no transition
 * timeout (a client that never reports ready stalls the transition, which a test then sees).
 */
import { randomBytes } from 'node:crypto';
import { LocalDiscordError } from '../../errors.ts';
import { parseDaveFrame } from './frame.ts';
import {
  isSettled,
  newGroup,
  newMember,
  nextTransitionId,
  snapshotOf,
  type DaveEvent,
  type DaveGroupSnapshot,
  type DaveParticipant,
  type Group,
  type Member,
} from './group.ts';
import { KeyExchange } from './key-exchange.ts';
import { SimulatedListener, type Hearing } from './listener.ts';
import { ExternalSender } from './mls.ts';
import { DaveOp } from './opcodes.ts';

export type { DaveEvent, DaveGroupSnapshot, DaveParticipant } from './group.ts';

/** The outcome of one frame for the listeners of its guild (see `hear`). */
export interface FrameHearing {
  /** The frame passed DAVE's protocol frame check. */
  framed: boolean;
  /** The Opus frame: decrypted when framed and some listener could, else the frame as received. */
  opus: Buffer | undefined;
  heardBy: Record<string, Hearing['outcome']>;
}

export class DaveGateway {
  readonly externalSender = new ExternalSender();
  /** The version offered to DAVE-capable clients (0 turns DAVE off in the fake). */
  readonly protocolVersion: number;
  readonly #groups = new Map<string, Group>();
  readonly #members = new Map<DaveParticipant, { group: Group; member: Member }>();
  readonly #emit: (event: DaveEvent) => void;
  readonly #keys: KeyExchange;

  constructor(options: { protocolVersion: number; emit: (event: DaveEvent) => void }) {
    this.protocolVersion = options.protocolVersion;
    this.#emit = options.emit;
    this.#keys = new KeyExchange({ externalSender: this.externalSender, protocolVersion: this.protocolVersion, emit: this.#emit });
  }

  /** The `dave_protocol_version` for op 4 to a client offering `clientMax` in `guildId`'s call. */
  negotiate(guildId: string, clientMax: number): number {
    if (clientMax <= 0 || this.protocolVersion === 0) return 0;
    const group = this.#groups.get(guildId);
    if (group && group.protocolVersion === 0 && group.members.length > 0) return 0;
    return Math.min(clientMax, this.protocolVersion);
  }

  /** A simulated listener joined to `guildId`'s call in `channelId`. */
  addListener(options: { guildId: string; channelId: string; userId: string }): SimulatedListener {
    const listener = new SimulatedListener(options);
    this.attachListener(listener);
    return listener;
  }

  /** (Re)joins a simulated listener to its call with a fresh davey session. */
  attachListener(listener: SimulatedListener): void {
    if (this.#members.has(listener))
      throw new LocalDiscordError('dave_misuse', { message: `listener ${listener.userId} is already in the call` });
    listener.session = undefined;
    const version = this.negotiate(listener.guildId, listener.maxProtocolVersion);
    listener.attach(
      {
        receiveJson: (op, d) => this.receiveJson(listener, op, d),
        receiveBinary: (op, payload) => this.receiveBinary(listener, op, payload),
      },
      version,
    );
    this.join(listener.guildId, listener, version);
  }

  /** Takes a simulated listener out of its call, as if its client disconnected. */
  detachListener(listener: SimulatedListener): void {
    this.leave(listener);
    listener.detach();
  }

  /** A participant entered `guildId`'s call with `protocolVersion` (already told in op 4). */
  join(guildId: string, participant: DaveParticipant, protocolVersion: number): void {
    let group = this.#groups.get(guildId);
    if (!group) {
      group = newGroup(guildId, this.protocolVersion);
      this.#groups.set(guildId, group);
    }
    if (participant.channelId !== undefined) {
      if (group.channelId !== undefined && group.channelId !== participant.channelId) {
        this.#error(group, `participant ${participant.userId} is in channel ${participant.channelId}, the call is in ${group.channelId}`);
      }
      group.channelId ??= participant.channelId;
    }
    // One session per user in a call: a new one replaces the old (a rejoin after 4006, say).
    for (const other of group.members.filter((m) => m.participant.userId === participant.userId)) this.leave(other.participant);
    const member = newMember(participant, protocolVersion);
    const others = group.members.slice();
    group.members.push(member);
    this.#members.set(participant, { group, member });
    // Members check proposed additions against the users the gateway said are connected.
    if (others.length > 0) participant.sendJson(DaveOp.ClientsConnect, { user_ids: [...new Set(others.map((m) => m.participant.userId))] });
    for (const other of others) other.participant.sendJson(DaveOp.ClientsConnect, { user_ids: [participant.userId] });
    if (participant.maxProtocolVersion === 0 && group.protocolVersion > 0) {
      // The transitory phase: a client without DAVE downgrades the call (daveprotocol.com).
      this.#keys.downgrade(group, 'non-dave client');
      return;
    }
    if (protocolVersion > 0 && group.protocolVersion > 0) {
      participant.sendBinary(DaveOp.MlsExternalSenderPackage, this.externalSender.serialize());
      member.hasExternalSender = true;
      if (!group.established) this.#keys.deliverInflightAdds(group);
    }
  }

  /** A participant left the call (disconnected, or its session ended). */
  leave(participant: DaveParticipant): void {
    const entry = this.#members.get(participant);
    if (!entry) return;
    const { group, member } = entry;
    this.#members.delete(participant);
    group.members = group.members.filter((m) => m !== member);
    for (const other of group.members) other.participant.sendJson(DaveOp.ClientDisconnect, { user_id: participant.userId });
    this.#keys.leaveGroup(group, member);
    member.keyPackage = undefined;
    if (group.members.length === 0) {
      this.#groups.delete(group.guildId);
      return;
    }
    if (group.downgradedFor === 'non-dave client' && group.members.every((m) => m.participant.maxProtocolVersion > 0)) {
      this.#keys.upgrade(group);
      return;
    }
    this.#keys.tryAnnounce(group);
  }

  /** A text message from a participant; false when the op is not DAVE's. */
  receiveJson(participant: DaveParticipant, op: number, d: Record<string, unknown>): boolean {
    const entry = this.#members.get(participant);
    if (op !== DaveOp.ReadyForTransition && op !== DaveOp.MlsInvalidCommitWelcome) return false;
    if (!entry) return true;
    const { group, member } = entry;
    const transitionId = Number(d.transition_id);
    if (op === DaveOp.ReadyForTransition) {
      this.#emit({ type: 'readyForTransition', guildId: group.guildId, userId: participant.userId, transitionId });
      const transition = group.transitions.get(transitionId);
      if (!transition) return true;
      transition.waiting.delete(member);
      this.#keys.maybeExecute(group, transitionId);
      return true;
    }
    // Recovery: remove the flagging member; its new key package re-adds it.
    this.#emit({ type: 'invalidCommitWelcome', guildId: group.guildId, userId: participant.userId, transitionId });
    this.#keys.leaveGroup(group, member);
    this.#keys.tryAnnounce(group);
    return true;
  }

  /** A binary message (op and payload) from a participant. */
  receiveBinary(participant: DaveParticipant, op: number, payload: Buffer): void {
    const entry = this.#members.get(participant);
    if (!entry) return;
    if (op === DaveOp.MlsKeyPackage) this.#keys.onKeyPackage(entry.group, entry.member, payload);
    else if (op === DaveOp.MlsCommitWelcome) this.#keys.onCommitWelcome(entry.group, entry.member, payload);
    else this.#error(entry.group, `unexpected binary op ${op} from ${participant.userId}`);
  }

  /** What each simulated listener in `guildId` makes of a frame `senderUserId` sent. */
  hear(guildId: string, senderUserId: string, frame: Buffer): FrameHearing {
    const framed = parseDaveFrame(frame) !== undefined;
    const heardBy: FrameHearing['heardBy'] = {};
    let opus: Buffer | undefined = framed ? undefined : frame;
    for (const member of this.#groups.get(guildId)?.members ?? []) {
      const listener = member.participant;
      if (!(listener instanceof SimulatedListener) || listener.userId === senderUserId) continue;
      const hearing = listener.hear(senderUserId, frame);
      heardBy[listener.userId] = hearing.outcome;
      if (hearing.outcome === 'decrypted') opus ??= hearing.opus;
    }
    return { framed, opus, heardBy };
  }

  /** The simulated listeners now in `guildId`'s call. */
  listeners(guildId: string): SimulatedListener[] {
    return (this.#groups.get(guildId)?.members ?? []).map((m) => m.participant).filter((p) => p instanceof SimulatedListener);
  }

  /** The version a connected participant is on, as the gateway last told it. */
  protocolVersionOf(participant: DaveParticipant): number | undefined {
    return this.#members.get(participant)?.group.protocolVersion;
  }

  snapshot(guildId: string): DaveGroupSnapshot | undefined {
    const group = this.#groups.get(guildId);
    return group ? snapshotOf(group) : undefined;
  }

  /**
   * True when `guildId`'s call is end-to-end encrypted and at rest: every DAVE-capable participant
   * is in the established group, no proposal is open and every transition executed.
   */
  settled(guildId: string): boolean {
    const group = this.#groups.get(guildId);
    return group !== undefined && isSettled(group);
  }

  /** Downgrades `guildId`'s call to transport encryption only (op 21 to version 0, then op 22). */
  downgrade(guildId: string): number {
    const group = this.#group(guildId);
    return this.#keys.downgrade(group, 'manual');
  }

  /** Brings DAVE back: op 24 (epoch 1) and a new group, as when the last non-DAVE client leaves. */
  upgrade(guildId: string): void {
    this.#keys.upgrade(this.#group(guildId));
  }

  /**
   * Sends `userId`'s client an unprocessable commit (op 29) or welcome (op 30) under a new
   * transition id, which it should flag with op 31. Returns the transition id.
   */
  sendInvalid(guildId: string, userId: string, kind: 'commit' | 'welcome'): number {
    const group = this.#group(guildId);
    const member = group.members.find((m) => m.participant.userId === userId && m.participant.kind === 'client');
    if (!member) throw new LocalDiscordError('dave_misuse', { message: `no client ${userId} in guild ${guildId}'s call` });
    const transitionId = nextTransitionId(group);
    // A commit for an epoch the group has left, with its signature broken, or a welcome for no one.
    const body = kind === 'commit' && group.lastCommit ? Buffer.from(group.lastCommit) : randomBytes(96);
    if (kind === 'commit' && group.lastCommit) body[body.length - 40] = body[body.length - 40]! ^ 0xff;
    const transition = Buffer.alloc(2);
    transition.writeUInt16BE(transitionId);
    member.participant.sendBinary(
      kind === 'commit' ? DaveOp.MlsAnnounceCommitTransition : DaveOp.MlsWelcome,
      Buffer.concat([transition, body]),
    );
    this.#emit({ type: 'sentInvalid', guildId, userId, kind, transitionId });
    return transitionId;
  }

  #group(guildId: string): Group {
    const group = this.#groups.get(guildId);
    if (!group) throw new LocalDiscordError('dave_misuse', { message: `no call in guild ${guildId}` });
    return group;
  }

  #error(group: Group, message: string): void {
    this.#emit({ type: 'error', guildId: group.guildId, message });
  }
}
