/**
 * `npm run bench:queue -- --virtual`: the same two modes in virtual time, against a model of the
 * service instead of the emulator. The scheduler, the limiter and the batching rules are the bot's
 * own code; what is modelled is what lies behind the synthesizer: the service's rate window (30
 * requests a minute per IP, a 429 with `reset_in` beyond it, retried as the client retries it),
 * its history (the same text with the same settings is not charged again), its audio lengths (the
 * emulator's `expectedSeconds`) and a latency per request; the cache (a part asked for alone plays
 * from it next time) and identical requests in flight sharing one call, as the synthesizer does.
 *
 * Virtual time: the clock stands still while anything can still run (promise callbacks and
 * setImmediate turns: the scheduler's pumps), and jumps to the next sleep's end only then. So a run
 * takes a second of CPU instead of minutes of wall time, does not depend on the machine's load, and
 * the same seed gives the same figures: what the policy work and the sensitivity mode need. What
 * it cannot show is the real pipeline's own time (HTTP, files, SQLite): the emulator run does.
 */
import { expectedSeconds } from '@yomiage/tts-emulator/audio';
import type { ReadyAudio, SynthesisRequest, Synthesizer } from '../src/speech/synthesis/synthesize.ts';
import type { SchedulerOptions } from '../src/speech/queue/options.ts';
import { countChars } from '../src/tts/chars.ts';
import { createMemoryLimiter } from '../src/tts/limiter/fair.ts';
import { RATE_LIMITS } from '../src/tts/limiter/limiter.ts';
import type { Clock } from '../src/util/clock.ts';
import { mulberry32 } from '../test/support/prng.ts';
import { driveNaive, driveScheduler } from './bench-queue-modes.ts';
import type { ModeStats } from './bench-queue-report.ts';
import { modeStats, type Outcome } from './bench-queue-stats.ts';
import type { TraceMessage } from './bench-queue-traces.ts';

interface Timer {
  at: number;
  seq: number;
  fire: () => void;
}

/** A clock whose time moves only when nothing else can run (see above). */
export class VirtualClock implements Clock {
  #now: number;
  #seq = 0;
  /** Pending sleeps, by end time then by order of asking. */
  #timers: Timer[] = [];
  /** Moves with every look at the clock and every sleep: unchanged over two turns, nothing is running. */
  #activity = 0;

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now = (): number => {
    this.#activity++;
    return this.#now;
  };

  sleep = (ms: number, signal?: AbortSignal): Promise<void> => {
    this.#activity++;
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise((resolve, reject) => {
      // As Node's timers: a wait shorter than 1 ms lasts 1 ms (a loop that sleeps 0 ms still lets time move).
      const timer: Timer = { at: this.#now + Math.max(1, ms), seq: this.#seq++, fire: resolve };
      if (signal) {
        const onAbort = () => {
          const i = this.#timers.indexOf(timer);
          if (i >= 0) this.#timers.splice(i, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        timer.fire = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
      }
      let lo = 0;
      let hi = this.#timers.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        const t = this.#timers[mid]!;
        if (t.at < timer.at || (t.at === timer.at && t.seq < timer.seq)) lo = mid + 1;
        else hi = mid;
      }
      this.#timers.splice(lo, 0, timer);
    });
  };

  /** Lets everything run, moving time from sleep to sleep, until `done()` holds; throws when nothing is left to wait for, or past `limitMs`. */
  async run(done: () => boolean, what: string, limitMs = 3_600_000): Promise<void> {
    const end = this.#now + limitMs;
    for (;;) {
      await this.#quiet();
      if (done()) return;
      const next = this.#timers.shift();
      if (!next) throw new Error(`${what}: stalled, nothing left to wait for`);
      if (next.at > end) throw new Error(`${what} did not finish within ${Math.round(limitMs / 1000)} s of virtual time`);
      this.#now = Math.max(this.#now, next.at);
      next.fire();
    }
  }

  async #quiet(): Promise<void> {
    for (;;) {
      const before = this.#activity;
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      if (this.#activity === before) return;
    }
  }
}

/** The service as the modes meet it: a rate window per IP, history, audio lengths, latency. */
export class ServiceModel {
  readonly #clock: Clock;
  readonly #latency: () => number;
  readonly #window: number[] = [];
  readonly #history = new Set<string>();
  requests = 0;
  http429 = 0;
  charged = 0;

  constructor(clock: Clock, latency: () => number) {
    this.#clock = clock;
    this.#latency = latency;
  }

  /** One standard request: its audio's length, or how long the service says to wait (`reset_in`, whole seconds). */
  async speak(req: { text: string; voice: string; speed: number; pitch: number }): Promise<{ durationMs: number } | { resetInMs: number }> {
    const now = this.#clock.now();
    this.requests++;
    const { limit, windowMs } = RATE_LIMITS.standard;
    while (this.#window.length > 0 && this.#window[0]! <= now - windowMs) this.#window.shift();
    if (this.#window.length >= limit) {
      this.http429++;
      return { resetInMs: 1000 * Math.max(1, Math.ceil((this.#window[0]! + windowMs - now) / 1000)) };
    }
    this.#window.push(now);
    await this.#clock.sleep(this.#latency());
    const key = JSON.stringify([req.voice, req.speed, req.pitch, req.text]);
    if (!this.#history.has(key)) {
      this.charged += countChars(req.text);
      this.#history.add(key);
    }
    return { durationMs: Math.round(1000 * expectedSeconds({ kind: 'standard', ...req })) };
  }
}

/** The synthesizer's behaviour the scheduler depends on, over the model: cache, shared calls, the grant spent, 429s retried. */
function modelSynthesizer(service: ServiceModel, limiter: ReturnType<typeof createMemoryLimiter>): Synthesizer {
  const cache = new Map<string, number>();
  const inFlight = new Map<string, Promise<ReadyAudio>>();
  const keyOf = (req: SynthesisRequest) => JSON.stringify([req.voice, req.speed, req.pitch, req.text]);
  const lookup = async (req: SynthesisRequest): Promise<ReadyAudio | null> => {
    const d = cache.get(keyOf(req));
    return d === undefined ? null : { durationMs: d, fromCache: true, key: keyOf(req) };
  };
  return {
    lookup,
    async synthesize(req, opts = {}) {
      if (opts.signal?.aborted) throw opts.signal.reason;
      const hit = await lookup(req);
      if (hit) return hit;
      const key = keyOf(req);
      const shared = inFlight.get(key);
      if (shared) {
        opts.grantUnneeded?.();
        return { ...(await shared), shared: true };
      }
      const call = (async (): Promise<ReadyAudio> => {
        let grant = opts.grant;
        for (let attempt = 0; ; attempt++) {
          await limiter.acquire('standard', { key: req.audience ?? req.guildId, ...(opts.signal ? { signal: opts.signal } : {}), grant });
          grant = undefined;
          const r = await service.speak(req);
          if ('durationMs' in r) {
            cache.set(key, r.durationMs);
            return { durationMs: r.durationMs, fromCache: false, key };
          }
          // As the client does (src/tts/retry.ts): the limiter is told to wait, then up to 3 retries.
          limiter.block('standard', Math.max(2_000, r.resetInMs));
          if (attempt >= 3) throw Object.assign(new Error('rate limited'), { code: 'rate_limited' });
        }
      })();
      inFlight.set(key, call);
      try {
        return await call;
      } finally {
        inFlight.delete(key);
      }
    },
  };
}

/** The service's latency per request: `ms` on average, 20% either way (seeded: the same run every time). */
function latencyOf(ms: number, seed: number): () => number {
  const rand = mulberry32(seed);
  return () => ms * (0.8 + 0.4 * rand());
}

/** Both modes of `trace` in virtual time: figures as the emulator run gives them. */
export async function runVirtual(
  trace: readonly TraceMessage[],
  o: { latencyMs: number; seed: number; horizonMs?: number; options?: Partial<SchedulerOptions>; naive?: boolean },
): Promise<{ scheduler: ModeStats; naive?: ModeStats }> {
  const horizonMs = o.horizonMs ?? 20_000;
  const scheduler = await virtualMode(trace, o, async (clock, service) => {
    // The bot's own safety margin (a second): in virtual time no loopback latency is amplified by a
    // scale, which is why the emulator run holds each slot 4 s longer.
    const limiter = createMemoryLimiter({ clock });
    return driveScheduler(trace, {
      clock,
      limiter,
      synth: modelSynthesizer(service, limiter),
      until: (cond, what) => clock.run(cond, what),
      ...(o.options ? { options: o.options } : {}),
    });
  });
  const when = { horizonMs, requestMs: o.latencyMs };
  if (o.naive === false) return { scheduler: modeStats(trace, scheduler.outcome, scheduler.service, scheduler.cpuS, when) };
  const naive = await virtualMode(trace, o, async (clock, service) =>
    driveNaive(trace, {
      clock,
      until: (cond, what) => clock.run(cond, what),
      audio: async (m) => {
        for (let attempt = 0; ; attempt++) {
          const r = await service.speak({ text: m.prefix + m.body, voice: m.voice, speed: 1, pitch: 0 });
          if ('durationMs' in r) return r.durationMs;
          if (attempt >= 3) throw new Error('rate limited');
          await clock.sleep(r.resetInMs);
        }
      },
    }),
  );
  return {
    scheduler: modeStats(trace, scheduler.outcome, scheduler.service, scheduler.cpuS, when),
    naive: modeStats(trace, naive.outcome, naive.service, naive.cpuS, when),
  };
}

async function virtualMode(
  _trace: readonly TraceMessage[],
  o: { latencyMs: number; seed: number },
  run: (clock: VirtualClock, service: ServiceModel) => Promise<Outcome>,
): Promise<{ outcome: Outcome; service: ServiceModel; cpuS: number }> {
  const clock = new VirtualClock();
  const service = new ServiceModel(clock, latencyOf(o.latencyMs, o.seed));
  const cpu = process.cpuUsage();
  const outcome = await run(clock, service);
  const used = process.cpuUsage(cpu);
  return { outcome, service, cpuS: (used.user + used.system) / 1e6 };
}
