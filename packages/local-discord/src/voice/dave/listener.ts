/**
 * A simulated human in a voice call: a @snazzah/davey DAVESession in the test process that follows
 * the client side of the DAVE protocol (daveprotocol.com) as the fake voice gateway drives it, so
 * the test can decrypt what the bot sends end to end, as a listener's Discord client would.
 *
 * It is written from the protocol text, not from @discordjs/voice's DAVESession wrapper, so a bug
 * in the bot's library is not mirrored on the listening side. Messages to it are delivered one per
 * event-loop turn (a stand-in for the network) so the gateway never re-enters itself.
 */
import davey, { type DAVESession } from '@snazzah/davey';
import { OPUS_SILENCE_FRAME, parseDaveFrame } from './frame.ts';
import { DaveOp } from './opcodes.ts';

/** The gateway side the listener talks to (see DaveGateway). */
interface ListenerLink {
  receiveJson(op: number, d: Record<string, unknown>): void;
  receiveBinary(op: number, payload: Buffer): void;
}

/** What a listener made of one media frame from another member. */
export type Hearing =
  | { outcome: 'decrypted'; opus: Buffer }
  /** Not end-to-end encrypted and accepted as such (transport-only call, or passthrough). */
  | { outcome: 'plain'; opus: Buffer }
  | { outcome: 'failed'; reason: string };

const MEDIA_AUDIO = 0;
/** Seconds the previous keys stay usable after a transition (daveprotocol.com: "up to ten seconds"). */
const TRANSITION_EXPIRY_S = 10;
/** Longer while a downgrade is pending, as the protocol's reference clients do. */
const DOWNGRADE_EXPIRY_S = 24;

interface SimulatedListenerOptions {
  guildId: string;
  /** The voice channel: the MLS group id. */
  channelId: string;
  userId: string;
}

export class SimulatedListener {
  readonly kind = 'listener' as const;
  readonly guildId: string;
  readonly channelId: string;
  readonly userId: string;
  readonly maxProtocolVersion = 1;
  /** The davey session; replaced by `rejoin()` (keep a reference to test a removed member's keys). */
  session: DAVESession | undefined;
  /** The protocol version the call uses as far as this client knows. */
  protocolVersion = 0;
  /** User ids the gateway announced (clients_connect minus client_disconnect). */
  readonly connectedUserIds = new Set<string>();
  /** Things that went wrong on this side (a proposal, commit or welcome davey refused). */
  readonly errors: string[] = [];
  /** Transition ids this client reported ready for (op 23), in order. */
  readonly readyFor: number[] = [];
  #pendingTransitions = new Map<number, number>();
  #link: ListenerLink | undefined;
  #queue: (() => void)[] = [];
  #draining = false;

  constructor(options: SimulatedListenerOptions) {
    this.guildId = options.guildId;
    this.channelId = options.channelId;
    this.userId = options.userId;
  }

  /** True while in a call (between `attach` and `detach`). */
  get connected(): boolean {
    return this.#link !== undefined;
  }

  /** True once this client holds the group's keys (welcomed or committed). */
  get ready(): boolean {
    return this.session?.ready ?? false;
  }

  get voicePrivacyCode(): string {
    return this.session?.voicePrivacyCode ?? '';
  }

  /** Called by the gateway when the listener enters a call at `protocolVersion` (op 4's answer). */
  attach(link: ListenerLink, protocolVersion: number): void {
    this.#link = link;
    this.#enqueue(() => {
      this.protocolVersion = protocolVersion;
      if (protocolVersion > 0) this.#resetSession();
    });
  }

  /** Called by the gateway when the listener leaves; the davey session is kept as it was. */
  detach(): void {
    this.#link = undefined;
    this.#queue = [];
    this.connectedUserIds.clear();
    this.#pendingTransitions.clear();
  }

  /** A text message from the gateway. */
  sendJson(op: number, d: Record<string, unknown>): void {
    this.#enqueue(() => this.#onJson(op, d));
  }

  /** A binary message from the gateway (payload after the sequence number and opcode). */
  sendBinary(op: number, payload: Buffer): void {
    this.#enqueue(() => this.#onBinary(op, payload));
  }

  /** Decrypts a frame `senderUserId` sent, as this listener's client would before decoding it. */
  hear(senderUserId: string, frame: Buffer): Hearing {
    if (frame.equals(OPUS_SILENCE_FRAME)) return { outcome: 'plain', opus: frame };
    const framed = parseDaveFrame(frame) !== undefined;
    if (!this.session?.ready) {
      return framed ? { outcome: 'failed', reason: 'no group keys yet' } : { outcome: 'plain', opus: frame };
    }
    try {
      const opus = this.session.decrypt(senderUserId, MEDIA_AUDIO, frame);
      // davey lets an unencrypted frame through only in passthrough mode.
      return framed ? { outcome: 'decrypted', opus } : { outcome: 'plain', opus };
    } catch (error) {
      return { outcome: 'failed', reason: error instanceof Error ? error.message : String(error) };
    }
  }

  #enqueue(task: () => void): void {
    this.#queue.push(task);
    if (this.#draining) return;
    this.#draining = true;
    const step = () => {
      const next = this.#queue.shift();
      if (!next) {
        this.#draining = false;
        return;
      }
      try {
        next();
      } catch (error) {
        this.errors.push(error instanceof Error ? error.message : String(error));
      }
      setImmediate(step);
    };
    setImmediate(step);
  }

  #resetSession(): void {
    if (this.session) this.session.reinit(this.protocolVersion, this.userId, this.channelId);
    else this.session = new davey.DAVESession(this.protocolVersion, this.userId, this.channelId);
    // A new key package after every (re)initialisation (daveprotocol.com, "Key Packages").
    this.#link?.receiveBinary(DaveOp.MlsKeyPackage, this.session.getSerializedKeyPackage());
  }

  #onJson(op: number, d: Record<string, unknown>): void {
    switch (op) {
      case DaveOp.ClientsConnect:
        for (const id of (d.user_ids as string[] | undefined) ?? []) this.connectedUserIds.add(id);
        return;
      case DaveOp.ClientDisconnect:
        this.connectedUserIds.delete(String(d.user_id));
        return;
      case DaveOp.PrepareTransition: {
        const id = Number(d.transition_id);
        const version = Number(d.protocol_version);
        this.#pendingTransitions.set(id, version);
        // Transition 0 is a (re)initialisation: executed at once, nothing to report.
        if (id === 0) return this.#execute(0);
        if (version === 0) this.session?.setPassthroughMode(true, DOWNGRADE_EXPIRY_S);
        this.#ready(id);
        return;
      }
      case DaveOp.ExecuteTransition:
        this.#execute(Number(d.transition_id));
        return;
      case DaveOp.PrepareEpoch:
        // Epoch 1 means the group is being created anew: reset and send a new key package.
        if (Number(d.epoch) === 1) {
          this.protocolVersion = Number(d.protocol_version);
          this.#resetSession();
        }
        return;
      default:
        this.errors.push(`unexpected op ${op}`);
    }
  }

  #onBinary(op: number, payload: Buffer): void {
    switch (op) {
      case DaveOp.MlsExternalSenderPackage:
        this.session?.setExternalSender(payload);
        return;
      case DaveOp.MlsProposals: {
        if (!this.session) return;
        const result = this.session.processProposals(payload[0]!, payload.subarray(1), [...this.connectedUserIds]);
        if (result.commit) {
          const message = result.welcome ? Buffer.concat([result.commit, result.welcome]) : result.commit;
          this.#link?.receiveBinary(DaveOp.MlsCommitWelcome, message);
        }
        return;
      }
      case DaveOp.MlsAnnounceCommitTransition:
      case DaveOp.MlsWelcome: {
        if (!this.session) return;
        const transitionId = payload.readUInt16BE(0);
        try {
          if (op === DaveOp.MlsWelcome) this.session.processWelcome(payload.subarray(2));
          else this.session.processCommit(payload.subarray(2));
        } catch (error) {
          this.errors.push(
            `${op === DaveOp.MlsWelcome ? 'welcome' : 'commit'} ${transitionId}: ${error instanceof Error ? error.message : String(error)}`,
          );
          // Recovery from an invalid commit or welcome: flag it, reset, send a new key package.
          this.#link?.receiveJson(DaveOp.MlsInvalidCommitWelcome, { transition_id: transitionId });
          this.#resetSession();
          return;
        }
        if (transitionId === 0) return;
        this.#pendingTransitions.set(transitionId, this.protocolVersion);
        this.#ready(transitionId);
        return;
      }
      default:
        this.errors.push(`unexpected binary op ${op}`);
    }
  }

  #ready(transitionId: number): void {
    this.readyFor.push(transitionId);
    this.#link?.receiveJson(DaveOp.ReadyForTransition, { transition_id: transitionId });
  }

  #execute(transitionId: number): void {
    const version = this.#pendingTransitions.get(transitionId);
    if (version === undefined) return;
    this.#pendingTransitions.delete(transitionId);
    const previous = this.protocolVersion;
    this.protocolVersion = version;
    // Back to end-to-end encryption: unencrypted frames are refused once the old keys expire.
    if (previous === 0 && version > 0) this.session?.setPassthroughMode(false, TRANSITION_EXPIRY_S);
  }
}
