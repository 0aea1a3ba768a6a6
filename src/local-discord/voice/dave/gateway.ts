/**
 * The DAVE side of the fake voice gateway: MLS delivery service and external sender for each
 * guild's call (daveprotocol.com, "Group Key Exchange"). It sends the external sender package
 * (op 25), turns key packages (op 26) into external Add proposals and departures into Remove
 * proposals (op 27), picks the winning commit (op 28) and announces it (op 29) with targeted
 * welcomes (op 30), and runs transitions (op 21/22/23) and group re-creation (op 24), including
 * the sole member reset and recovery from an invalid commit or welcome (op 31).
 *
 * Participants are the bot's voice websocket sessions ("clients") and simulated listeners in the
 * test process. Commit ordering is the gateway's choice (the protocol's "Commit Ordering"): a
 * simulated listener's commit is taken only when no client can commit, so the bot's own commit
 * path is the one exercised whenever the bot is in the group.
 *
 * Deliberate simplifications: one call per guild (the fake keeps no channel per session; the
 * group id comes from the listeners' channel), no proposal batching delays, no transition
 * timeout (a client that never reports ready stalls the transition, which a test then sees).
 */
import { randomBytes } from 'node:crypto';
import {
  ExternalSender,
  groupIdOf,
  parseCommitWelcome,
  parseKeyPackageMessage,
  proposalsPayload,
  welcomeFor,
  CIPHERSUITE_P256,
  type ExternalProposal,
  type ParsedCommit,
  type ParsedKeyPackage,
  type ParsedWelcome,
} from './mls.ts';
import { parseDaveFrame } from './frame.ts';
import { SimulatedListener, type Hearing } from './listener.ts';
import { DaveOp } from './opcodes.ts';

/** A member of a call as the gateway sees it: a client's voice session or a simulated listener. */
export interface DaveParticipant {
  readonly kind: 'client' | 'listener';
  readonly userId: string;
  /** What it offered in Identify (`max_dave_protocol_version`). */
  readonly maxProtocolVersion: number;
  /** Simulated listeners know their voice channel (the MLS group id); clients do not say. */
  readonly channelId?: string;
  sendJson(op: number, d: Record<string, unknown>): void;
  sendBinary(op: number, payload: Buffer): void;
}

/** What the gateway did or received; re-emitted by the voice server as 'dave' events. */
export type DaveEvent =
  | { type: 'keyPackage'; guildId: string; userId: string; accepted: boolean; reason?: string }
  | { type: 'proposals'; guildId: string; operation: 'append' | 'revoke'; kinds: ('add' | 'remove')[]; epoch: bigint; to: string[] }
  | { type: 'commitRejected'; guildId: string; userId: string; reason: string }
  | { type: 'commit'; guildId: string; committer: string; committerKind: 'client' | 'listener'; epoch: bigint; transitionId: number; added: string[]; removed: string[] }
  | { type: 'readyForTransition'; guildId: string; userId: string; transitionId: number }
  | { type: 'executeTransition'; guildId: string; transitionId: number; protocolVersion: number }
  | { type: 'prepareTransition'; guildId: string; transitionId: number; protocolVersion: number }
  | { type: 'prepareEpoch'; guildId: string; protocolVersion: number; to: string[]; reason: 'sole member' | 'upgrade' }
  | { type: 'invalidCommitWelcome'; guildId: string; userId: string; transitionId: number }
  | { type: 'sentInvalid'; guildId: string; userId: string; kind: 'commit' | 'welcome'; transitionId: number }
  | { type: 'error'; guildId: string; message: string };

interface Member {
  participant: DaveParticipant;
  /** The DAVE version op 4 (or the listener's attach) announced to it. */
  version: number;
  /** Op 25 was sent: the participant holds a pending local group. */
  hasExternalSender: boolean;
  /** Its latest key package not yet used by a commit. */
  keyPackage: ParsedKeyPackage | undefined;
  /** Its leaf in the established group. */
  leaf: number | undefined;
  /** A Remove for it is proposed and not yet committed. */
  removing: boolean;
  /** Initial group creation: the in-flight Add proposals delivered to it, by ref (hex). */
  delivered: Set<string>;
  /** Its latest commit for the current proposals, waiting for the gateway's pick. */
  commit: { parsed: ParsedCommit; welcome: ParsedWelcome | undefined } | undefined;
}

type Proposal =
  | { kind: 'add'; member: Member; proposal: ExternalProposal }
  | { kind: 'remove'; member: Member; leaf: number; proposal: ExternalProposal };

interface Transition {
  protocolVersion: number;
  waiting: Set<Member>;
  notify: Member[];
}

interface Group {
  guildId: string;
  channelId: string | undefined;
  protocolVersion: number;
  /** Why the call is on transport encryption only, when it is. */
  downgradedFor: 'manual' | 'non-dave client' | undefined;
  established: boolean;
  epoch: bigint;
  leaves: (Member | undefined)[];
  members: Member[];
  /** Proposals of the established group's current epoch. */
  proposals: Proposal[];
  /** Initial group creation: each pending member's Add, for its current key package. */
  inflightAdds: Map<Member, ExternalProposal>;
  transitions: Map<number, Transition>;
  nextTransitionId: number;
  lastCommit: Buffer | undefined;
}

export interface DaveGroupSnapshot {
  protocolVersion: number;
  established: boolean;
  epoch: bigint;
  members: { userId: string; kind: 'client' | 'listener'; leaf: number | undefined; keyPackagePending: boolean }[];
  pendingProposals: number;
  pendingTransitions: number;
}

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

  constructor(options: { protocolVersion: number; emit: (event: DaveEvent) => void }) {
    this.protocolVersion = options.protocolVersion;
    this.#emit = options.emit;
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
    if (this.#members.has(listener)) throw new Error(`listener ${listener.userId} is already in the call`);
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
      group = {
        guildId,
        channelId: undefined,
        protocolVersion: this.protocolVersion,
        downgradedFor: undefined,
        established: false,
        epoch: 0n,
        leaves: [],
        members: [],
        proposals: [],
        inflightAdds: new Map(),
        transitions: new Map(),
        nextTransitionId: 1,
        lastCommit: undefined,
      };
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
    const member: Member = {
      participant,
      version: protocolVersion,
      hasExternalSender: false,
      keyPackage: undefined,
      leaf: undefined,
      removing: false,
      delivered: new Set(),
      commit: undefined,
    };
    const others = group.members.slice();
    group.members.push(member);
    this.#members.set(participant, { group, member });
    // Members check proposed additions against the users the gateway said are connected.
    if (others.length > 0) participant.sendJson(DaveOp.ClientsConnect, { user_ids: [...new Set(others.map((m) => m.participant.userId))] });
    for (const other of others) other.participant.sendJson(DaveOp.ClientsConnect, { user_ids: [participant.userId] });
    if (participant.maxProtocolVersion === 0 && group.protocolVersion > 0) {
      // The transitory phase: a client without DAVE downgrades the call (daveprotocol.com).
      this.#downgrade(group, 'non-dave client');
      return;
    }
    if (protocolVersion > 0 && group.protocolVersion > 0) {
      participant.sendBinary(DaveOp.MlsExternalSenderPackage, this.externalSender.serialize());
      member.hasExternalSender = true;
      if (!group.established) this.#deliverInflightAdds(group);
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
    this.#leaveGroup(group, member);
    member.keyPackage = undefined;
    if (group.members.length === 0) {
      this.#groups.delete(group.guildId);
      return;
    }
    if (group.downgradedFor === 'non-dave client' && group.members.every((m) => m.participant.maxProtocolVersion > 0)) {
      this.#upgrade(group);
      return;
    }
    this.#tryAnnounce(group);
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
      this.#maybeExecute(group, transitionId);
      return true;
    }
    // Recovery: remove the flagging member; its new key package re-adds it.
    this.#emit({ type: 'invalidCommitWelcome', guildId: group.guildId, userId: participant.userId, transitionId });
    this.#leaveGroup(group, member);
    this.#tryAnnounce(group);
    return true;
  }

  /** A binary message (op and payload) from a participant. */
  receiveBinary(participant: DaveParticipant, op: number, payload: Buffer): void {
    const entry = this.#members.get(participant);
    if (!entry) return;
    if (op === DaveOp.MlsKeyPackage) this.#onKeyPackage(entry.group, entry.member, payload);
    else if (op === DaveOp.MlsCommitWelcome) this.#onCommitWelcome(entry.group, entry.member, payload);
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
    if (!group) return undefined;
    return {
      protocolVersion: group.protocolVersion,
      established: group.established,
      epoch: group.epoch,
      members: group.members.map((m) => ({
        userId: m.participant.userId,
        kind: m.participant.kind,
        leaf: m.leaf,
        keyPackagePending: m.keyPackage !== undefined,
      })),
      pendingProposals: group.established ? group.proposals.length : group.inflightAdds.size,
      pendingTransitions: group.transitions.size,
    };
  }

  /**
   * True when `guildId`'s call is end-to-end encrypted and at rest: every DAVE-capable participant
   * is in the established group, no proposal is open and every transition executed.
   */
  settled(guildId: string): boolean {
    const group = this.#groups.get(guildId);
    if (!group || group.protocolVersion === 0 || !group.established) return false;
    if (group.transitions.size > 0 || group.proposals.length > 0) return false;
    return group.members.every((m) => m.participant.maxProtocolVersion === 0 || (m.leaf !== undefined && !m.removing));
  }

  /** Downgrades `guildId`'s call to transport encryption only (op 21 to version 0, then op 22). */
  downgrade(guildId: string): number {
    const group = this.#group(guildId);
    return this.#downgrade(group, 'manual');
  }

  /** Brings DAVE back: op 24 (epoch 1) and a new group, as when the last non-DAVE client leaves. */
  upgrade(guildId: string): void {
    this.#upgrade(this.#group(guildId));
  }

  /**
   * Sends `userId`'s client an unprocessable commit (op 29) or welcome (op 30) under a new
   * transition id, which it should flag with op 31. Returns the transition id.
   */
  sendInvalid(guildId: string, userId: string, kind: 'commit' | 'welcome'): number {
    const group = this.#group(guildId);
    const member = group.members.find((m) => m.participant.userId === userId && m.participant.kind === 'client');
    if (!member) throw new Error(`fake voice: no client ${userId} in guild ${guildId}'s call`);
    const transitionId = this.#nextTransitionId(group);
    // A commit for an epoch the group has left, with its signature broken, or a welcome for no one.
    const body = kind === 'commit' && group.lastCommit ? Buffer.from(group.lastCommit) : randomBytes(96);
    if (kind === 'commit' && group.lastCommit) body[body.length - 40] = body[body.length - 40]! ^ 0xff;
    const transition = Buffer.alloc(2);
    transition.writeUInt16BE(transitionId);
    member.participant.sendBinary(kind === 'commit' ? DaveOp.MlsAnnounceCommitTransition : DaveOp.MlsWelcome, Buffer.concat([transition, body]));
    this.#emit({ type: 'sentInvalid', guildId, userId, kind, transitionId });
    return transitionId;
  }

  #group(guildId: string): Group {
    const group = this.#groups.get(guildId);
    if (!group) throw new Error(`fake voice: no call in guild ${guildId}`);
    return group;
  }

  #error(group: Group, message: string): void {
    this.#emit({ type: 'error', guildId: group.guildId, message });
  }

  #nextTransitionId(group: Group): number {
    const id = group.nextTransitionId;
    // uint16 on the wire; 0 is reserved for (re)initialisation.
    group.nextTransitionId = id >= 0xffff ? 1 : id + 1;
    return id;
  }

  #groupId(group: Group): Buffer | undefined {
    return group.channelId === undefined ? undefined : groupIdOf(group.channelId);
  }

  /** Members of the established group that take part in its next commit. */
  #groupMembers(group: Group): Member[] {
    return group.members.filter((m) => m.leaf !== undefined && !m.removing);
  }

  #onKeyPackage(group: Group, member: Member, payload: Buffer): void {
    const userId = member.participant.userId;
    if (group.protocolVersion === 0) return;
    let parsed: ParsedKeyPackage;
    try {
      parsed = parseKeyPackageMessage(payload);
    } catch (error) {
      this.#emit({ type: 'keyPackage', guildId: group.guildId, userId, accepted: false, reason: (error as Error).message });
      return;
    }
    // The gateway's checks (daveprotocol.com, "Key Packages", "Validation").
    const reason =
      parsed.cipherSuite !== CIPHERSUITE_P256 ? `ciphersuite ${parsed.cipherSuite}` :
      parsed.userId !== userId ? `credential names user ${parsed.userId ?? '(not a user id)'}` :
      !parsed.signatureValid ? 'bad signature' : undefined;
    this.#emit({ type: 'keyPackage', guildId: group.guildId, userId, accepted: reason === undefined, ...(reason ? { reason } : {}) });
    if (reason) return;
    // A member that sends a new key package has reset: it leaves the group to be added again.
    if (member.leaf !== undefined && !member.removing) this.#leaveGroup(group, member);
    this.#withdrawAdd(group, member);
    member.keyPackage = parsed;
    if (group.established) this.#proposeAdd(group, member);
    else this.#deliverInflightAdds(group);
  }

  /** Proposes adding `member` (with its key package) to the established group. */
  #proposeAdd(group: Group, member: Member): void {
    const groupId = this.#groupId(group);
    if (!groupId || !member.keyPackage) return;
    const proposal = this.externalSender.proposeAdd(groupId, group.epoch, member.keyPackage.keyPackage);
    this.#appendProposal(group, { kind: 'add', member, proposal });
  }

  #appendProposal(group: Group, entry: Proposal): void {
    group.proposals.push(entry);
    this.#clearCommits(group);
    const to = this.#groupMembers(group);
    const payload = proposalsPayload('append', [entry.proposal.message]);
    for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, payload);
    this.#emit({ type: 'proposals', guildId: group.guildId, operation: 'append', kinds: [entry.kind], epoch: group.epoch, to: to.map((m) => m.participant.userId) });
  }

  /** Withdraws `member`'s open Add (an old key package, or it left): revoke it where it was sent. */
  #withdrawAdd(group: Group, member: Member): void {
    if (group.established) {
      const open = group.proposals.filter((p) => p.kind === 'add' && p.member === member);
      if (open.length === 0) return;
      group.proposals = group.proposals.filter((p) => !open.includes(p));
      this.#clearCommits(group);
      const to = this.#groupMembers(group);
      const payload = proposalsPayload('revoke', open.map((p) => p.proposal.ref));
      for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, payload);
      this.#emit({ type: 'proposals', guildId: group.guildId, operation: 'revoke', kinds: ['add'], epoch: group.epoch, to: to.map((m) => m.participant.userId) });
      return;
    }
    const add = group.inflightAdds.get(member);
    if (!add) return;
    group.inflightAdds.delete(member);
    this.#clearCommits(group);
    const ref = add.ref.toString('hex');
    const to = group.members.filter((m) => m.delivered.delete(ref));
    for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, proposalsPayload('revoke', [add.ref]));
    if (to.length > 0) this.#emit({ type: 'proposals', guildId: group.guildId, operation: 'revoke', kinds: ['add'], epoch: 0n, to: to.map((m) => m.participant.userId) });
  }

  /**
   * Initial group creation: every pending member with a local group gets the Adds of the others
   * that sent a key package ("A client that joins ... receives any already sent in-flight add
   * proposals").
   */
  #deliverInflightAdds(group: Group): void {
    const groupId = this.#groupId(group);
    if (!groupId || group.established || group.protocolVersion === 0) return;
    for (const m of group.members) {
      if (m.keyPackage && !group.inflightAdds.has(m)) {
        group.inflightAdds.set(m, this.externalSender.proposeAdd(groupId, 0n, m.keyPackage.keyPackage));
      }
    }
    for (const recipient of group.members) {
      if (!recipient.hasExternalSender) continue;
      const fresh = [...group.inflightAdds].filter(([m, p]) => m !== recipient && !recipient.delivered.has(p.ref.toString('hex')));
      if (fresh.length === 0) continue;
      for (const [, p] of fresh) recipient.delivered.add(p.ref.toString('hex'));
      this.#clearCommits(group);
      recipient.participant.sendBinary(DaveOp.MlsProposals, proposalsPayload('append', fresh.map(([, p]) => p.message)));
      this.#emit({ type: 'proposals', guildId: group.guildId, operation: 'append', kinds: fresh.map(() => 'add'), epoch: 0n, to: [recipient.participant.userId] });
    }
  }

  #clearCommits(group: Group): void {
    for (const m of group.members) m.commit = undefined;
  }

  /** The ProposalRefs (hex) a commit from `member` must cover now, or undefined if it cannot commit. */
  #expectedRefs(group: Group, member: Member): Set<string> | undefined {
    if (group.established) {
      if (member.leaf === undefined || member.removing) return undefined;
      return new Set(group.proposals.map((p) => p.proposal.ref.toString('hex')));
    }
    if (!member.hasExternalSender) return undefined;
    return new Set([...group.inflightAdds].filter(([m]) => m !== member).map(([, p]) => p.ref.toString('hex')));
  }

  #onCommitWelcome(group: Group, member: Member, payload: Buffer): void {
    const userId = member.participant.userId;
    const reject = (reason: string) => this.#emit({ type: 'commitRejected', guildId: group.guildId, userId, reason });
    let parsed: ReturnType<typeof parseCommitWelcome>;
    try {
      parsed = parseCommitWelcome(payload);
    } catch (error) {
      return reject(`unparsable: ${(error as Error).message}`);
    }
    const { commit, welcome } = parsed;
    const expected = this.#expectedRefs(group, member);
    const groupId = this.#groupId(group);
    // The gateway's checks (daveprotocol.com, "Voice Gateway Commit Validity", "Commit Ordering").
    if (group.protocolVersion === 0) return reject('the call is not end-to-end encrypted');
    if (!expected) return reject('not a committing member');
    if (groupId && !commit.groupId.equals(groupId)) return reject('commit for another group');
    if (commit.epoch !== group.epoch) return reject(`commit for epoch ${commit.epoch}, the group is at ${group.epoch}`);
    if (commit.leafIndex !== (group.established ? member.leaf : 0)) return reject(`committer leaf ${commit.leafIndex}`);
    if (commit.inlineProposals > 0) return reject('inline proposals');
    const refs = commit.proposalRefs.map((r) => r.toString('hex'));
    if (refs.length === 0) return reject('commit references no proposal');
    if (refs.length !== expected.size || refs.some((r) => !expected.has(r))) return reject('commit does not reference exactly the open proposals');
    const adds = this.#addsIn(group, refs);
    if (adds.length > 0 && !welcome) return reject('commit adds members but carries no welcome');
    for (const added of adds) {
      if (!welcome || !welcomeFor(welcome, added.keyPackage!.ref)) return reject(`welcome has no secrets for ${added.participant.userId}`);
    }
    member.commit = { parsed: commit, welcome };
    this.#tryAnnounce(group);
  }

  /** Members added by the proposals `refs` (hex), in the commit's order. */
  #addsIn(group: Group, refs: string[]): Member[] {
    const byRef = new Map<string, Member>();
    if (group.established) {
      for (const p of group.proposals) if (p.kind === 'add') byRef.set(p.proposal.ref.toString('hex'), p.member);
    } else {
      for (const [m, p] of group.inflightAdds) byRef.set(p.ref.toString('hex'), m);
    }
    return refs.map((r) => byRef.get(r)).filter((m) => m !== undefined);
  }

  /** Announces the first valid commit from an allowed committer (clients before listeners). */
  #tryAnnounce(group: Group): void {
    const clientsCanCommit = group.members.some((m) => m.participant.kind === 'client' && this.#expectedRefs(group, m) !== undefined);
    const winner = group.members.find((m) => m.commit && (m.participant.kind === 'client' || !clientsCanCommit));
    if (winner) this.#announce(group, winner);
  }

  #announce(group: Group, committer: Member): void {
    const { parsed, welcome } = committer.commit!;
    const refs = parsed.proposalRefs.map((r) => r.toString('hex'));
    const adds = this.#addsIn(group, refs);
    const removes = group.established
      ? group.proposals.filter((p) => p.kind === 'remove' && refs.includes(p.proposal.ref.toString('hex'))) as Extract<Proposal, { kind: 'remove' }>[]
      : [];
    const previousMembers = group.established ? this.#groupMembers(group) : [committer];
    if (!group.established) {
      group.leaves = [committer];
      committer.leaf = 0;
      committer.keyPackage = undefined;
    }
    for (const r of removes) {
      group.leaves[r.leaf] = undefined;
      r.member.leaf = undefined;
      r.member.removing = false;
    }
    // Adds take the leftmost blank leaf, else extend the tree (RFC 9420 §12.1.1).
    for (const m of adds) {
      let leaf = group.leaves.findIndex((l) => l === undefined);
      if (leaf === -1) leaf = group.leaves.length;
      group.leaves[leaf] = m;
      m.leaf = leaf;
    }
    while (group.leaves.length > 0 && group.leaves.at(-1) === undefined) group.leaves.pop();
    group.established = true;
    group.epoch += 1n;
    group.proposals = [];
    group.inflightAdds.clear();
    for (const m of group.members) m.delivered.clear();
    this.#clearCommits(group);
    group.lastCommit = parsed.message;

    const transitionId = this.#nextTransitionId(group);
    const head = Buffer.alloc(2);
    head.writeUInt16BE(transitionId);
    const announced = Buffer.concat([head, parsed.message]);
    const stayers = previousMembers.filter((m) => m.leaf !== undefined);
    for (const m of stayers) m.participant.sendBinary(DaveOp.MlsAnnounceCommitTransition, announced);
    for (const m of adds) {
      m.participant.sendBinary(DaveOp.MlsWelcome, Buffer.concat([head, welcomeFor(welcome!, m.keyPackage!.ref)!]));
      m.keyPackage = undefined;
    }
    const notify = [...stayers, ...adds];
    group.transitions.set(transitionId, { protocolVersion: group.protocolVersion, waiting: new Set(notify), notify });
    this.#emit({
      type: 'commit',
      guildId: group.guildId,
      committer: committer.participant.userId,
      committerKind: committer.participant.kind,
      epoch: group.epoch,
      transitionId,
      added: adds.map((m) => m.participant.userId),
      removed: removes.map((r) => r.member.participant.userId),
    });
    // Key packages that arrived for members the commit did not cover are proposed in the new epoch.
    for (const m of group.members) if (m.keyPackage && m.leaf === undefined) this.#proposeAdd(group, m);
  }

  #maybeExecute(group: Group, transitionId: number): void {
    const transition = group.transitions.get(transitionId);
    if (!transition || transition.waiting.size > 0) return;
    group.transitions.delete(transitionId);
    group.protocolVersion = transition.protocolVersion;
    for (const m of transition.notify) {
      if (group.members.includes(m)) m.participant.sendJson(DaveOp.ExecuteTransition, { transition_id: transitionId });
    }
    this.#emit({ type: 'executeTransition', guildId: group.guildId, transitionId, protocolVersion: transition.protocolVersion });
  }

  /**
   * `member` leaves the MLS group (it left the call, or flagged an invalid commit or welcome):
   * a Remove proposal, or the sole member reset when one member would remain.
   */
  #leaveGroup(group: Group, member: Member): void {
    for (const [id, transition] of group.transitions) {
      if (transition.waiting.delete(member)) this.#maybeExecute(group, id);
    }
    this.#withdrawAdd(group, member);
    member.commit = undefined;
    member.delivered.clear();
    if (member.leaf === undefined || member.removing) return;
    const remaining = this.#groupMembers(group).filter((m) => m !== member);
    if (remaining.length >= 2) {
      const groupId = this.#groupId(group);
      member.removing = true;
      if (!groupId) return;
      const proposal = this.externalSender.proposeRemove(groupId, group.epoch, member.leaf);
      this.#appendProposal(group, { kind: 'remove', member, leaf: member.leaf, proposal });
      return;
    }
    member.leaf = undefined;
    this.#resetGroup(group);
    // Sole member reset (daveprotocol.com): no member keeps control of an established group.
    const [sole] = remaining;
    if (!sole) return;
    sole.keyPackage = undefined;
    sole.participant.sendJson(DaveOp.PrepareEpoch, { protocol_version: group.protocolVersion, epoch: 1 });
    sole.participant.sendJson(DaveOp.PrepareTransition, { protocol_version: group.protocolVersion, transition_id: 0 });
    this.#emit({ type: 'prepareEpoch', guildId: group.guildId, protocolVersion: group.protocolVersion, to: [sole.participant.userId], reason: 'sole member' });
    this.#deliverInflightAdds(group);
  }

  /** Forgets the MLS group: the next commit creates a new one. */
  #resetGroup(group: Group): void {
    group.established = false;
    group.epoch = 0n;
    group.leaves = [];
    group.proposals = [];
    group.inflightAdds.clear();
    group.transitions.clear();
    group.lastCommit = undefined;
    for (const m of group.members) {
      m.leaf = undefined;
      m.removing = false;
      m.delivered.clear();
      m.commit = undefined;
    }
  }

  #downgrade(group: Group, reason: NonNullable<Group['downgradedFor']>): number {
    const transitionId = this.#nextTransitionId(group);
    group.downgradedFor = reason;
    const targets = group.members.filter((m) => m.participant.maxProtocolVersion > 0 && m.version > 0);
    for (const m of targets) m.participant.sendJson(DaveOp.PrepareTransition, { protocol_version: 0, transition_id: transitionId });
    group.transitions.set(transitionId, { protocolVersion: 0, waiting: new Set(targets), notify: targets });
    this.#emit({ type: 'prepareTransition', guildId: group.guildId, transitionId, protocolVersion: 0 });
    this.#maybeExecute(group, transitionId);
    return transitionId;
  }

  #upgrade(group: Group): void {
    group.downgradedFor = undefined;
    group.protocolVersion = this.protocolVersion;
    this.#resetGroup(group);
    const to = group.members.filter((m) => m.participant.maxProtocolVersion > 0);
    for (const m of to) {
      m.keyPackage = undefined;
      m.version = group.protocolVersion;
      m.participant.sendJson(DaveOp.PrepareEpoch, { protocol_version: group.protocolVersion, epoch: 1 });
      if (!m.hasExternalSender) {
        m.participant.sendBinary(DaveOp.MlsExternalSenderPackage, this.externalSender.serialize());
        m.hasExternalSender = true;
      }
    }
    this.#emit({ type: 'prepareEpoch', guildId: group.guildId, protocolVersion: group.protocolVersion, to: to.map((m) => m.participant.userId), reason: 'upgrade' });
  }
}
