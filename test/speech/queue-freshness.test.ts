import { describe, expect, it } from 'vitest';
import type { Freshness } from '../../src/speech/queue/options.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyUtterance, Utterance } from '../../src/speech/queue/utterance.ts';
import type { ReadyAudio, SynthesisRequest, Synthesizer } from '../../src/speech/synthesis/synthesize.ts';
import type { GrantingLimiter, RateGrant } from '../../src/tts/limiter/limiter.ts';
import { FakeClock, settle } from '../support/clock.ts';
import { msg, sessionOf } from './queue-fakes.ts';

// A voice channel busier than it can be read (one message a second, each 3 s long), on a manual clock:
// what its members hear is what is being talked about now, and never later than the server's horizon.

/** Audio 100 ms a character at speed 1, shorter when sped up, as the service reads. */
class TimedSynth implements Synthesizer {
  readonly requests: SynthesisRequest[] = [];
  async synthesize(req: SynthesisRequest): Promise<ReadyAudio> {
    this.requests.push(req);
    return {
      mp3: Buffer.from(req.text),
      durationMs: (100 * [...req.text].length) / req.speed,
      fromCache: false,
      key: `k${this.requests.length}`,
    };
  }
}

/** When each delivered message's own words started, after it was written (ms), by its text. */
async function busyChannel(freshness?: Freshness) {
  const clock = new FakeClock();
  const synth = new TimedSynth();
  const q = new SpeechScheduler({ synthesize: synth, clock, ...(freshness ? { freshness: () => freshness } : {}) });
  const heard = new Map<string, number>();
  const dropped: Utterance[] = [];
  q.on('dropped', ({ items }) => dropped.push(...items));
  q.setDefaultSink(async (r: ReadyUtterance, signal) => {
    const total = r.items.reduce((n, u) => n + u.text.length, 0);
    let before = 0;
    r.items.forEach((u, i) => {
      const offset = r.starts?.[i] ?? ((r.audio?.durationMs ?? 0) * before) / total;
      before += u.text.length;
      heard.set(u.text, clock.now() + offset - u.enqueuedAt);
    });
    await clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {});
  });
  for (let i = 0; i < 60; i++) {
    // 30 characters: 3 s of speech at speed 1, one every second (three times what can be read).
    q.enqueue(msg('g1', `u${i % 4}`, `${String(i).padStart(2, '0')}番目のメッセージです。`.padEnd(30, 'あ')));
    await settle(3);
    await clock.advance(1_000);
  }
  for (let i = 0; i < 200 && q.stats(sessionOf('g1')).queued + q.stats(sessionOf('g1')).ready > 0; i++) {
    await settle(3);
    await clock.advance(1_000);
  }
  q.close();
  return { heard, dropped, requests: synth.requests };
}

describe('a busy voice channel keeps up', () => {
  it('GIVEN three times what can be read THEN no message is heard later than the 20 s default, the oldest are dropped (and told), speech speeds up to 1.5x', async () => {
    const { heard, dropped, requests } = await busyChannel();
    expect(heard.size).toBeGreaterThan(10);
    expect(Math.max(...heard.values())).toBeLessThanOrEqual(20_000);
    // Most of what is heard is heard within 10 s: what is read is the conversation now, not a minute ago.
    expect([...heard.values()].filter((ms) => ms <= 10_000).length / heard.size).toBeGreaterThan(0.5);
    expect(dropped.length).toBeGreaterThan(0);
    expect(heard.size + dropped.length).toBe(60);
    expect(Math.max(...requests.map((r) => r.speed))).toBe(1.5);
  });

  it('GIVEN the admin turned speed-up off and set a 40 s horizon THEN never faster, and messages are heard up to 40 s late but not later', async () => {
    const { heard, requests } = await busyChannel({ horizonMs: 40_000, speedUp: false });
    expect(requests.every((r) => r.speed === 1)).toBe(true);
    expect(Math.max(...heard.values())).toBeLessThanOrEqual(40_000);
    expect(Math.max(...heard.values())).toBeGreaterThan(20_000);
  });
});

/** A grant of the standard rate that is used and released for nothing. */
const aGrant = (): RateGrant => ({ kind: 'standard', use: () => true, release: () => {} });

/** A limiter that grants at once, never one to spare, and says requests are scarce when `pressured`; `over` replaces any of that. */
function fakeLimiter(pressured: boolean, over: Partial<GrantingLimiter> = {}): GrantingLimiter {
  return {
    acquire: async () => {},
    block: () => {},
    reserve: async () => aGrant(),
    tryReserve: async () => null,
    pressured: () => pressured,
    ...over,
  };
}

describe('audio already paid for', () => {
  it('GIVEN a batch paid for while the channel kept up, and the channel falls behind before it plays THEN it is still heard, not thrown away', async () => {
    const clock = new FakeClock();
    const synth = new TimedSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock, limiter: fakeLimiter(true) });
    const heard = new Map<string, number>();
    const droppedPaid: Utterance[] = [];
    q.on('dropped', ({ items, at }) => at === 'speaking' && droppedPaid.push(...items));
    q.setDefaultSink(async (r: ReadyUtterance, signal) => {
      const total = r.items.reduce((n, u) => n + u.text.length, 0);
      let before = 0;
      for (const u of r.items) {
        heard.set(u.text.slice(0, 2), clock.now() + ((r.audio?.durationMs ?? 0) * before) / total - u.enqueuedAt);
        before += u.text.length;
      }
      await clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {});
    });
    const step = async (ms: number) => {
      await settle(3);
      await clock.advance(ms);
    };
    // Requests are scarce. A plays for 18 s; B and C (5 s each) are paid for together while A plays:
    // the channel is not behind yet.
    q.enqueue(msg('g1', 'u1', 'A:'.padEnd(180, 'あ')));
    await step(100);
    q.enqueue(msg('g1', 'u2', 'B:'.padEnd(50, 'い')));
    await step(400);
    q.enqueue(msg('g1', 'u3', 'C:'.padEnd(50, 'う')));
    await step(500);
    expect(synth.requests.map((r) => r.text.slice(0, 2))).toEqual(['A:', 'B:']);
    // A long line at 10 s: more speech was offered than the channel can read, so it is behind from now.
    await step(9_000);
    q.enqueue(msg('g1', 'u4', 'D:'.padEnd(150, 'え')));
    for (let i = 0; i < 60; i++) await step(1_000);
    q.close();
    // C's words start about 22.5 s after it was written: past the 20 s horizon of a channel behind,
    // within the cut of keeping up when B and C were paid for (the hard limit): heard, as paid.
    expect(droppedPaid).toEqual([]);
    expect(heard.get('C:')).toBeGreaterThan(20_000);
    expect(heard.get('C:')).toBeLessThanOrEqual(60_000);
    expect(heard.has('B:')).toBe(true);
  });
});

describe('a channel that stopped talking, while requests are scarce', () => {
  /** Says requests are scarce and grants only when `grant(key)` is called; keeps what each waiting batch says a grant buys it. */
  function heldLimiter() {
    const waiting = new Map<string, { resolve: (g: RateGrant) => void; worth: (() => number) | undefined }>();
    const limiter = fakeLimiter(true, {
      reserve: (_kind, options) => new Promise<RateGrant>((resolve) => waiting.set(options?.key ?? '', { resolve, worth: options?.worth })),
    });
    const grant = (key: string) => {
      waiting.get(key)!.resolve(aGrant());
      waiting.delete(key);
    };
    return { limiter, waiting, grant };
  }

  it('GIVEN its lines waited 45 s for a request THEN they still count and are read, up to the hard limit; a channel still talking has its own cut at three horizons', async () => {
    const clock = new FakeClock();
    const synth = new TimedSynth();
    const { limiter, waiting, grant } = heldLimiter();
    // A 14 s horizon: the cut of a channel still talking (three horizons, 42 s) falls before the hard limit (60 s).
    const q = new SpeechScheduler({ synthesize: synth, clock, limiter, freshness: () => ({ horizonMs: 14_000, speedUp: true }) });
    q.setDefaultSink(async (r: ReadyUtterance, signal) => clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {}));
    const [quiet, busy] = [sessionOf('g1'), sessionOf('g2')];
    q.enqueue(msg('g1', 'u1', 'しずか一言目です'));
    q.enqueue(msg('g1', 'u2', 'しずか二言目です'));
    for (let s = 0; s < 45; s++) {
      // The other channel keeps talking: a line every 5 s.
      if (s % 5 === 0) q.enqueue(msg('g2', 'u1', `にぎやか${s}秒目です`));
      await settle(3);
      await clock.advance(1_000);
    }
    await settle(3);
    expect([...waiting.keys()].sort()).toEqual([quiet, busy].sort());
    // Heard 45 s late, within the hard limit (60 s): still worth a grant.
    expect(waiting.get(quiet)!.worth!()).toBeGreaterThan(0);
    grant(quiet);
    grant(busy);
    for (let i = 0; i < 5; i++) {
      await settle(3);
      await clock.advance(100);
    }
    q.close();
    const texts = synth.requests.map((r) => r.text);
    expect(texts).toContainEqual(expect.stringMatching(/しずか一言目.*しずか二言目/));
    // The talking channel's lines older than its cut (42 s) went; the next are read.
    const busyText = texts.find((t) => t.includes('にぎやか'))!;
    expect(busyText).not.toContain('にぎやか0秒目');
    expect(busyText).toContain('にぎやか5秒目');
  });
});

describe('requests shared by several talking servers', () => {
  /** Servers sharing one limiter, `write` called each second: the text of each request made. */
  async function servers(write: (q: SpeechScheduler, second: number) => void, seconds: number): Promise<string[]> {
    const clock = new FakeClock();
    const synth = new TimedSynth();
    // Grants at once and never says it is pressured: whether requests are about to be scarce is the scheduler's own call.
    const q = new SpeechScheduler({ synthesize: synth, clock, limiter: fakeLimiter(false) });
    q.setDefaultSink(async (r: ReadyUtterance, signal) => clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {}));
    for (let s = 0; s < seconds; s++) {
      write(q, s);
      for (let k = 0; k < 4; k++) {
        await settle(3);
        await clock.advance(250);
      }
    }
    q.close();
    return synth.requests.map((r) => r.text);
  }

  it('GIVEN four servers talking at once after six requests in 20 s THEN each of them gets one request carrying its burst, not one line', async () => {
    const four = ['g1', 'g2', 'g3', 'g4'];
    const requests = await servers((q, s) => {
      // Six other servers said a line each: requests are going out at past half the budget's rate.
      if (s === 0) for (let i = 5; i <= 10; i++) q.enqueue(msg(`g${i}`, 'u1', `g${i}の一言です`));
      if (s === 12 || s === 14) for (const g of four) q.enqueue(msg(g, 'u1', `${g}の${s === 12 ? '一' : '二'}言目です`));
    }, 30);
    // Requests are about to be scarce: the first line waits for company instead of taking a request alone.
    const theirs = requests.filter((t) => four.some((g) => t.includes(`${g}の`)));
    expect(theirs).toHaveLength(4);
    for (const g of four) expect(theirs).toContainEqual(expect.stringMatching(new RegExp(`${g}の一言目.*${g}の二言目`)));
  });

  it('GIVEN three servers talking, requests going out fast THEN each line is asked for at once, alone (the quiet case never waits)', async () => {
    const requests = await servers((q, s) => {
      if (s % 2 === 0 && s <= 6) for (const g of ['g1', 'g2', 'g3']) q.enqueue(msg(g, 'u1', `${g}の${s}秒目です`));
    }, 30);
    expect(requests).toHaveLength(12);
    expect(requests.filter((t) => t.startsWith('g1'))).toEqual(['g1の0秒目です', 'g1の2秒目です', 'g1の4秒目です', 'g1の6秒目です']);
  });
});

describe('keeping up drops nothing that can still be heard within the horizon', () => {
  /** One voice channel with no limiter (requests to be had: bound by playback), what each line's words waited and what was dropped. */
  function channel(freshness?: Freshness) {
    const clock = new FakeClock();
    const synth = new TimedSynth();
    const q = new SpeechScheduler({ synthesize: synth, clock, ...(freshness ? { freshness: () => freshness } : {}) });
    const heard = new Map<string, number>();
    const dropped: Array<{ text: string; age: number }> = [];
    q.on('dropped', ({ items }) => dropped.push(...items.map((u) => ({ text: u.text.split(':')[0]!, age: clock.now() - u.enqueuedAt }))));
    q.setDefaultSink(async (r: ReadyUtterance, signal) => {
      const total = r.items.reduce((n, u) => n + u.text.length, 0);
      let before = 0;
      for (const u of r.items) {
        heard.set(u.text.split(':')[0]!, clock.now() + ((r.audio?.durationMs ?? 0) * before) / total - u.enqueuedAt);
        before += u.text.length;
      }
      await clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {});
    });
    const step = async (ms: number) => {
      await settle(3);
      await clock.advance(ms);
    };
    return { q, heard, dropped, step };
  }

  it('GIVEN a channel behind, 19 s of a long line playing, and the newest line written 0.5 s in THEN it is read after it, within the horizon, not dropped to leave silence', async () => {
    // Speed-up off (the admin's choice): the long line plays its full 19 s.
    const { q, heard, dropped, step } = channel({ horizonMs: 20_000, speedUp: false });
    q.enqueue(msg('g1', 'u1', 'A:'.padEnd(190, 'あ')));
    await step(500);
    // Its words can start when A ends, 18.5 s after it was written: within the 20 s horizon.
    q.enqueue(msg('g1', 'u2', 'B:'.padEnd(20, 'い')));
    for (let i = 0; i < 30; i++) await step(1_000);
    q.close();
    expect(dropped).toEqual([]);
    expect(heard.get('B')).toBeGreaterThan(18_000);
    expect(heard.get('B')).toBeLessThanOrEqual(20_000);
  });

  it('GIVEN a burst the channel falls behind on, then a lull THEN the newest are heard first and the oldest set aside are read in the lull while still in time', async () => {
    const { q, heard, dropped, step } = channel();
    // Twenty lines of 3 s a second apart: 60 s of speech in 20 s, then nothing.
    for (let i = 0; i < 20; i++) {
      q.enqueue(msg('g1', `u${i % 3}`, `${String(i).padStart(2, '0')}:`.padEnd(30, 'う')));
      await step(1_000);
    }
    for (let i = 0; i < 40; i++) await step(1_000);
    q.close();
    // Nothing heard past the horizon; nothing dropped while it could still have been heard in the lull.
    expect(Math.max(...heard.values())).toBeLessThanOrEqual(20_000);
    for (const d of dropped) expect(d.age).toBeGreaterThan(20_000 - 3_000 / 1.5);
    // Some line set aside was heard after a newer one: read in the lull, not dropped.
    const heardAt = new Map([...heard].map(([k, wait]) => [Number(k), Number(k) * 1_000 + wait]));
    const overtaken = [...heardAt].filter(([k, at]) => [...heardAt].some(([n, atN]) => n > k && atN < at));
    expect(overtaken.length).toBeGreaterThan(0);
    expect(heard.size + dropped.length).toBe(20);
  });
});

describe('a line set aside is not paid for when it could only just be heard', () => {
  /** Audio as TimedSynth makes it, each request taking 1 s or 1.4 s in turn on the clock. */
  class UnevenSynth implements Synthesizer {
    readonly requests: SynthesisRequest[] = [];
    readonly #clock: FakeClock;
    constructor(clock: FakeClock) {
      this.#clock = clock;
    }
    async synthesize(req: SynthesisRequest): Promise<ReadyAudio> {
      this.requests.push(req);
      await this.#clock.sleep(this.requests.length % 2 === 1 ? 1_000 : 1_400);
      return {
        mp3: Buffer.from(req.text),
        durationMs: (100 * [...req.text].length) / req.speed,
        fromCache: false,
        key: `k${this.requests.length}`,
      };
    }
  }

  it('GIVEN a burst the channel falls behind on, then a lull, and a service slower every other request THEN no audio paid for is dropped unheard, and every line is heard in time or dropped (and told)', async () => {
    const clock = new FakeClock();
    const q = new SpeechScheduler({ synthesize: new UnevenSynth(clock), clock });
    const heard: number[] = [];
    const dropped: Array<{ at: 'queue' | 'speaking' | undefined; age: number }> = [];
    q.on('dropped', ({ items, at }) => dropped.push(...items.map((u) => ({ at, age: clock.now() - u.enqueuedAt }))));
    q.setDefaultSink(async (r: ReadyUtterance, signal) => {
      heard.push(...r.items.map((u, i) => clock.now() + (r.starts?.[i] ?? 0) - u.enqueuedAt));
      await clock.sleep(r.audio?.durationMs ?? 0, signal).catch(() => {});
    });
    // Thirty lines of 3.5 s a second apart: far more than can be read, then nothing.
    for (let i = 0; i < 30; i++) {
      q.enqueue(msg('g1', `u${i % 3}`, `${String(i).padStart(2, '0')}:`.padEnd(35, 'う')));
      await settle(3);
      await clock.advance(1_000);
    }
    // Until every line was heard or dropped.
    for (let i = 0; i < 400 && heard.length + dropped.length < 30; i++) {
      await settle(3);
      await clock.advance(250);
    }
    q.close();
    // A line read in the lull only just in time would have been paid for, then dropped when a slow request made it late.
    expect(dropped.filter((d) => d.at === 'speaking')).toEqual([]);
    expect(Math.max(...heard)).toBeLessThanOrEqual(20_000);
    expect(heard.length).toBeGreaterThan(10);
    expect(heard.length + dropped.length).toBe(30);
  });
});
