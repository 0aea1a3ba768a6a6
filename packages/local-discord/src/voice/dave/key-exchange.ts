/**
 * The MLS group key exchange of one call, as the gateway runs it (daveprotocol.com, "Group Key
 * Exchange"): key packages (op 26) become external Add proposals and departures Remove proposals
 * (op 27); commits (op 28) are checked, the winner announced (op 29) with targeted welcomes (op 30);
 * transitions (op 21/22/23) execute once everyone is ready; the sole member reset and the
 * downgrade and upgrade between DAVE and transport-only encryption re-create the group (op 24).
 */
import {
  CIPHERSUITE_P256,
  parseCommitWelcome,
  parseKeyPackageMessage,
  proposalsPayload,
  welcomeFor,
  type ExternalSender,
  type ParsedKeyPackage,
} from './mls.ts';
import {
  addsIn,
  clearCommits,
  committingMembers,
  expectedRefs,
  groupIdFor,
  nextTransitionId,
  resetGroup,
  type DaveEvent,
  type Group,
  type Member,
  type Proposal,
} from './group.ts';
import { DaveOp } from './opcodes.ts';

export class KeyExchange {
  readonly #externalSender: ExternalSender;
  /** The version an upgrade returns to. */
  readonly #protocolVersion: number;
  readonly #emit: (event: DaveEvent) => void;

  constructor(options: { externalSender: ExternalSender; protocolVersion: number; emit: (event: DaveEvent) => void }) {
    this.#externalSender = options.externalSender;
    this.#protocolVersion = options.protocolVersion;
    this.#emit = options.emit;
  }

  onKeyPackage(group: Group, member: Member, payload: Buffer): void {
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
      parsed.cipherSuite !== CIPHERSUITE_P256
        ? `ciphersuite ${parsed.cipherSuite}`
        : parsed.userId !== userId
          ? `credential names user ${parsed.userId ?? '(not a user id)'}`
          : !parsed.signatureValid
            ? 'bad signature'
            : undefined;
    this.#emit({ type: 'keyPackage', guildId: group.guildId, userId, accepted: reason === undefined, ...(reason ? { reason } : {}) });
    if (reason) return;
    // A member that sends a new key package has reset: it leaves the group to be added again.
    if (member.leaf !== undefined && !member.removing) this.leaveGroup(group, member);
    this.#withdrawAdd(group, member);
    member.keyPackage = parsed;
    if (group.established) this.#proposeAdd(group, member);
    else this.deliverInflightAdds(group);
  }

  /** Proposes adding `member` (with its key package) to the established group. */
  #proposeAdd(group: Group, member: Member): void {
    const groupId = groupIdFor(group);
    if (!groupId || !member.keyPackage) return;
    const proposal = this.#externalSender.proposeAdd(groupId, group.epoch, member.keyPackage.keyPackage);
    this.#appendProposal(group, { kind: 'add', member, proposal });
  }

  #appendProposal(group: Group, entry: Proposal): void {
    group.proposals.push(entry);
    clearCommits(group);
    const to = committingMembers(group);
    const payload = proposalsPayload('append', [entry.proposal.message]);
    for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, payload);
    this.#emit({
      type: 'proposals',
      guildId: group.guildId,
      operation: 'append',
      kinds: [entry.kind],
      epoch: group.epoch,
      to: to.map((m) => m.participant.userId),
    });
  }

  /** Withdraws `member`'s open Add (an old key package, or it left): revoke it where it was sent. */
  #withdrawAdd(group: Group, member: Member): void {
    if (group.established) {
      const open = group.proposals.filter((p) => p.kind === 'add' && p.member === member);
      if (open.length === 0) return;
      group.proposals = group.proposals.filter((p) => !open.includes(p));
      clearCommits(group);
      const to = committingMembers(group);
      const payload = proposalsPayload(
        'revoke',
        open.map((p) => p.proposal.ref),
      );
      for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, payload);
      this.#emit({
        type: 'proposals',
        guildId: group.guildId,
        operation: 'revoke',
        kinds: ['add'],
        epoch: group.epoch,
        to: to.map((m) => m.participant.userId),
      });
      return;
    }
    const add = group.inflightAdds.get(member);
    if (!add) return;
    group.inflightAdds.delete(member);
    clearCommits(group);
    const ref = add.ref.toString('hex');
    const to = group.members.filter((m) => m.delivered.delete(ref));
    for (const m of to) m.participant.sendBinary(DaveOp.MlsProposals, proposalsPayload('revoke', [add.ref]));
    if (to.length > 0)
      this.#emit({
        type: 'proposals',
        guildId: group.guildId,
        operation: 'revoke',
        kinds: ['add'],
        epoch: 0n,
        to: to.map((m) => m.participant.userId),
      });
  }

  /**
   * Initial group creation: every pending member with a local group gets the Adds of the others
   * that sent a key package ("A client that joins ... receives any already sent in-flight add
   * proposals").
   */
  deliverInflightAdds(group: Group): void {
    const groupId = groupIdFor(group);
    if (!groupId || group.established || group.protocolVersion === 0) return;
    for (const m of group.members) {
      if (m.keyPackage && !group.inflightAdds.has(m)) {
        group.inflightAdds.set(m, this.#externalSender.proposeAdd(groupId, 0n, m.keyPackage.keyPackage));
      }
    }
    for (const recipient of group.members) {
      if (!recipient.hasExternalSender) continue;
      const fresh = [...group.inflightAdds].filter(([m, p]) => m !== recipient && !recipient.delivered.has(p.ref.toString('hex')));
      if (fresh.length === 0) continue;
      for (const [, p] of fresh) recipient.delivered.add(p.ref.toString('hex'));
      clearCommits(group);
      recipient.participant.sendBinary(
        DaveOp.MlsProposals,
        proposalsPayload(
          'append',
          fresh.map(([, p]) => p.message),
        ),
      );
      this.#emit({
        type: 'proposals',
        guildId: group.guildId,
        operation: 'append',
        kinds: fresh.map(() => 'add'),
        epoch: 0n,
        to: [recipient.participant.userId],
      });
    }
  }

  onCommitWelcome(group: Group, member: Member, payload: Buffer): void {
    const userId = member.participant.userId;
    const reject = (reason: string) => this.#emit({ type: 'commitRejected', guildId: group.guildId, userId, reason });
    let parsed: ReturnType<typeof parseCommitWelcome>;
    try {
      parsed = parseCommitWelcome(payload);
    } catch (error) {
      return reject(`unparsable: ${(error as Error).message}`);
    }
    const { commit, welcome } = parsed;
    const expected = expectedRefs(group, member);
    const groupId = groupIdFor(group);
    // The gateway's checks (daveprotocol.com, "Voice Gateway Commit Validity", "Commit Ordering").
    if (group.protocolVersion === 0) return reject('the call is not end-to-end encrypted');
    if (!expected) return reject('not a committing member');
    if (groupId && !commit.groupId.equals(groupId)) return reject('commit for another group');
    if (commit.epoch !== group.epoch) return reject(`commit for epoch ${commit.epoch}, the group is at ${group.epoch}`);
    if (commit.leafIndex !== (group.established ? member.leaf : 0)) return reject(`committer leaf ${commit.leafIndex}`);
    if (commit.inlineProposals > 0) return reject('inline proposals');
    const refs = commit.proposalRefs.map((r) => r.toString('hex'));
    if (refs.length === 0) return reject('commit references no proposal');
    if (refs.length !== expected.size || refs.some((r) => !expected.has(r)))
      return reject('commit does not reference exactly the open proposals');
    const adds = addsIn(group, refs);
    if (adds.length > 0 && !welcome) return reject('commit adds members but carries no welcome');
    for (const added of adds) {
      if (!welcome || !welcomeFor(welcome, added.keyPackage!.ref)) return reject(`welcome has no secrets for ${added.participant.userId}`);
    }
    member.commit = { parsed: commit, welcome };
    this.tryAnnounce(group);
  }

  /** Announces the first valid commit from an allowed committer (clients before listeners). */
  tryAnnounce(group: Group): void {
    const clientsCanCommit = group.members.some((m) => m.participant.kind === 'client' && expectedRefs(group, m) !== undefined);
    const winner = group.members.find((m) => m.commit && (m.participant.kind === 'client' || !clientsCanCommit));
    if (winner) this.#announce(group, winner);
  }

  #announce(group: Group, committer: Member): void {
    const { parsed, welcome } = committer.commit!;
    const refs = parsed.proposalRefs.map((r) => r.toString('hex'));
    const adds = addsIn(group, refs);
    const removes = group.established
      ? (group.proposals.filter((p) => p.kind === 'remove' && refs.includes(p.proposal.ref.toString('hex'))) as Extract<
          Proposal,
          { kind: 'remove' }
        >[])
      : [];
    const previousMembers = group.established ? committingMembers(group) : [committer];
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
    // Adds take the leftmost blank leaf, else extend the tree (RFC 9420 section 12.1.1).
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
    clearCommits(group);
    group.lastCommit = parsed.message;

    const transitionId = nextTransitionId(group);
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

  maybeExecute(group: Group, transitionId: number): void {
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
  leaveGroup(group: Group, member: Member): void {
    for (const [id, transition] of group.transitions) {
      if (transition.waiting.delete(member)) this.maybeExecute(group, id);
    }
    this.#withdrawAdd(group, member);
    member.commit = undefined;
    member.delivered.clear();
    if (member.leaf === undefined || member.removing) return;
    const remaining = committingMembers(group).filter((m) => m !== member);
    if (remaining.length >= 2) {
      const groupId = groupIdFor(group);
      member.removing = true;
      if (!groupId) return;
      const proposal = this.#externalSender.proposeRemove(groupId, group.epoch, member.leaf);
      this.#appendProposal(group, { kind: 'remove', member, leaf: member.leaf, proposal });
      return;
    }
    member.leaf = undefined;
    resetGroup(group);
    // Sole member reset (daveprotocol.com): no member keeps control of an established group.
    const [sole] = remaining;
    if (!sole) return;
    sole.keyPackage = undefined;
    sole.participant.sendJson(DaveOp.PrepareEpoch, { protocol_version: group.protocolVersion, epoch: 1 });
    sole.participant.sendJson(DaveOp.PrepareTransition, { protocol_version: group.protocolVersion, transition_id: 0 });
    this.#emit({
      type: 'prepareEpoch',
      guildId: group.guildId,
      protocolVersion: group.protocolVersion,
      to: [sole.participant.userId],
      reason: 'sole member',
    });
    this.deliverInflightAdds(group);
  }

  downgrade(group: Group, reason: NonNullable<Group['downgradedFor']>): number {
    const transitionId = nextTransitionId(group);
    group.downgradedFor = reason;
    const targets = group.members.filter((m) => m.participant.maxProtocolVersion > 0 && m.version > 0);
    for (const m of targets) m.participant.sendJson(DaveOp.PrepareTransition, { protocol_version: 0, transition_id: transitionId });
    group.transitions.set(transitionId, { protocolVersion: 0, waiting: new Set(targets), notify: targets });
    this.#emit({ type: 'prepareTransition', guildId: group.guildId, transitionId, protocolVersion: 0 });
    this.maybeExecute(group, transitionId);
    return transitionId;
  }

  upgrade(group: Group): void {
    group.downgradedFor = undefined;
    group.protocolVersion = this.#protocolVersion;
    resetGroup(group);
    const to = group.members.filter((m) => m.participant.maxProtocolVersion > 0);
    for (const m of to) {
      m.keyPackage = undefined;
      m.version = group.protocolVersion;
      m.participant.sendJson(DaveOp.PrepareEpoch, { protocol_version: group.protocolVersion, epoch: 1 });
      if (!m.hasExternalSender) {
        m.participant.sendBinary(DaveOp.MlsExternalSenderPackage, this.#externalSender.serialize());
        m.hasExternalSender = true;
      }
    }
    this.#emit({
      type: 'prepareEpoch',
      guildId: group.guildId,
      protocolVersion: group.protocolVersion,
      to: to.map((m) => m.participant.userId),
      reason: 'upgrade',
    });
  }
}
