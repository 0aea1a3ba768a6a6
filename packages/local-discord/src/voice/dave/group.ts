/**
 * One guild's call as the DAVE gateway keeps it: its participants, the MLS group they form, open
 * proposals and transitions, and the small pure rules over that state that the key exchange
 * (key-exchange.ts) and the gateway (gateway.ts) share.
 */
import { groupIdOf, type ExternalProposal, type ParsedCommit, type ParsedKeyPackage, type ParsedWelcome } from './mls.ts';

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
  | {
      type: 'commit';
      guildId: string;
      committer: string;
      committerKind: 'client' | 'listener';
      epoch: bigint;
      transitionId: number;
      added: string[];
      removed: string[];
    }
  | { type: 'readyForTransition'; guildId: string; userId: string; transitionId: number }
  | { type: 'executeTransition'; guildId: string; transitionId: number; protocolVersion: number }
  | { type: 'prepareTransition'; guildId: string; transitionId: number; protocolVersion: number }
  | { type: 'prepareEpoch'; guildId: string; protocolVersion: number; to: string[]; reason: 'sole member' | 'upgrade' }
  | { type: 'invalidCommitWelcome'; guildId: string; userId: string; transitionId: number }
  | { type: 'sentInvalid'; guildId: string; userId: string; kind: 'commit' | 'welcome'; transitionId: number }
  | { type: 'error'; guildId: string; message: string };

export interface Member {
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

export type Proposal =
  | { kind: 'add'; member: Member; proposal: ExternalProposal }
  | { kind: 'remove'; member: Member; leaf: number; proposal: ExternalProposal };

interface Transition {
  protocolVersion: number;
  waiting: Set<Member>;
  notify: Member[];
}

export interface Group {
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

export function newGroup(guildId: string, protocolVersion: number): Group {
  return {
    guildId,
    channelId: undefined,
    protocolVersion,
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
}

export function newMember(participant: DaveParticipant, version: number): Member {
  return {
    participant,
    version,
    hasExternalSender: false,
    keyPackage: undefined,
    leaf: undefined,
    removing: false,
    delivered: new Set(),
    commit: undefined,
  };
}

export function nextTransitionId(group: Group): number {
  const id = group.nextTransitionId;
  // uint16 on the wire; 0 is reserved for (re)initialisation.
  group.nextTransitionId = id >= 0xffff ? 1 : id + 1;
  return id;
}

/** The MLS group id: derived from the voice channel, once a listener named it. */
export function groupIdFor(group: Group): Buffer | undefined {
  return group.channelId === undefined ? undefined : groupIdOf(group.channelId);
}

/** Members of the established group that take part in its next commit. */
export function committingMembers(group: Group): Member[] {
  return group.members.filter((m) => m.leaf !== undefined && !m.removing);
}

export function clearCommits(group: Group): void {
  for (const m of group.members) m.commit = undefined;
}

/** The ProposalRefs (hex) a commit from `member` must cover now, or undefined if it cannot commit. */
export function expectedRefs(group: Group, member: Member): Set<string> | undefined {
  if (group.established) {
    if (member.leaf === undefined || member.removing) return undefined;
    return new Set(group.proposals.map((p) => p.proposal.ref.toString('hex')));
  }
  if (!member.hasExternalSender) return undefined;
  return new Set([...group.inflightAdds].filter(([m]) => m !== member).map(([, p]) => p.ref.toString('hex')));
}

/** Members added by the proposals `refs` (hex), in the commit's order. */
export function addsIn(group: Group, refs: string[]): Member[] {
  const byRef = new Map<string, Member>();
  if (group.established) {
    for (const p of group.proposals) if (p.kind === 'add') byRef.set(p.proposal.ref.toString('hex'), p.member);
  } else {
    for (const [m, p] of group.inflightAdds) byRef.set(p.ref.toString('hex'), m);
  }
  return refs.map((r) => byRef.get(r)).filter((m) => m !== undefined);
}

/** Forgets the MLS group: the next commit creates a new one. */
export function resetGroup(group: Group): void {
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

export function snapshotOf(group: Group): DaveGroupSnapshot {
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
 * True when the call is end-to-end encrypted and at rest: every DAVE-capable participant is in
 * the established group, no proposal is open and every transition executed.
 */
export function isSettled(group: Group): boolean {
  if (group.protocolVersion === 0 || !group.established) return false;
  if (group.transitions.size > 0 || group.proposals.length > 0) return false;
  return group.members.every((m) => m.participant.maxProtocolVersion === 0 || (m.leaf !== undefined && !m.removing));
}
