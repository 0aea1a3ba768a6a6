/**
 * The fake's protocol edges that @discordjs/voice does not exercise: a raw websocket client and a
 * raw UDP socket speak the voice protocol by hand (shapes from Discord's voice documentation).
 */
import { createCipheriv } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import { once } from 'node:events';
import opus from '@discordjs/opus';
import davey from '@snazzah/davey';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  groupUtterances,
  startFakeVoiceServer,
  trustCertificate,
  type FakeVoiceServer,
  type ReceivedPacket,
} from '../../src/voice/server.ts';

let server: FakeVoiceServer;
const TOKEN = 'the-right-token';

beforeAll(async () => {
  server = await startFakeVoiceServer({ expectedToken: TOKEN, heartbeatIntervalMs: 41_250 });
  trustCertificate(server.caCertPem);
});

afterAll(async () => {
  await server?.close();
});

interface Message {
  op: number;
  d: Record<string, unknown>;
  seq?: number;
  /** Binary (DAVE) messages: what followed `u16 seq, u8 op`. */
  payload?: Buffer;
}

/** A hand-driven voice gateway client that queues what it receives. */
async function rawClient(): Promise<{ ws: WebSocket; next: (op: number) => Promise<Message>; closed: Promise<number> }> {
  const ws = new WebSocket(`wss://${server.endpoint}?v=8`);
  const inbox: Message[] = [];
  const waiters: (() => void)[] = [];
  ws.on('message', (data, isBinary) => {
    const bytes = data as Buffer;
    inbox.push(
      isBinary ? { op: bytes[2]!, seq: bytes.readUInt16BE(0), d: {}, payload: bytes.subarray(3) } : (JSON.parse(String(data)) as Message),
    );
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await once(ws, 'open');
  const next = async (op: number): Promise<Message> => {
    for (;;) {
      const index = inbox.findIndex((m) => m.op === op);
      if (index !== -1) return inbox.splice(index, 1)[0]!;
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { ws, next, closed };
}

function identify(ws: WebSocket, guildId: string, token = TOKEN, options: { userId?: string; dave?: number } = {}): void {
  const { userId = '1', dave = 0 } = options;
  ws.send(JSON.stringify({ op: 0, d: { server_id: guildId, user_id: userId, session_id: 's1', token, max_dave_protocol_version: dave } }));
}

/** A client's binary message: `u8 op, payload`. */
function sendBinary(ws: WebSocket, op: number, payload: Buffer): void {
  ws.send(Buffer.concat([Buffer.from([op]), payload]));
}

async function udpSocket(): Promise<Socket> {
  const socket = createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return socket;
}

/** Sends an IP discovery request for `ssrc` (type 1, length 70) and resolves with the server's 74-byte reply. */
async function discoverIp(udp: Socket, ssrc: number, port: number): Promise<Buffer> {
  const discovery = Buffer.alloc(74);
  discovery.writeUInt16BE(1, 0);
  discovery.writeUInt16BE(70, 2);
  discovery.writeUInt32BE(ssrc, 4);
  udp.send(discovery, port, '127.0.0.1');
  const [reply] = (await once(udp, 'message')) as [Buffer];
  return reply;
}

/** Encrypts like aead_aes256_gcm_rtpsize: AAD = the unencrypted header, IV = counter + 8 zeros. */
function seal(header: Buffer, plaintext: Buffer, key: Buffer, counter: number): Buffer {
  const suffix = Buffer.alloc(4);
  suffix.writeUInt32BE(counter);
  const cipher = createCipheriv('aes-256-gcm', key, Buffer.concat([suffix, Buffer.alloc(8)]));
  cipher.setAAD(header);
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, body, cipher.getAuthTag(), suffix]);
}

/** One 20 ms stereo frame of a loud 440 Hz sine, Opus-encoded. */
function loudOpusFrame(): Buffer {
  const pcm = Buffer.alloc(960 * 2 * 2);
  for (let i = 0; i < 960; i++) {
    const s = Math.round(16000 * Math.sin((2 * Math.PI * 440 * i) / 48000));
    pcm.writeInt16LE(s, i * 4);
    pcm.writeInt16LE(s, i * 4 + 2);
  }
  return new opus.OpusEncoder(48000, 2).encode(pcm);
}

describe('fake voice gateway (raw client)', () => {
  it('GIVEN a wrong token WHEN identifying THEN the fake closes with 4004', async () => {
    const { ws, next, closed } = await rawClient();
    expect((await next(8)).d).toMatchObject({ heartbeat_interval: 41_250 });
    identify(ws, '400000000000000001', 'wrong');
    expect(await closed).toBe(4004);
  });

  it('GIVEN an unknown session WHEN resuming THEN the fake closes with 4006', async () => {
    const { ws, closed } = await rawClient();
    ws.send(JSON.stringify({ op: 7, d: { server_id: 'nope', session_id: 'nope', token: TOKEN, seq_ack: 0 } }));
    expect(await closed).toBe(4006);
  });

  it('GIVEN an identified client THEN heartbeats are acked, IP discovery answers and RTP with CSRC and extension decrypts', async () => {
    const guildId = '400000000000000002';
    const { ws, next } = await rawClient();
    identify(ws, guildId);
    const ready = await next(2);
    expect(ready).toMatchObject({ seq: 1, d: { ip: '127.0.0.1', port: server.udpPort, modes: ['aead_aes256_gcm_rtpsize'] } });
    const ssrc = ready.d.ssrc as number;

    ws.send(JSON.stringify({ op: 3, d: { t: 1234, seq_ack: 1 } }));
    expect((await next(6)).d).toEqual({ t: 1234 });

    const udp = await udpSocket();
    try {
      const reply = await discoverIp(udp, ssrc, server.udpPort);
      expect(reply.length).toBe(74);
      expect(reply.readUInt16BE(0)).toBe(2);
      expect(reply.readUInt32BE(4)).toBe(ssrc);
      expect(reply.subarray(8, reply.indexOf(0, 8)).toString()).toBe('127.0.0.1');
      expect(reply.readUInt16BE(72)).toBe(udp.address().port);

      ws.send(
        JSON.stringify({
          op: 1,
          d: { protocol: 'udp', data: { address: '127.0.0.1', port: udp.address().port, mode: 'aead_aes256_gcm_rtpsize' } },
        }),
      );
      const description = await next(4);
      expect(description.d).toMatchObject({ mode: 'aead_aes256_gcm_rtpsize', dave_protocol_version: 0 });
      const key = Buffer.from(description.d.secret_key as number[]);
      expect(key.length).toBe(32);

      // Keepalives are ignored.
      const keepalivesBefore = server.udpStats.keepalives;
      udp.send(Buffer.alloc(8), server.udpPort, '127.0.0.1');

      // CC = 1 and X set: the CSRC and the 4-byte extension header stay clear, the 1-word
      // extension body is encrypted in front of the Opus frame.
      const frame = loudOpusFrame();
      const header = Buffer.alloc(12 + 4 + 4);
      header[0] = 0x80 | 0x10 | 0x01;
      header[1] = 0x78;
      header.writeUInt16BE(7, 2);
      header.writeUInt32BE(960, 4);
      header.writeUInt32BE(ssrc, 8);
      header.writeUInt32BE(42, 12);
      header.writeUInt16BE(0xbede, 16);
      header.writeUInt16BE(1, 18);
      const packetArrived = server.waitForEvent('packet', (p) => p.ssrc === ssrc);
      udp.send(seal(header, Buffer.concat([Buffer.from([0x10, 0xaa, 0, 0]), frame]), key, 5), server.udpPort, '127.0.0.1');
      const [packet] = await packetArrived;
      expect(packet).toMatchObject({ guildId, seq: 7, timestamp: 960, nonce: 5, silent: false, decodeError: false });
      expect(packet.opus.equals(frame)).toBe(true);
      expect(packet.pcm.length).toBe(960 * 2);
      expect(server.udpStats.keepalives).toBe(keepalivesBefore + 1);

      // A tampered packet is rejected, not recorded.
      const rejected = server.waitForEvent('protocolError', (m) => m.includes('decrypt'));
      const tampered = seal(header, frame, key, 6);
      tampered[20] = tampered[20]! ^ 0xff;
      udp.send(tampered, server.udpPort, '127.0.0.1');
      await rejected;
      expect(server.packets.filter((p) => p.ssrc === ssrc)).toHaveLength(1);
    } finally {
      udp.close();
      ws.close();
    }
  });
});

describe('fake voice gateway holding packets (load benchmarks)', () => {
  it('GIVEN held packets THEN each is timestamped on arrival, keepalives and IP discovery still answer, and release decrypts and checks every one in order', async () => {
    const guildId = '400000000000000004';
    const { ws, next } = await rawClient();
    identify(ws, guildId);
    const ssrc = (await next(2)).d.ssrc as number;
    const udp = await udpSocket();
    try {
      ws.send(
        JSON.stringify({
          op: 1,
          d: { protocol: 'udp', data: { address: '127.0.0.1', port: udp.address().port, mode: 'aead_aes256_gcm_rtpsize' } },
        }),
      );
      const key = Buffer.from((await next(4)).d.secret_key as number[]);
      const frame = loudOpusFrame();
      const rtp = (seq: number) => {
        const header = Buffer.alloc(12);
        header[0] = 0x80;
        header[1] = 0x78;
        header.writeUInt16BE(seq, 2);
        header.writeUInt32BE(960 * seq, 4);
        header.writeUInt32BE(ssrc, 8);
        return seal(header, frame, key, seq);
      };
      const mine = () => server.packets.filter((p) => p.ssrc === ssrc);
      server.holdPackets();
      const before = performance.now();
      const keepalivesBefore = server.udpStats.keepalives;
      const rejectedBefore = server.udpStats.rejected;
      const tampered = rtp(2);
      tampered[14] = tampered[14]! ^ 0xff;
      for (const datagram of [rtp(1), tampered, rtp(3), Buffer.alloc(8)]) udp.send(datagram, server.udpPort, '127.0.0.1');
      // IP discovery is answered while holding, and after the datagrams sent before it.
      const reply = await discoverIp(udp, ssrc, server.udpPort);
      expect(reply.readUInt32BE(4)).toBe(ssrc);
      const arrived = performance.now();
      expect(server.udpStats.keepalives).toBe(keepalivesBefore + 1);
      expect(mine()).toHaveLength(0);
      expect(server.udpStats.rejected).toBe(rejectedBefore);

      const heard: number[] = [];
      const onPacket = (p: ReceivedPacket) => heard.push(p.seq);
      server.on('packet', onPacket);
      expect(server.releasePackets().datagrams).toBe(3);
      server.off('packet', onPacket);
      expect(heard).toEqual([1, 3]);
      expect(mine().map((p) => p.seq)).toEqual([1, 3]);
      expect(mine().every((p) => p.opus.equals(frame) && !p.silent)).toBe(true);
      // The arrival time, before the release processed them.
      for (const p of mine()) {
        expect(p.receivedAt).toBeGreaterThanOrEqual(before);
        expect(p.receivedAt).toBeLessThanOrEqual(arrived);
      }
      expect(server.udpStats.rejected).toBe(rejectedBefore + 1);

      // Released: packets are processed as they arrive again.
      const live = server.waitForEvent('packet', (p) => p.ssrc === ssrc && p.seq === 4);
      udp.send(rtp(4), server.udpPort, '127.0.0.1');
      await live;
    } finally {
      udp.close();
      ws.close();
    }
  });
});

describe('fake voice gateway DAVE (raw client holding a davey session)', () => {
  it('GIVEN a client offering DAVE 1 THEN op 4 says 1, op 25 comes as binary with a seq, a foreign key package and a broken commit are refused, and its commit is announced and executed', async () => {
    const guildId = '400000000000000003';
    const userId = '400000000000000031';
    const channelId = '400000000000000039';
    const { ws, next } = await rawClient();
    try {
      identify(ws, guildId, TOKEN, { userId, dave: 1 });
      await next(2);
      ws.send(JSON.stringify({ op: 1, d: { protocol: 'udp', data: { address: '127.0.0.1', port: 9, mode: 'aead_aes256_gcm_rtpsize' } } }));
      expect((await next(4)).d).toMatchObject({ dave_protocol_version: 1 });
      const external = await next(25);
      expect(external.seq).toBe(3); // after Ready and Session Description
      const client = new davey.DAVESession(1, userId, channelId);
      client.setExternalSender(external.payload!);

      // The gateway checks that the credential names the authenticated user (daveprotocol.com, "Validation").
      const refused = server.waitForEvent('dave', (e) => e.type === 'keyPackage');
      sendBinary(ws, 26, new davey.DAVESession(1, '400000000000000032', channelId).getSerializedKeyPackage());
      expect((await refused)[0]).toMatchObject({ accepted: false, reason: expect.stringContaining('400000000000000032') });
      const accepted = server.waitForEvent('dave', (e) => e.type === 'keyPackage');
      sendBinary(ws, 26, client.getSerializedKeyPackage());
      expect((await accepted)[0]).toMatchObject({ accepted: true, userId });

      const listener = server.simulateListener({ guildId, channelId, userId: '400000000000000033' });
      expect((await next(11)).d).toEqual({ user_ids: [listener.userId] });
      const proposals = await next(27);
      const result = client.processProposals(proposals.payload![0]!, proposals.payload!.subarray(1), [listener.userId]);
      expect(result.commit?.length).toBeGreaterThan(0);
      expect(result.welcome?.length).toBeGreaterThan(0);
      const rejected = server.waitForEvent('dave', (e) => e.type === 'commitRejected');
      sendBinary(ws, 28, result.commit!.subarray(0, 20));
      expect((await rejected)[0]).toMatchObject({ userId, reason: expect.stringContaining('unparsable') });
      sendBinary(ws, 28, Buffer.concat([result.commit!, result.welcome!]));
      const announced = await next(29);
      const transitionId = announced.payload!.readUInt16BE(0);
      expect(transitionId).toBeGreaterThan(0);
      client.processCommit(announced.payload!.subarray(2));
      ws.send(JSON.stringify({ op: 23, d: { transition_id: transitionId } }));
      expect((await next(22)).d).toEqual({ transition_id: transitionId });
      await server.waitForDave(guildId);
      expect(listener.voicePrivacyCode).toMatch(/^\d{30}$/);
      expect(listener.voicePrivacyCode).toBe(client.voicePrivacyCode);

      const frame = loudOpusFrame();
      const hearing = server.dave.hear(guildId, userId, client.encryptOpus(frame));
      expect(hearing).toMatchObject({ framed: true, heardBy: { [listener.userId]: 'decrypted' } });
      expect(hearing.opus?.equals(frame)).toBe(true);

      // A member that leaves before its Add is committed: op 13, and the Add is revoked (op 27, 1).
      const late = server.simulateListener({ guildId, channelId, userId: '400000000000000034' });
      expect((await next(11)).d).toEqual({ user_ids: [late.userId] });
      const add = await next(27);
      expect(add.payload![0]).toBe(0);
      expect(client.processProposals(0, add.payload!.subarray(1), [listener.userId, late.userId]).commit?.length).toBeGreaterThan(0);
      server.dave.detachListener(late);
      expect((await next(13)).d).toEqual({ user_id: late.userId });
      const revoke = await next(27);
      expect(revoke.payload![0]).toBe(1);
      expect(client.processProposals(1, revoke.payload!.subarray(1), [listener.userId])).toEqual({});
      expect(server.dave.settled(guildId)).toBe(true);
    } finally {
      ws.close();
    }
  });
});

describe('groupUtterances', () => {
  const pcm = (loud: boolean) => new Int16Array(1920).fill(loud ? 8000 : 0);
  const packet = (receivedAt: number, loud: boolean, speakingOffCount = 0, ssrc = 1): ReceivedPacket => ({
    guildId: 'g',
    ssrc,
    seq: 0,
    timestamp: 0,
    nonce: 0,
    receivedAt,
    frame: Buffer.alloc(0),
    daveFramed: false,
    heardBy: {},
    opus: Buffer.alloc(0),
    pcm: pcm(loud),
    silent: !loud,
    decodeError: false,
    undecryptable: false,
    speakingOffCount,
  });

  const opts = { gapMs: 200, silenceMs: 100, now: 10_000 };

  it('GIVEN breaks by speaking off, a long silence and a gap THEN four utterances of 20 ms per loud frame', () => {
    const packets = [
      packet(0, true),
      packet(20, true), // speaking off before the next packet
      packet(40, true, 1),
      packet(60, false, 1),
      packet(80, true, 1), // a short pause stays inside
      ...[100, 120, 140, 160, 180].map((t) => packet(t, false, 1)), // 100 ms of silence ends it
      packet(200, true, 1),
      packet(500, true, 1), // 300 ms gap
    ];
    const utterances = groupUtterances(packets, opts);
    expect(utterances.map((u) => u.durationMs)).toEqual([40, 60, 20, 20]);
    expect(utterances.every((u) => u.complete)).toBe(true);
    expect(utterances[1]!.packets.at(-1)!.silent).toBe(false);
    expect(utterances[0]!.rmsDb).toBeCloseTo(20 * Math.log10(8000 / 32768), 5);
    // Loudness is of the speech, not diluted by the pause inside.
    expect(utterances[1]!.rmsDb).toBeCloseTo(utterances[0]!.rmsDb, 5);
  });

  it('GIVEN a run still arriving THEN it is incomplete until a gap passes or the client stops speaking', () => {
    const packets = [packet(0, true), packet(20, true)];
    expect(groupUtterances(packets, { ...opts, now: 100 })[0]!.complete).toBe(false);
    expect(groupUtterances(packets, { ...opts, now: 221 })[0]!.complete).toBe(true);
    const stopped = new Map([[1, 1]]);
    expect(groupUtterances(packets, { ...opts, now: 100, speakingOffCounts: stopped })[0]!.complete).toBe(true);
  });

  it('GIVEN two ssrcs interleaved THEN each has its own utterance', () => {
    const packets = [packet(0, true, 0, 1), packet(1, true, 0, 2), packet(20, true, 0, 1), packet(21, true, 0, 2)];
    expect(groupUtterances(packets, opts).map((u) => [u.ssrc, u.durationMs])).toEqual([
      [1, 40],
      [2, 40],
    ]);
  });
});
