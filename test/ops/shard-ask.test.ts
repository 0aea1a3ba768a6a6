import { EventEmitter } from 'node:events';
import type { Shard } from 'discord.js';
import { describe, expect, it } from 'vitest';
import { askProcess } from '../../src/ops/shard-manager.ts';
import type { CollectAnswer, CollectRequest } from '../../src/ops/shard-ipc.ts';
import { unhandledRejections } from '../support/rejections.ts';

// The manager's /metrics and /readyz ask every bot process over IPC. A process that dies while it
// is asked must cost nothing but its answer: no error report for the operator a few seconds later,
// no listener left behind on the shard.
class FakeShard extends EventEmitter {
  readonly send: (message: unknown) => Promise<unknown>;
  constructor(send: (message: unknown) => Promise<unknown>) {
    super();
    this.send = send;
  }
}
const asShard = (fake: FakeShard) => fake as unknown as Pick<Shard, 'on' | 'off' | 'send'>;
const request: CollectRequest = { yomiage: 'collect', topic: 'metrics', nonce: 7 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('askProcess: one bot process asked over IPC', () => {
  const rejections = unhandledRejections();

  it('GIVEN the process answers THEN its answer, and the shard is no longer listened to', async () => {
    const shard = new FakeShard(async (m) => {
      const asked = m as CollectRequest;
      setImmediate(() => {
        shard.emit('message', { yomiage: 'collected', nonce: asked.nonce + 1, value: 'not mine' } satisfies CollectAnswer);
        shard.emit('message', { yomiage: 'collected', nonce: asked.nonce, value: 'mine' } satisfies CollectAnswer);
      });
    });
    expect(await askProcess(asShard(shard), request, 1_000)).toMatchObject({ value: 'mine' });
    expect(shard.listenerCount('message')).toBe(0);
  });

  it('GIVEN the process dies as it is asked (the send fails) THEN no answer, at once, and nothing fails later', async () => {
    const shard = new FakeShard(() => Promise.reject(new Error('channel closed')));
    const started = performance.now();
    expect(await askProcess(asShard(shard), request, 50)).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(50);
    expect(shard.listenerCount('message')).toBe(0);
    // Past the timeout the question had: nothing left to reject with nobody waiting.
    await sleep(100);
    expect(rejections).toEqual([]);
  });

  it('GIVEN the process never answers THEN no answer after the timeout, and the shard is no longer listened to', async () => {
    const shard = new FakeShard(async () => undefined);
    const started = performance.now();
    expect(await askProcess(asShard(shard), request, 50)).toBeUndefined();
    expect(performance.now() - started).toBeGreaterThanOrEqual(45);
    expect(shard.listenerCount('message')).toBe(0);
    await sleep(20);
    expect(rejections).toEqual([]);
  });
});
