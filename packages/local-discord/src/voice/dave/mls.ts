/**
 * The little of MLS (RFC 9420) a DAVE voice gateway needs as the group's external sender: its
 * `ExternalSender` struct, external Add/Remove proposals framed as a signed `PublicMessage`, the
 * references (RefHash) of proposals and key packages, and enough parsing of the members' key
 * packages, commits and welcomes to route and check them. DAVE v1 fixes the parameters
 * (daveprotocol.com, "MLS Parameters"): MLS 1.0, ciphersuite 2 (DHKEMP256_AES128GCM_SHA256_P256),
 * basic credentials whose identity is the big-endian 64-bit user id.
 *
 * Written from the RFC's struct definitions (section 6 framing, section 5.2 hashes, section 10 key packages, section 12
 * proposals, commits and welcomes) with node:crypto; no MLS library plays the external sender.
 */
import { createHash, createPublicKey, generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { LocalDiscordError } from '../../errors.ts';
import { TlsReader, TlsWriter } from './tls.ts';

const MLS_VERSION_10 = 1;
/** DHKEMP256_AES128GCM_SHA256_P256, the DAVE v1 ciphersuite. */
export const CIPHERSUITE_P256 = 2;

const WireFormat = { PublicMessage: 1, PrivateMessage: 2, Welcome: 3, GroupInfo: 4, KeyPackage: 5 } as const;
const SenderType = { Member: 1, External: 2, NewMemberProposal: 3, NewMemberCommit: 4 } as const;
const ContentType = { Application: 1, Proposal: 2, Commit: 3 } as const;
const ProposalType = { Add: 1, Update: 2, Remove: 3 } as const;
const CREDENTIAL_BASIC = 1;
const LEAF_SOURCE_KEY_PACKAGE = 1;
const LEAF_SOURCE_COMMIT = 3;
const PROPOSAL_OR_REF_PROPOSAL = 1;
const PROPOSAL_OR_REF_REFERENCE = 2;

/** SignWithLabel (RFC 9420 section 5.1.2): ECDSA P-256 / SHA-256 over SignContent, DER-encoded. */
function signWithLabel(privateKey: KeyObject, label: string, content: Buffer): Buffer {
  return sign('sha256', signContent(label, content), { key: privateKey, dsaEncoding: 'der' });
}

/** VerifyWithLabel for a P-256 public key given as the uncompressed point MLS carries. */
function verifyWithLabel(publicPoint: Buffer, label: string, content: Buffer, signature: Buffer): boolean {
  try {
    return verify('sha256', signContent(label, content), { key: p256PublicKey(publicPoint), dsaEncoding: 'der' }, signature);
  } catch {
    return false;
  }
}

function signContent(label: string, content: Buffer): Buffer {
  return new TlsWriter()
    .vector(Buffer.from(`MLS 1.0 ${label}`))
    .vector(content)
    .bytes();
}

/** RefHash (RFC 9420 section 5.2) with SHA-256; labels are "MLS 1.0 Proposal Reference" and the like. */
function refHash(label: string, value: Buffer): Buffer {
  return createHash('sha256')
    .update(new TlsWriter().vector(Buffer.from(label)).vector(value).bytes())
    .digest();
}

function p256PublicKey(point: Buffer): KeyObject {
  if (point.length !== 65 || point[0] !== 0x04)
    throw new LocalDiscordError('mls_malformed', { message: 'not an uncompressed P-256 point' });
  return createPublicKey({
    key: { kty: 'EC', crv: 'P-256', x: point.subarray(1, 33).toString('base64url'), y: point.subarray(33).toString('base64url') },
    format: 'jwk',
  });
}

/** The MLS group id DAVE uses: the channel id as a big-endian uint64. */
export function groupIdOf(channelId: string): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(channelId));
  return b;
}

/** A user id from a basic credential identity (big-endian uint64). */
function userIdOf(identity: Buffer): string | undefined {
  return identity.length === 8 ? identity.readBigUInt64BE(0).toString() : undefined;
}

/** An external proposal as sent to members, with its ProposalRef for commit checks and revokes. */
export interface ExternalProposal {
  /** The MLSMessage (PublicMessage, sender_type = external). */
  message: Buffer;
  ref: Buffer;
}

/**
 * The voice gateway's external sender: a P-256 signing key and a basic credential. Members put
 * `serialize()` in their group's external_senders extension (op 25) and accept proposals it signs.
 */
export class ExternalSender {
  readonly identity: Buffer;
  readonly publicPoint: Buffer;
  readonly #privateKey: KeyObject;

  constructor(identity = Buffer.from('fake-discord-voice-gateway')) {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    this.#privateKey = privateKey;
    this.identity = identity;
    const jwk = publicKey.export({ format: 'jwk' });
    this.publicPoint = Buffer.concat([Buffer.from([0x04]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  }

  /** `struct { SignaturePublicKey signature_key; Credential credential; } ExternalSender` (section 12.1.8.1). */
  serialize(): Buffer {
    return new TlsWriter().vector(this.publicPoint).u16(CREDENTIAL_BASIC).vector(this.identity).bytes();
  }

  /** Frames `proposal` as a PublicMessage from external sender 0, signed over FramedContentTBS (section 6.1). */
  propose(groupId: Buffer, epoch: bigint, proposal: Buffer): ExternalProposal {
    const content = new TlsWriter()
      .vector(groupId)
      .u64(epoch)
      .u8(SenderType.External)
      .u32(0) // sender_index: the one external sender in the extension
      .vector(Buffer.alloc(0)) // authenticated_data
      .u8(ContentType.Proposal)
      .raw(proposal)
      .bytes();
    // FramedContentTBS carries no GroupContext for external senders.
    const tbs = new TlsWriter().u16(MLS_VERSION_10).u16(WireFormat.PublicMessage).raw(content).bytes();
    const auth = new TlsWriter().vector(signWithLabel(this.#privateKey, 'FramedContentTBS', tbs)).bytes();
    // No membership_tag: that is only for member senders.
    const message = new TlsWriter().u16(MLS_VERSION_10).u16(WireFormat.PublicMessage).raw(content).raw(auth).bytes();
    const authenticatedContent = new TlsWriter().u16(WireFormat.PublicMessage).raw(content).raw(auth).bytes();
    return { message, ref: refHash('MLS 1.0 Proposal Reference', authenticatedContent) };
  }

  /** An external Add for a member's KeyPackage (the bytes inside its op 26 MLSMessage). */
  proposeAdd(groupId: Buffer, epoch: bigint, keyPackage: Buffer): ExternalProposal {
    return this.propose(groupId, epoch, new TlsWriter().u16(ProposalType.Add).raw(keyPackage).bytes());
  }

  /** An external Remove of the member at `leafIndex`. */
  proposeRemove(groupId: Buffer, epoch: bigint, leafIndex: number): ExternalProposal {
    return this.propose(groupId, epoch, new TlsWriter().u16(ProposalType.Remove).u32(leafIndex).bytes());
  }
}

/** `dave_mls_proposals` (op 27) payload: append (0) a vector of MLSMessages, or revoke (1) refs. */
export function proposalsPayload(operation: 'append' | 'revoke', items: readonly Buffer[]): Buffer {
  const list = new TlsWriter();
  for (const item of items) {
    if (operation === 'append') list.raw(item);
    else list.vector(item);
  }
  return new TlsWriter()
    .u8(operation === 'append' ? 0 : 1)
    .vector(list.bytes())
    .bytes();
}

interface LeafNodeInfo {
  signatureKey: Buffer;
  credentialType: number;
  identity: Buffer;
  source: number;
}

function readLeafNode(r: TlsReader): LeafNodeInfo {
  r.vector(); // encryption_key
  const signatureKey = r.vector();
  const credentialType = r.u16();
  // basic: identity<V>; x509: certificates<V>. Either way one vector.
  const identity = r.vector();
  for (let i = 0; i < 5; i++) r.vector(); // capabilities: versions, cipher_suites, extensions, proposals, credentials
  const source = r.u8();
  if (source === LEAF_SOURCE_KEY_PACKAGE) {
    r.u64(); // not_before
    r.u64(); // not_after
  } else if (source === LEAF_SOURCE_COMMIT) r.vector(); // parent_hash
  r.vector(); // extensions
  r.vector(); // signature
  return { signatureKey, credentialType, identity, source };
}

export interface ParsedKeyPackage {
  /** The KeyPackage struct's bytes (what an Add proposal carries and KeyPackageRef hashes). */
  keyPackage: Buffer;
  ref: Buffer;
  cipherSuite: number;
  /** From the basic credential; undefined when the identity is not 8 bytes. */
  userId: string | undefined;
  credentialType: number;
  signatureValid: boolean;
}

/**
 * Parses a `dave_mls_key_package` (op 26) payload. The protocol text says an MLSMessage; libdave
 * and davey send the bare KeyPackage, so both are accepted.
 */
export function parseKeyPackageMessage(payload: Buffer): ParsedKeyPackage {
  const r = new TlsReader(payload);
  if (payload.length >= 4 && payload.readUInt16BE(0) === MLS_VERSION_10 && payload.readUInt16BE(2) === WireFormat.KeyPackage) {
    r.offset = 4;
  }
  const start = r.offset;
  if (r.u16() !== MLS_VERSION_10) throw new LocalDiscordError('mls_malformed', { message: 'key package is not MLS 1.0' });
  const cipherSuite = r.u16();
  r.vector(); // init_key
  const leaf = readLeafNode(r);
  r.vector(); // extensions
  const tbs = r.since(start);
  const signature = r.vector();
  if (r.remaining !== 0) throw new LocalDiscordError('mls_malformed', { message: `${r.remaining} trailing bytes after the key package` });
  const keyPackage = r.since(start);
  return {
    keyPackage,
    ref: refHash('MLS 1.0 KeyPackage Reference', keyPackage),
    cipherSuite,
    userId: leaf.credentialType === CREDENTIAL_BASIC ? userIdOf(leaf.identity) : undefined,
    credentialType: leaf.credentialType,
    signatureValid: verifyWithLabel(leaf.signatureKey, 'KeyPackageTBS', tbs, signature),
  };
}

export interface ParsedCommit {
  /** The commit's MLSMessage bytes, as announced in op 29. */
  message: Buffer;
  wireFormat: number;
  groupId: Buffer;
  epoch: bigint;
  senderType: number;
  /** The committer's leaf index (member senders). */
  leafIndex: number | undefined;
  contentType: number;
  /** ProposalRefs the commit covers, in its order. */
  proposalRefs: Buffer[];
  /** Proposals carried inline (DAVE allows none). */
  inlineProposals: number;
  hasPath: boolean;
}

interface WelcomeSecret {
  /** KeyPackageRef of the member this entry is encrypted for. */
  newMember: Buffer;
  /** The whole EncryptedGroupSecrets entry as encoded. */
  encoded: Buffer;
}

export interface ParsedWelcome {
  cipherSuite: number;
  secrets: WelcomeSecret[];
  encryptedGroupInfo: Buffer;
}

/** Parses a commit MLSMessage from `r` (a PublicMessage; other wire formats are only identified). */
function readCommitMessage(r: TlsReader): ParsedCommit {
  const start = r.offset;
  if (r.u16() !== MLS_VERSION_10) throw new LocalDiscordError('mls_malformed', { message: 'commit is not MLS 1.0' });
  const wireFormat = r.u16();
  if (wireFormat !== WireFormat.PublicMessage)
    throw new LocalDiscordError('mls_malformed', { message: `commit wire format ${wireFormat} is not PublicMessage` });
  const groupId = r.vector();
  const epoch = r.u64();
  const senderType = r.u8();
  const leafIndex = senderType === SenderType.Member || senderType === SenderType.External ? r.u32() : undefined;
  r.vector(); // authenticated_data
  const contentType = r.u8();
  if (contentType !== ContentType.Commit)
    throw new LocalDiscordError('mls_malformed', { message: `content type ${contentType} is not a commit` });
  const proposals = new TlsReader(r.vector());
  const proposalRefs: Buffer[] = [];
  let inlineProposals = 0;
  while (proposals.remaining > 0) {
    const kind = proposals.u8();
    if (kind === PROPOSAL_OR_REF_REFERENCE) proposalRefs.push(proposals.vector());
    else if (kind === PROPOSAL_OR_REF_PROPOSAL) {
      // An inline proposal's length depends on its type; DAVE forbids them, so stop here.
      inlineProposals++;
      break;
    } else throw new LocalDiscordError('mls_malformed', { message: `unknown ProposalOrRef type ${kind}` });
  }
  const hasPath = r.u8() === 1;
  if (hasPath) {
    readLeafNode(r);
    r.vector(); // nodes
  }
  r.vector(); // signature
  r.vector(); // confirmation_tag
  if (senderType === SenderType.Member) r.vector(); // membership_tag
  return {
    message: Buffer.from(r.since(start)),
    wireFormat,
    groupId,
    epoch,
    senderType,
    leafIndex: senderType === SenderType.Member ? leafIndex : undefined,
    contentType,
    proposalRefs,
    inlineProposals,
    hasPath,
  };
}

function readWelcome(r: TlsReader): ParsedWelcome {
  const cipherSuite = r.u16();
  const list = new TlsReader(r.vector());
  const secrets: WelcomeSecret[] = [];
  while (list.remaining > 0) {
    const start = list.offset;
    const newMember = list.vector();
    list.vector(); // kem_output
    list.vector(); // ciphertext
    secrets.push({ newMember: Buffer.from(newMember), encoded: Buffer.from(list.since(start)) });
  }
  return { cipherSuite, secrets, encryptedGroupInfo: Buffer.from(r.vector()) };
}

/**
 * Parses a `dave_mls_commit_welcome` (op 28) payload: a commit MLSMessage, then a Welcome when the
 * commit adds members (daveprotocol.com 1.1.2: a bare Welcome; an MLSMessage-wrapped one is also
 * accepted).
 */
export function parseCommitWelcome(payload: Buffer): { commit: ParsedCommit; welcome: ParsedWelcome | undefined } {
  const r = new TlsReader(payload);
  const commit = readCommitMessage(r);
  if (r.remaining === 0) return { commit, welcome: undefined };
  if (r.buffer.readUInt16BE(r.offset) === MLS_VERSION_10 && r.remaining > 4 && r.buffer.readUInt16BE(r.offset + 2) === WireFormat.Welcome) {
    r.offset += 4;
  }
  const welcome = readWelcome(r);
  if (r.remaining !== 0) throw new LocalDiscordError('mls_malformed', { message: `${r.remaining} trailing bytes after the welcome` });
  return { commit, welcome };
}

/** A Welcome holding only the secrets for `keyPackageRef` (what op 30 gives one new member). */
export function welcomeFor(welcome: ParsedWelcome, keyPackageRef: Buffer): Buffer | undefined {
  const mine = welcome.secrets.filter((s) => s.newMember.equals(keyPackageRef));
  if (mine.length === 0) return undefined;
  return new TlsWriter()
    .u16(welcome.cipherSuite)
    .vector(Buffer.concat(mine.map((s) => s.encoded)))
    .vector(welcome.encryptedGroupInfo)
    .bytes();
}
