/**
 * The voice server's UDP side: keepalives, IP discovery, and RTP packets decrypted
 * (`aead_aes256_gcm_rtpsize`, the only mode offered), passed to the call's simulated listeners for
 * the DAVE layer, and decoded from Opus back to PCM, so a test can tell what the bot was heard say.
 */
import { createDecipheriv } from 'node:crypto';
import type { RemoteInfo, Socket as UdpSocket } from 'node:dgram';
import type { EventEmitter } from 'node:events';
import opus, { type OpusEncoder } from '@discordjs/opus';
import { VOICE_CHANNELS, VOICE_SAMPLE_RATE } from '../voice-format.ts';
import { OPUS_SILENCE_FRAME } from './dave/frame.ts';
import type { DaveGateway } from './dave/gateway.ts';
import type { FakeVoiceServerEvents, ReceivedPacket, ResolvedOptions, UdpStats, VoiceSession } from './types.ts';
import { rmsDb } from './utterances.ts';

const RTP_OPUS_PAYLOAD_TYPE = 0x78;
const RTP_HEADER_LENGTH = 12;
const GCM_TAG_LENGTH = 16;
const NONCE_SUFFIX_LENGTH = 4;
const IP_DISCOVERY_LENGTH = 74;
const KEEPALIVE_LENGTH = 8;
/** Held datagrams (see `hold`) per segment: arrival times and byte ranges in typed arrays, bytes in one arena. */
const HELD_PER_SEGMENT = 16_384;
/** A segment's arena: room for its datagrams at up to 256 bytes on average (a voice packet is ~100-250). */
const HELD_ARENA_BYTES = HELD_PER_SEGMENT * 256;

/** One segment of held datagrams, allocated at once so that holding a datagram allocates nothing. */
interface HeldSegment {
  at: Float64Array;
  start: Uint32Array;
  length: Uint16Array;
  bytes: Buffer;
  count: number;
  used: number;
}

const isIpDiscovery = (msg: Buffer) => msg.length === IP_DISCOVERY_LENGTH && msg.readUInt16BE(0) === 1 && msg.readUInt16BE(2) === 70;

const newSegment = (): HeldSegment => ({
  at: new Float64Array(HELD_PER_SEGMENT),
  start: new Uint32Array(HELD_PER_SEGMENT),
  length: new Uint16Array(HELD_PER_SEGMENT),
  bytes: Buffer.allocUnsafeSlow(HELD_ARENA_BYTES),
  count: 0,
  used: 0,
});

interface MediaParts {
  udp: UdpSocket;
  /** The voice sessions signalling created (ssrc, key, mode). */
  sessions: readonly VoiceSession[];
  dave: DaveGateway;
  events: EventEmitter<FakeVoiceServerEvents>;
  /** Where received packets go, in arrival order. */
  packets: ReceivedPacket[];
  stats: UdpStats;
  options: ResolvedOptions;
}

export class UdpMedia {
  readonly #parts: MediaParts;
  /** One Opus decoder per ssrc: Opus decoding is stateful. */
  readonly #decoders = new Map<number, OpusEncoder>();
  /** While holding (see `hold`): the RTP datagrams received, not yet decrypted. */
  #held: HeldSegment[] | undefined;

  constructor(parts: MediaParts) {
    this.#parts = parts;
    this.#parts.udp.on('message', (msg, rinfo) => {
      // The arrival time first: what follows (decryption, DAVE, decoding) is this server's work,
      // not the sender's timing.
      const at = this.#parts.options.now();
      if (this.#held && msg.length !== KEEPALIVE_LENGTH && !isIpDiscovery(msg)) this.#keep(msg, at);
      else this.#receive(msg, rinfo, at);
    });
  }

  clear(): void {
    this.#decoders.clear();
  }

  /**
   * From now on an RTP datagram is only timestamped and its bytes copied into preallocated
   * segments; decryption, DAVE and the 'packet' event wait for `release`. A load benchmark holds
   * while it times packets, so that this server's own work per packet (AES-GCM, DAVE for every
   * listener) neither delays the arrival times it takes nor competes with the sender for the CPU.
   * Keepalives and IP discovery are still answered at once.
   */
  hold(): void {
    this.#held ??= [newSegment()];
  }

  /**
   * Stops holding and processes every held datagram in arrival order, as if it had just arrived
   * but with its arrival time as `receivedAt`: every one is still decrypted, checked and counted.
   * Returns how many there were and how long processing them took.
   */
  release(): { datagrams: number; ms: number } {
    const held = this.#held ?? [];
    this.#held = undefined;
    const started = performance.now();
    let datagrams = 0;
    for (const segment of held) {
      for (let i = 0; i < segment.count; i++) {
        const start = segment.start[i]!;
        this.#receive(segment.bytes.subarray(start, start + segment.length[i]!), undefined, segment.at[i]!);
      }
      datagrams += segment.count;
    }
    return { datagrams, ms: performance.now() - started };
  }

  #keep(msg: Buffer, at: number): void {
    const segments = this.#held!;
    let segment = segments.at(-1)!;
    if (segment.count === HELD_PER_SEGMENT || segment.used + msg.length > HELD_ARENA_BYTES) segments.push((segment = newSegment()));
    const i = segment.count++;
    segment.at[i] = at;
    segment.start[i] = segment.used;
    segment.length[i] = msg.length;
    segment.used += msg.copy(segment.bytes, segment.used);
  }

  #receive(msg: Buffer, rinfo: RemoteInfo | undefined, at: number): void {
    if (msg.length === KEEPALIVE_LENGTH) {
      this.#parts.stats.keepalives++;
      return;
    }
    if (rinfo && isIpDiscovery(msg)) {
      this.#answerIpDiscovery(msg, rinfo);
      return;
    }
    const result = this.#decryptRtp(msg, at);
    if (typeof result === 'string') {
      this.#parts.stats.rejected++;
      this.#parts.events.emit('protocolError', result);
      return;
    }
    const { packets, options } = this.#parts;
    packets.push(result);
    // A large bound is trimmed in chunks of an eighth: dropping one packet at a time from the front
    // of a 20 000-entry array costs ~0.1 ms each, which at 10 000 packets a second (200 streams)
    // is more than the server's whole event loop.
    const max = options.maxRetainedPackets;
    if (packets.length > max + (max >= 1024 ? max >> 3 : 0)) packets.splice(0, packets.length - max);
    this.#parts.events.emit('packet', result);
  }

  #answerIpDiscovery(msg: Buffer, rinfo: RemoteInfo): void {
    const ssrc = msg.readUInt32BE(4);
    if (!this.#parts.sessions.some((s) => s.ssrc === ssrc)) {
      this.#parts.stats.rejected++;
      this.#parts.events.emit('protocolError', `IP discovery for unknown ssrc ${ssrc}`);
      return;
    }
    this.#parts.stats.ipDiscoveries++;
    const reply = Buffer.alloc(IP_DISCOVERY_LENGTH);
    reply.writeUInt16BE(2, 0);
    reply.writeUInt16BE(70, 2);
    reply.writeUInt32BE(ssrc, 4);
    reply.write(rinfo.address, 8, 'utf8'); // NUL-terminated: the rest is already zero.
    reply.writeUInt16BE(rinfo.port, IP_DISCOVERY_LENGTH - 2);
    this.#parts.udp.send(reply, rinfo.port, rinfo.address);
  }

  /** Decrypts one `aead_aes256_gcm_rtpsize` packet; returns a reason string when it cannot. */
  #decryptRtp(msg: Buffer, receivedAt: number): ReceivedPacket | string {
    if (msg.length < RTP_HEADER_LENGTH + GCM_TAG_LENGTH + NONCE_SUFFIX_LENGTH) return `short datagram (${msg.length} bytes)`;
    const first = msg[0]!;
    if (first >> 6 !== 2) return 'not RTP version 2';
    if ((msg[1]! & 0x7f) !== RTP_OPUS_PAYLOAD_TYPE) return `RTP payload type ${msg[1]! & 0x7f} is not Opus (0x78)`;
    const ssrc = msg.readUInt32BE(8);
    const session = this.#parts.sessions.findLast((s) => s.ssrc === ssrc);
    if (!session || session.mode === undefined) return `RTP for unknown ssrc ${ssrc}`;
    if (!session.resumable) return `RTP for ended session (ssrc ${ssrc})`;
    // rtpsize: the unencrypted part is the fixed header, the CSRCs and, with the X bit, the 4-byte
    // extension header; the extension body is encrypted at the start of the plaintext.
    const csrcCount = first & 0x0f;
    const hasExtension = (first & 0x10) !== 0;
    let headerLength = RTP_HEADER_LENGTH + 4 * csrcCount;
    let extensionBodyLength = 0;
    if (hasExtension) {
      if (msg.length < headerLength + 4) return 'truncated RTP extension header';
      extensionBodyLength = 4 * msg.readUInt16BE(headerLength + 2);
      headerLength += 4;
    }
    const tagStart = msg.length - NONCE_SUFFIX_LENGTH - GCM_TAG_LENGTH;
    if (tagStart < headerLength) return 'datagram shorter than its RTP header';
    const nonceSuffix = msg.subarray(msg.length - NONCE_SUFFIX_LENGTH);
    const iv = Buffer.concat([nonceSuffix, Buffer.alloc(8)]);
    let plaintext: Buffer;
    try {
      const decipher = createDecipheriv('aes-256-gcm', session.secretKey, iv);
      decipher.setAAD(msg.subarray(0, headerLength));
      decipher.setAuthTag(msg.subarray(tagStart, tagStart + GCM_TAG_LENGTH));
      plaintext = Buffer.concat([decipher.update(msg.subarray(headerLength, tagStart)), decipher.final()]);
    } catch {
      return `RTP from ssrc ${ssrc} failed to decrypt`;
    }
    if ((first & 0x20) !== 0 && plaintext.length > 0) {
      const padding = plaintext[plaintext.length - 1]!;
      if (padding <= plaintext.length) plaintext = plaintext.subarray(0, plaintext.length - padding);
    }
    const frame = Buffer.from(plaintext.subarray(extensionBodyLength));
    // End-to-end encryption sits inside the transport encryption: the listeners decrypt the frame.
    const hearing = this.#parts.dave.hear(session.serverId, session.userId, frame);
    const undecryptable = hearing.opus === undefined;
    const opusFrame = hearing.opus ?? frame;
    if (undecryptable) this.#parts.events.emit('protocolError', `DAVE frame from ssrc ${ssrc} was decrypted by no listener`);
    let pcm: Int16Array = new Int16Array(0);
    let decodeError = false;
    if (!undecryptable && this.#parts.options.decodeOpus) {
      try {
        let decoder = this.#decoders.get(ssrc);
        if (!decoder) {
          decoder = new opus.OpusEncoder(VOICE_SAMPLE_RATE, VOICE_CHANNELS);
          this.#decoders.set(ssrc, decoder);
        }
        const raw = decoder.decode(opusFrame);
        pcm = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
      } catch {
        decodeError = true;
        this.#parts.events.emit('protocolError', `Opus frame from ssrc ${ssrc} did not decode`);
      }
    }
    const silent =
      undecryptable ||
      decodeError ||
      opusFrame.equals(OPUS_SILENCE_FRAME) ||
      (this.#parts.options.decodeOpus && rmsDb(pcm) < this.#parts.options.silenceThresholdDb);
    return {
      guildId: session.serverId,
      ...(session.channelId === undefined ? {} : { channelId: session.channelId }),
      userId: session.userId,
      ssrc,
      seq: msg.readUInt16BE(2),
      timestamp: msg.readUInt32BE(4),
      nonce: nonceSuffix.readUInt32BE(0),
      receivedAt,
      frame,
      daveFramed: hearing.framed,
      heardBy: hearing.heardBy,
      opus: opusFrame,
      pcm,
      silent,
      decodeError,
      undecryptable,
      speakingOffCount: session.speakingOffCount,
    };
  }
}
