import { createSocket } from 'node:dgram';
import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { AudioPlayer } from '@discordjs/voice';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PacketClock } from '../../src/voice/packet-clock.ts';

// The voice worker's packet clock against stand-ins for @discordjs/voice's AudioPlayer: what it
// calls of the player (checkPlayable, _stepDispatch, _stepPrepare) is recorded with the time of
// each packet sent. The thread is blocked on purpose (a busy loop) to make steps late.
const FRAME_MS = 20;

class FakePlayer {
  readonly sent: number[] = [];
  prepared = 0;
  playable = true;
  /** Frames the clip has ready to read. */
  ready = 5;
  get state() {
    return { status: 'playing', resource: { playStream: { readableLength: this.ready } } };
  }
  checkPlayable(): boolean {
    return this.playable;
  }
  _stepDispatch(): void {
    this.sent.push(performance.now());
  }
  _stepPrepare(): void {
    this.prepared++;
  }
}

const asPlayer = (p: FakePlayer) => p as unknown as AudioPlayer;
const block = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // blocked on purpose
  }
};

let clock: PacketClock | undefined;
afterEach(() => {
  for (const p of players.splice(0)) clock?.remove(asPlayer(p));
});
const players: FakePlayer[] = [];
function paced(p = new FakePlayer()): FakePlayer {
  players.push(p);
  clock!.add(asPlayer(p));
  return p;
}

describe('the packet clock of a voice worker', () => {
  it('GIVEN a playing clip WHEN the thread is blocked 50 ms THEN the packets it owes go out at once and the clip keeps the schedule it started with', async () => {
    clock = new PacketClock();
    const p = paced();
    await vi.waitFor(() => expect(p.sent.length).toBeGreaterThanOrEqual(3), { timeout: 2_000, interval: 5 });
    const t0 = p.sent[0]!;
    block(50);
    const before = p.sent.length;
    await vi.waitFor(() => expect(p.sent.length).toBeGreaterThan(before), { timeout: 2_000, interval: 1 });
    // The first step after the block sent every packet due by then, at once: the clip is back on
    // the schedule it started with (its last packet within a frame of where 20 ms steps put it).
    const burstAt = p.sent.at(-1)!;
    expect(p.sent.length - before).toBeGreaterThanOrEqual(2);
    expect(Math.abs(burstAt - (t0 + (p.sent.length - 1) * FRAME_MS))).toBeLessThan(FRAME_MS);
    expect(clock.stats.caughtUp).toBeGreaterThanOrEqual(1);
  });

  it('GIVEN two clips whose next packet takes 1 ms to prepare THEN the trace shows two players a tick and 2 ms of preparing each', async () => {
    clock = new PacketClock();
    const slow = () => {
      const p = new FakePlayer();
      p._stepPrepare = () => block(1);
      return paced(p);
    };
    const [a] = [slow(), slow()];
    await vi.waitFor(() => expect(a!.sent.length).toBeGreaterThanOrEqual(4), { timeout: 2_000, interval: 5 });
    const trace = clock.trace()!;
    // Every packet came from a tick, or from a catch-up step of a tick that came late (a loaded machine).
    expect(trace.ticks + clock.stats.caughtUp).toBeGreaterThanOrEqual(a!.sent.length);
    // Two players each tick (a tick that catches up after a late one steps them again: more, never fewer).
    expect(trace.players.mean).toBeGreaterThanOrEqual(2);
    expect(trace.players.max).toBeGreaterThanOrEqual(2);
    expect(trace.prepare.p50).toBeGreaterThanOrEqual(2);
    expect(trace.perPacketUs.prepare).toBeGreaterThanOrEqual(1000);
    clock.resetTrace();
    expect(clock.trace()).toBeUndefined();
  });

  it('GIVEN 15 calls whose next packets take 15 ms to prepare THEN each step still sends its packets at the step, not after the preparing', async () => {
    // A receiver on a thread of its own timestamps each datagram; the players send as
    // @discordjs/voice does (dgram send to an address), the preparing blocks this thread.
    const receiver = new Worker(
      `const { parentPort } = require('node:worker_threads');
       const udp = require('node:dgram').createSocket('udp4');
       udp.on('message', () => parentPort.postMessage(performance.timeOrigin + performance.now()));
       udp.bind(0, '127.0.0.1', () => parentPort.postMessage(udp.address().port));`,
      { eval: true },
    );
    const [port] = (await once(receiver, 'message')) as [number];
    const arrivals: number[] = [];
    receiver.on('message', (at: number) => arrivals.push(at - performance.timeOrigin));
    const udp = createSocket('udp4');
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    try {
      clock = new PacketClock();
      const calls = Array.from({ length: 15 }, () => {
        const p = new FakePlayer();
        const dispatch = p._stepDispatch.bind(p);
        p._stepDispatch = () => {
          dispatch();
          udp.send(Buffer.alloc(100), port, '127.0.0.1');
        };
        p._stepPrepare = () => block(1);
        return paced(p);
      });
      await vi.waitFor(() => expect(arrivals.length).toBeGreaterThanOrEqual(15 * 6), { timeout: 5_000, interval: 5 });
      // Each datagram against the moment its step began (the first call's dispatch of that step):
      // sent after the preparing, every one would arrive 15 ms or more after it. The earliest is
      // judged: on a busy machine the receiving thread itself may be held up for many of them.
      const stepStarts = calls[0]!.sent;
      const delays = arrivals
        .slice(0, 15 * 5)
        .map((at) => at - stepStarts.findLast((t) => t <= at)!)
        .sort((a, b) => a - b);
      expect(delays[0]).toBeLessThan(10);
    } finally {
      for (const p of players.splice(0)) clock!.remove(asPlayer(p));
      udp.close();
      await receiver.terminate();
    }
  });

  it('GIVEN a late step WHEN a clip starts right then THEN it owes nothing: one packet, not a burst', async () => {
    clock = new PacketClock();
    const playing = paced();
    await vi.waitFor(() => expect(playing.sent.length).toBeGreaterThanOrEqual(2), { timeout: 2_000, interval: 5 });
    const caughtUp = clock.stats.caughtUp;
    block(70);
    const starting = paced();
    await vi.waitFor(() => expect(starting.sent.length).toBeGreaterThan(0), { timeout: 2_000, interval: 1 });
    expect(clock.stats.caughtUp).toBeGreaterThan(caughtUp);
    expect(starting.sent).toHaveLength(1);
  });

  it('GIVEN a clip decoded as it plays, its next frame not made yet WHEN a step is late THEN it is not asked for frames it has not got (no silence in the speech)', async () => {
    clock = new PacketClock();
    const p = paced();
    p.ready = 0;
    await vi.waitFor(() => expect(p.sent.length).toBeGreaterThanOrEqual(2), { timeout: 2_000, interval: 5 });
    const prepared = p.prepared;
    block(70);
    await vi.waitFor(() => expect(p.prepared).toBeGreaterThan(prepared), { timeout: 2_000, interval: 1 });
    expect(p.prepared - prepared).toBe(1);
  });

  it("a paced player is out of the library's own loop (its checkPlayable answers false there) until it is removed", () => {
    clock = new PacketClock();
    const p = new FakePlayer();
    clock.add(asPlayer(p));
    expect(p.checkPlayable()).toBe(false);
    clock.remove(asPlayer(p));
    expect(p.checkPlayable()).toBe(true);
    expect(clock.size).toBe(0);
  });
});
