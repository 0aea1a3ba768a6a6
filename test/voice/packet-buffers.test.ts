import { EventEmitter } from 'node:events';
import { randomBytes } from 'node:crypto';
import { Networking, VoiceConnectionStatus, type VoiceConnection } from '@discordjs/voice';
import { describe, expect, it } from 'vitest';
import { reusePacketBuffers } from '../../src/voice/packet-buffers.ts';

// A voice worker builds each packet in buffers its connection keeps: the same bytes as
// @discordjs/voice's own createAudioPacket (run here on the same input), in a few buffers used in turn.
interface Data {
  encryptionMode: string;
  secretKey: Uint8Array;
  sequence: number;
  timestamp: number;
  ssrc: number;
  nonce: number;
  nonceBuffer: Buffer;
}
/** The library's private packet builder, as the patched networking layer carries it. */
interface Builder {
  createAudioPacket(opus: Buffer, data: Data, dave: undefined): Buffer;
}
const library = Networking.prototype as unknown as Builder & { encryptOpusPacket: unknown };

function connectionData(): Data {
  return {
    encryptionMode: 'aead_aes256_gcm_rtpsize',
    secretKey: new Uint8Array(randomBytes(32)),
    sequence: 513,
    timestamp: 96_000,
    ssrc: 0x01020304,
    nonce: 41,
    nonceBuffer: Buffer.alloc(12),
  };
}

/** A connection going Ready with a networking layer whose socket has `queued()` sends waiting. */
function readyConnection(queued: () => number) {
  const networking = {
    state: { udp: { socket: { getSendQueueCount: queued } } },
    createAudioPacket: library.createAudioPacket,
    encryptOpusPacket: library.encryptOpusPacket,
  };
  const connection = new EventEmitter();
  reusePacketBuffers(connection as unknown as VoiceConnection);
  connection.emit('stateChange', { status: VoiceConnectionStatus.Signalling }, { status: VoiceConnectionStatus.Ready, networking });
  return networking as unknown as Builder;
}

describe('voice packets in reused buffers', () => {
  it('GIVEN the same Opus frames and call state THEN the same bytes as the library, nonce advanced alike', () => {
    const networking = readyConnection(() => 0);
    const ours = connectionData();
    const theirs: Data = { ...ours, nonceBuffer: Buffer.alloc(12) };
    for (const opus of [randomBytes(160), randomBytes(3), randomBytes(400)]) {
      const mine = networking.createAudioPacket(opus, ours, undefined);
      const expected = library.createAudioPacket.call(networking, opus, theirs, undefined);
      expect(mine.toString('hex')).toBe(expected.toString('hex'));
      expect(ours.nonce).toBe(theirs.nonce);
    }
  });

  it('GIVEN nothing waiting on the socket THEN eight buffers in turn; GIVEN sends waiting THEN a new buffer each time', () => {
    let queued = 0;
    const networking = readyConnection(() => queued);
    const data = connectionData();
    const packets = Array.from({ length: 9 }, () => networking.createAudioPacket(randomBytes(160), data, undefined));
    expect(packets[8]!.buffer).toBe(packets[0]!.buffer);
    expect(new Set(packets.slice(0, 8).map((p) => p.buffer)).size).toBe(8);
    queued = 1;
    const waiting = Array.from({ length: 9 }, () => networking.createAudioPacket(randomBytes(160), data, undefined));
    const kept = new Set(packets.map((p) => p.buffer));
    expect(waiting.filter((p) => kept.has(p.buffer))).toEqual([]);
    const overlapping = waiting.filter((p, i) => waiting.some((q, j) => i !== j && p.buffer === q.buffer && p.byteOffset === q.byteOffset));
    expect(overlapping).toEqual([]);
  });
});
