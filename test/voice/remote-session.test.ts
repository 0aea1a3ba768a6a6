import type { Worker } from 'node:worker_threads';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../src/util/log.ts';
import { VoiceSessionError } from '../../src/voice/errors.ts';
import { PLAY_SLACK_MS, RemoteVoiceSession, STALL_MS } from '../../src/voice/remote-session.ts';
import type { VoiceRecovery } from '../../src/voice/session.ts';
import type { FromWorker, ToWorker } from '../../src/voice/worker-protocol.ts';

// The main thread's side of a session in a voice worker, stepped: the worker is a stand-in that
// records what it is sent, the test answers for it, and the clock is fake (performance.now too),
// so deadlines of seconds take no time. The real threads: worker-recovery.test.ts.

class RecordingWorker {
  readonly sent: ToWorker[] = [];
  postMessage(message: ToWorker): void {
    this.sent.push(message);
  }
  /** The last message of `type` sent. */
  last<T extends ToWorker['type']>(type: T): Extract<ToWorker, { type: T }> {
    const found = this.sent.findLast((m) => m.type === type);
    if (!found) throw new Error(`no ${type} sent`);
    return found as Extract<ToWorker, { type: T }>;
  }
}

const READY_TIMEOUT_MS = 2_000;
const CLIP_MS = 1_000;
const audio = { oggPath: '/cache/clip.ogg', durationMs: CLIP_MS };

let session: RemoteVoiceSession;
let recovered: VoiceRecovery[];
let payloads: unknown[];

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance'] });
  recovered = [];
  payloads = [];
  session = new RemoteVoiceSession(
    {
      guildId: 'g1',
      channelId: 'v1',
      textChannelId: null,
      readyTimeoutMs: READY_TIMEOUT_MS,
      adapterCreator: () => ({ sendPayload: (p) => (payloads.push(p), true), destroy() {} }),
    },
    createLogger({ level: 'silent' }),
  );
  session.on('recovered', (r) => recovered.push(r));
});
afterEach(() => {
  session.destroy();
  vi.useRealTimers();
});

const worker = () => new RecordingWorker();
const asWorker = (w: RecordingWorker) => w as unknown as Worker;
const result = (call: number, error?: { code: string; message: string }): Extract<FromWorker, { type: 'result' }> => ({
  type: 'result',
  call,
  ...(error ? { error } : {}),
});
const state = (id: number, s: Extract<FromWorker, { type: 'state' }>['state']) => session.receive({ type: 'state', id, state: s });

/** How `p` settled so far: 'pending', 'resolved', or the rejection's code. */
function watch(p: Promise<void>): () => string {
  let outcome = 'pending';
  p.then(
    () => (outcome = 'resolved'),
    (error: unknown) => (outcome = (error as { code?: string }).code ?? String(error)),
  );
  return () => outcome;
}

describe('RemoteVoiceSession.play, stepped', () => {
  it('GIVEN a clip whose first packet went out WHEN it is still playing its length plus the margin later THEN it is ended (skip sent), counted as play_timeout, and the queue moves on', async () => {
    const w = worker();
    session.attach(asWorker(w), 1);
    state(1, { status: 'ready' });
    const played = watch(session.play(audio, new AbortController().signal));
    const { call } = w.last('play');
    session.receive({ type: 'clipStarted', id: 1, at: performance.timeOrigin + performance.now() });
    await vi.advanceTimersByTimeAsync(CLIP_MS + PLAY_SLACK_MS - 1);
    expect(played()).toBe('pending');
    expect(w.sent.filter((m) => m.type === 'skip')).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    // Heard to its length: it counts as delivered.
    expect(played()).toBe('resolved');
    expect(w.last('skip')).toEqual({ type: 'skip', id: 1, call });
    expect(recovered).toEqual([{ guildId: 'g1', cause: 'play_timeout' }]);
  });

  it('GIVEN a clip whose first packet never goes out THEN after the ready wait plus the margin it is ended and rejects play_timeout (not heard: whoever asked is told)', async () => {
    const w = worker();
    session.attach(asWorker(w), 1);
    const played = watch(session.play(audio, new AbortController().signal));
    await vi.advanceTimersByTimeAsync(READY_TIMEOUT_MS + PLAY_SLACK_MS - 250);
    expect(played()).toBe('pending');
    await vi.advanceTimersByTimeAsync(250);
    expect(played()).toBe('play_timeout');
    expect(w.last('skip').type).toBe('skip');
    expect(recovered.map((r) => r.cause)).toEqual(['play_timeout']);
  });

  it('GIVEN a clip that ends in time THEN play resolves at the worker answer, with no skip and no recovery', async () => {
    const w = worker();
    session.attach(asWorker(w), 1);
    state(1, { status: 'ready' });
    const played = watch(session.play(audio, new AbortController().signal));
    session.receive({ type: 'clipStarted', id: 1, at: performance.timeOrigin + performance.now() });
    await vi.advanceTimersByTimeAsync(CLIP_MS);
    session.settle(result(w.last('play').call));
    await vi.advanceTimersByTimeAsync(0);
    expect(played()).toBe('resolved');
    await vi.advanceTimersByTimeAsync(PLAY_SLACK_MS * 2);
    expect(w.sent.filter((m) => m.type === 'skip')).toEqual([]);
    expect(recovered).toEqual([]);
  });

  it('GIVEN a play cut short by losing the worker THEN once the call is rejoined from another worker the same clip is sent again from its start, and play settles once, when that one ends', async () => {
    const first = worker();
    session.attach(asWorker(first), 1);
    state(1, { status: 'ready' });
    const played = watch(session.play(audio, new AbortController().signal));
    expect(first.last('play').audio).toEqual(audio);
    expect(session.detach('worker_crash')).toBe(1);
    expect(session.state).toEqual({ status: 'reconnecting', attempt: 1 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(played()).toBe('pending');

    const second = worker();
    session.attach(asWorker(second), 7);
    await vi.advanceTimersByTimeAsync(0);
    // The new worker's connection is asked to get Ready (nobody else waits for it), and the clip goes to it.
    expect(second.sent.map((m) => m.type)).toEqual(['open', 'ready', 'play']);
    expect(second.last('open')).toMatchObject({ id: 7, guildId: 'g1', channelId: 'v1' });
    expect(second.last('play').audio).toEqual(audio);
    state(7, { status: 'ready' });
    session.settle(result(second.last('ready').call));
    await vi.advanceTimersByTimeAsync(0);
    expect(recovered).toEqual([{ guildId: 'g1', cause: 'worker_crash' }]);
    expect(played()).toBe('pending');
    session.settle(result(second.last('play').call));
    await vi.advanceTimersByTimeAsync(0);
    expect(played()).toBe('resolved');
    // Nothing was said to Discord meanwhile: the bot never left the channel.
    expect(payloads).toEqual([]);
  });

  it('GIVEN /skip while the call is being rejoined THEN play settles at once and nothing is sent to the next worker', async () => {
    const first = worker();
    session.attach(asWorker(first), 1);
    const skip = new AbortController();
    const played = watch(session.play(audio, skip.signal));
    session.detach('worker_hang');
    skip.abort();
    await vi.advanceTimersByTimeAsync(0);
    expect(played()).toBe('resolved');
    const second = worker();
    session.attach(asWorker(second), 2);
    expect(second.sent.filter((m) => m.type === 'play')).toEqual([]);
  });

  it('GIVEN a session that ends while its call is being rejoined THEN a waiting play rejects as destroyed', async () => {
    session.attach(asWorker(worker()), 1);
    const played = watch(session.play(audio, new AbortController().signal));
    session.detach('worker_crash');
    session.destroy('voice worker stopped');
    await vi.advanceTimersByTimeAsync(0);
    expect(played()).toBe('destroyed');
    expect(session.state).toEqual({ status: 'destroyed', reason: 'voice worker stopped' });
  });

  it('GIVEN a play interrupted again and again THEN it gives up after the third replay, rejecting interrupted', async () => {
    let w = worker();
    session.attach(asWorker(w), 0);
    const played = watch(session.play(audio, new AbortController().signal));
    for (let id = 1; id <= 4; id++) {
      session.detach('worker_crash');
      w = worker();
      session.attach(asWorker(w), id);
      await vi.advanceTimersByTimeAsync(0);
    }
    expect(played()).toBe('interrupted');
    expect(new VoiceSessionError('interrupted', { guildId: 'g1' }).message).toMatch(/replaced/);
  });
});

describe('the silent-stall watchdog (RemoteVoiceSession.progress)', () => {
  it('GIVEN speech waiting in a Ready call THEN no packet for STALL_MS is a stall; packets going out, or no speech waiting, or the call not Ready, are not', async () => {
    const w = worker();
    session.attach(asWorker(w), 1);
    state(1, { status: 'ready' });
    // Nothing to play: a quiet call is not stalled.
    await vi.advanceTimersByTimeAsync(STALL_MS * 2);
    expect(session.progress(0)).toBe(false);

    // A long clip: its own deadline is far off.
    void session.play({ ...audio, durationMs: 60_000 }, new AbortController().signal).catch(() => {});
    let packets = 0;
    // Packets going out (the pool asks every 250 ms): never a stall, however long.
    for (let t = 0; t < STALL_MS * 3; t += 250) {
      await vi.advanceTimersByTimeAsync(250);
      expect(session.progress((packets += 12))).toBe(false);
    }
    // Then nothing more: a stall once STALL_MS passed since the last packet.
    await vi.advanceTimersByTimeAsync(STALL_MS - 1);
    expect(session.progress(packets)).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(session.progress(packets)).toBe(true);
    // Reconnecting (Discord dropped it, the library is on it): not the watchdog's business.
    state(1, { status: 'reconnecting', attempt: 1 });
    expect(session.progress(packets)).toBe(false);
  });
});
