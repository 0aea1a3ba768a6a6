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
 * Calls are per voice channel: participants that name their channel (listeners always; clients
 * when the local Discord announced their call) join that channel's call, so bots in two voice
 * channels of one guild are two groups. A client that names no channel joins its guild's first
 * call (one call per guild, as before the local Discord served several bots), and a call whose
 * channel nobody named yet takes the first channel named. No proposal batching delays, no
 * transition timeout (a client that never reports ready stalls the transition, which a test then sees).
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
interface FrameHearing {
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
  readonly #groups = new Set<Group>();
  readonly #members = new Map<DaveParticipant, { group: Group; member: Member }>();
  readonly #emit: (event: DaveEvent) => void;
  readonly #keys: KeyExchange;

  constructor(options: { protocolVersion: number; emit: (event: DaveEvent) => void }) {
    this.protocolVersion = options.protocolVersion;
    this.#emit = options.emit;
    this.#keys = new KeyExchange({ externalSender: this.externalSender, protocolVersion: this.protocolVersion, emit: this.#emit });
  }

  /** The `dave_protocol_version` for op 4 to a client offering `clientMax` in `guildId`'s call (in `channelId`). */
  negotiate(guildId: string, clientMax: number, channelId?: string): number {
    if (clientMax <= 0 || this.protocolVersion === 0) return 0;
    const group = this.#find(guildId, channelId);
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
    const version = this.negotiate(listener.guildId, listener.maxProtocolVersion, listener.channelId);
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
    let group = this.#find(guildId, participant.channelId);
    if (!group) {
      group = newGroup(guildId, this.protocolVersion);
      this.#groups.add(group);
    }
    group.channelId ??= participant.channelId;
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
      this.#groups.delete(group);
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

  /** What each simulated listener in the call of `senderUserId` in `guildId` makes of a frame it sent. */
  hear(guildId: string, senderUserId: string, frame: Buffer): FrameHearing {
    const framed = parseDaveFrame(frame) !== undefined;
    const heardBy: FrameHearing['heardBy'] = {};
    let opus: Buffer | undefined = framed ? undefined : frame;
    const calls = this.#inGuild(guildId);
    const call =
      calls.find((g) => g.members.some((m) => m.participant.kind === 'client' && m.participant.userId === senderUserId)) ?? calls[0];
    for (const member of call?.members ?? []) {
      const listener = member.participant;
      if (!(listener instanceof SimulatedListener) || listener.userId === senderUserId) continue;
      const hearing = listener.hear(senderUserId, frame);
      heardBy[listener.userId] = hearing.outcome;
      if (hearing.outcome === 'decrypted') opus ??= hearing.opus;
    }
    return { framed, opus, heardBy };
  }

  /** The simulated listeners now in `guildId`'s calls (in `channelId`'s only, when given). */
  listeners(guildId: string, channelId?: string): SimulatedListener[] {
    return this.#inGuild(guildId)
      .filter((g) => channelId === undefined || g.channelId === channelId)
      .flatMap((g) => g.members.map((m) => m.participant))
      .filter((p) => p instanceof SimulatedListener);
  }

  /** The version a connected participant is on, as the gateway last told it. */
  protocolVersionOf(participant: DaveParticipant): number | undefined {
    return this.#members.get(participant)?.group.protocolVersion;
  }

  /** `guildId`'s call (its first, or the one in `channelId`). */
  snapshot(guildId: string, channelId?: string): DaveGroupSnapshot | undefined {
    const group = this.#find(guildId, channelId);
    return group ? snapshotOf(group) : undefined;
  }

  /**
   * True when `guildId`'s calls (or the one in `channelId`) are end-to-end encrypted and at rest:
   * every DAVE-capable participant is in the established group, no proposal is open and every
   * transition executed.
   */
  settled(guildId: string, channelId?: string): boolean {
    const calls = this.#inGuild(guildId).filter((g) => channelId === undefined || g.channelId === channelId);
    return calls.length > 0 && calls.every(isSettled);
  }

  /** Downgrades `guildId`'s call to transport encryption only (op 21 to version 0, then op 22). */
  downgrade(guildId: string, channelId?: string): number {
    const group = this.#group(guildId, channelId);
    return this.#keys.downgrade(group, 'manual');
  }

  /** Brings DAVE back: op 24 (epoch 1) and a new group, as when the last non-DAVE client leaves. */
  upgrade(guildId: string, channelId?: string): void {
    this.#keys.upgrade(this.#group(guildId, channelId));
  }

  /**
   * Sends `userId`'s client an unprocessable commit (op 29) or welcome (op 30) under a new
   * transition id, which it should flag with op 31. Returns the transition id.
   */
  sendInvalid(guildId: string, userId: string, kind: 'commit' | 'welcome'): number {
    const isClient = (m: Member) => m.participant.userId === userId && m.participant.kind === 'client';
    const group = this.#inGuild(guildId).find((g) => g.members.some(isClient)) ?? this.#group(guildId);
    const member = group.members.find(isClient);
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

  #inGuild(guildId: string): Group[] {
    return [...this.#groups].filter((g) => g.guildId === guildId);
  }

  /**
   * The call a participant of `guildId` (in `channelId`, when it says) joins: the one in its
   * channel, else one whose channel nobody named yet; one that names no channel joins the first.
   */
  #find(guildId: string, channelId: string | undefined): Group | undefined {
    const calls = this.#inGuild(guildId);
    if (channelId === undefined) return calls[0];
    return calls.find((g) => g.channelId === channelId) ?? calls.find((g) => g.channelId === undefined);
  }

  #group(guildId: string, channelId?: string): Group {
    const group = this.#find(guildId, channelId);
    if (!group) throw new LocalDiscordError('dave_misuse', { message: `no call in guild ${guildId}` });
    return group;
  }

  #error(group: Group, message: string): void {
    this.#emit({ type: 'error', guildId: group.guildId, message });
  }
}
