import { createCipheriv, type KeyObject } from 'node:crypto';
import { VoiceConnectionStatus, type VoiceConnection, type VoiceConnectionState } from '@discordjs/voice';

/** RTP: version 2, Opus payload type (@discordjs/voice's values). */
const RTP_VERSION = 0x80;
const RTP_OPUS_PAYLOAD_TYPE = 120;
const HEADER = 12;
const AUTH_TAG = 16;
const NONCE_PADDING = 4;
const MAX_NONCE = 2 ** 32 - 1;
/** Packets a connection keeps buffers for: 160 ms of audio, far more than a loopback or LAN send takes. */
const SLOTS = 8;
/** An Opus frame at 64 kbit/s is ~160 bytes; DAVE adds a few dozen. Larger ones get a buffer of their own. */
const SLOT_BYTES = 1_500;

/** The parts of @discordjs/voice's networking this replaces and reads (0.19). */
interface ConnectionData {
  encryptionMode: string;
  secretKey: Uint8Array | KeyObject;
  sequence: number;
  timestamp: number;
  ssrc: number;
  nonce: number;
  nonceBuffer: Buffer;
}
interface NetworkingLike {
  state: { udp?: { socket?: { getSendQueueCount(): number } } };
  createAudioPacket(opusPacket: Buffer, connectionData: ConnectionData, dave?: { encrypt(packet: Buffer): Buffer }): Buffer;
}

const patched = new WeakSet<object>();

/**
 * Builds each voice packet in one of a few buffers the connection keeps, instead of the four new
 * ones @discordjs/voice allocates per packet (header, ciphertext, two concatenations): with
 * hundreds of calls those are most of a voice worker's garbage, and its collection pauses delay
 * packets. Same bytes as the library's (RTP header, AES-256-GCM over the Opus or DAVE frame with
 * the header as AAD, tag, 4-byte nonce); other encryption modes keep the library's code. A buffer
 * is reused only when the socket has no send queued, so a packet still waiting is never
 * overwritten (then a new buffer is taken, as the library would).
 */
export function reusePacketBuffers(connection: VoiceConnection): void {
  connection.on('stateChange', (_old: VoiceConnectionState, state: VoiceConnectionState) => {
    if (state.status !== VoiceConnectionStatus.Ready && state.status !== VoiceConnectionStatus.Connecting) return;
    const networking = state.networking as unknown as NetworkingLike;
    if (patched.has(networking)) return;
    patched.add(networking);
    const original = networking.createAudioPacket.bind(networking);
    const slots = Array.from({ length: SLOTS }, () => Buffer.alloc(SLOT_BYTES));
    let next = 0;
    networking.createAudioPacket = (opusPacket, data, dave) => {
      if (data.encryptionMode !== 'aead_aes256_gcm_rtpsize') return original(opusPacket, data, dave);
      const frame = dave?.encrypt(opusPacket) ?? opusPacket;
      const size = HEADER + frame.length + AUTH_TAG + NONCE_PADDING;
      const idle = (networking.state.udp?.socket?.getSendQueueCount() ?? 1) === 0;
      const out = idle && size <= SLOT_BYTES ? slots[next++ % SLOTS]!.subarray(0, size) : Buffer.allocUnsafe(size);
      out[0] = RTP_VERSION;
      out[1] = RTP_OPUS_PAYLOAD_TYPE;
      out.writeUInt16BE(data.sequence, 2);
      out.writeUInt32BE(data.timestamp, 4);
      out.writeUInt32BE(data.ssrc, 8);
      data.nonce = data.nonce >= MAX_NONCE ? 0 : data.nonce + 1;
      data.nonceBuffer.writeUInt32BE(data.nonce, 0);
      const cipher = createCipheriv('aes-256-gcm', data.secretKey, data.nonceBuffer);
      cipher.setAAD(out.subarray(0, HEADER));
      const encrypted = cipher.update(frame);
      encrypted.copy(out, HEADER);
      cipher.final();
      cipher.getAuthTag().copy(out, HEADER + encrypted.length);
      data.nonceBuffer.copy(out, HEADER + frame.length + AUTH_TAG, 0, NONCE_PADDING);
      return out;
    };
  });
}
