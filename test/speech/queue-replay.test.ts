import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../scripts/bench-queue-sim.ts';
import { asInput, asRead, SCENARIOS, scenarioTrace, type TraceMessage } from '../../scripts/bench-queue-traces.ts';
import { SpeechScheduler } from '../../src/speech/queue/scheduler.ts';
import type { ReadyAudio, SynthesisOptions, SynthesisRequest } from '../../src/speech/synthesis/synthesize.ts';
import { createMemoryLimiter } from '../../src/tts/limiter/fair.ts';
import { FakeSynth } from './queue-fakes.ts';

// The scheduler's decisions on the bench's built-in scenarios, replayed in virtual time and kept as a
// snapshot: what each request read and who paid, what each delivery carried and when, what was
// dropped (where), taken back or cleared. Moving the scheduler's code around must leave this log
// byte-identical; a change of policy changes it on purpose (and the bench says whether for the better).
//
// The clock is the bench's VirtualClock (time moves only once nothing else can run), not FakeClock:
// FakeClock.advance gives each timer one turn of the event loop, so a refactor that only adds an
// `await` would shift the log without changing what anyone hears.

/** Seconds of each scenario replayed (the first ones: enough to be behind, scarce and keeping up). */
const SECONDS = 75;

/** Speech per character at speed 1 (ms), as the service reads about. */
const MS_PER_CHAR = 110;

/** FakeSynth with the parts the scheduler leans on: audio as long as its text, a cache that parts asked alone land in, grants spent on the window. */
class ReplaySynth extends FakeSynth {
  readonly #cache = new Set<string>();
  readonly #limiter: ReturnType<typeof createMemoryLimiter>;
  readonly #clock: VirtualClock;
  readonly #log: string[];
  #requests = 0;
  /** Every leaf audio handed out, and how often it was released. */
  readonly handed = new Map<ReadyAudio, number>();

  constructor(limiter: ReturnType<typeof createMemoryLimiter>, clock: VirtualClock, log: string[]) {
    super();
    this.#limiter = limiter;
    this.#clock = clock;
    this.#log = log;
  }

  #audio(req: SynthesisRequest, fromCache: boolean): ReadyAudio {
    const audio: ReadyAudio = {
      durationMs: Math.round((MS_PER_CHAR * [...req.text].length) / (req.speed > 0 ? req.speed : 1)),
      fromCache,
      key: keyOf(req),
      release: () => void this.handed.set(audio, (this.handed.get(audio) ?? 0) + 1),
    };
    this.handed.set(audio, 0);
    return audio;
  }

  lookup = async (req: SynthesisRequest): Promise<ReadyAudio | null> => (this.#cache.has(keyOf(req)) ? this.#audio(req, true) : null);

  override async synthesize(req: SynthesisRequest, options: SynthesisOptions = {}): Promise<ReadyAudio> {
    if (this.#cache.has(keyOf(req))) return this.#audio(req, true);
    const charges = req.charges.map((c) => `${c.userId}=${c.chars}`).join(',');
    this.#log.push(`${this.#t()} request ${req.audience ?? req.guildId} x${req.speed} [${charges}] ${req.text}`);
    await this.#limiter.acquire('standard', {
      key: req.audience ?? req.guildId,
      ...(options.signal ? { signal: options.signal } : {}),
      grant: options.grant,
    });
    // Every 11th request is slow (a service having a bad moment): what it carries may be past the cut when it comes back.
    await this.#clock.sleep(++this.#requests % 11 === 0 ? 30_000 : 400, options.signal);
    await super.synthesize(req, options);
    this.#cache.add(keyOf(req));
    return this.#audio(req, false);
  }

  #t(): string {
    return ((this.#clock.now() - START) / 1000).toFixed(3);
  }
}

const START = 1_000_000;
const keyOf = (req: SynthesisRequest) => JSON.stringify([req.voice, req.speed, req.pitch, req.text]);

async function replay(trace: readonly TraceMessage[]): Promise<{ log: string[]; unreleased: number }> {
  const clock = new VirtualClock(START);
  const log: string[] = [];
  const t = () => ((clock.now() - START) / 1000).toFixed(3);
  const limiter = createMemoryLimiter({ clock });
  const synth = new ReplaySynth(limiter, clock, log);
  const q = new SpeechScheduler({ synthesize: synth, clock, limiter, freshness: () => ({ horizonMs: 20_000, speedUp: true }) });
  const texts = (items: readonly { meta?: unknown }[]) => items.map((u) => `#${String(u.meta)}`).join(' ');
  // Each message once: delivered (or failed), dropped, cleared, taken back or refused.
  const settled = new Set<unknown>();
  const settle = (items: readonly { meta?: unknown }[]) => items.forEach((u) => settled.add(u.meta));
  q.on('dropped', ({ audience, items, at }) => {
    log.push(`${t()} dropped ${audience} at ${at}: ${texts(items)}`);
    settle(items);
  });
  q.on('cleared', ({ audience, items }) => {
    log.push(`${t()} cleared ${audience}: ${texts(items)}`);
    settle(items);
  });
  q.setDefaultSink(async (r, signal) => {
    const clips = r.audio?.parts ?? (r.audio ? [r.audio] : []);
    const how = clips.map((c) => `${c.fromCache ? 'cache' : 'paid'}:${c.durationMs}`).join('+');
    log.push(`${t()} deliver ${r.items[0]!.audience} ${texts(r.items)} ${r.error ? `error ${r.error.code}` : how}`);
    settle(r.items);
    if (r.audio) await clock.sleep(r.audio.durationMs, signal).catch(() => log.push(`${t()} stopped ${texts(r.items)}`));
  });
  const start = clock.now();
  let replayed = false;
  void (async () => {
    for (const m of trace) {
      const due = start + m.at_ms - clock.now();
      if (due > 0) await clock.sleep(due);
      const r = q.enqueue(asInput(m));
      if (!r.ok) {
        log.push(`${t()} refused #${m.index} ${r.reason}`);
        settled.add(m.index);
      }
      // Chat changes under the queue: every 23rd message deleted 3 s later, every 31st edited 2 s later.
      if (m.index % 23 === 22)
        void clock.sleep(3_000).then(() => {
          const taken = q.withdraw(m.guild, (u) => u.meta === m.index);
          if (taken.length > 0) log.push(`${t()} withdrawn #${m.index}`);
          settle(taken);
        });
      if (m.index % 31 === 30)
        void clock.sleep(2_000).then(() => {
          const edited = q.withdraw(
            m.guild,
            (u) => u.meta === m.index,
            (old) => ({ ...old, text: `${old.text}（編集済み）` }),
          );
          if (edited.length > 0) log.push(`${t()} edited #${m.index}`);
        });
    }
    replayed = true;
  })();
  await clock.run(() => replayed && settled.size === trace.length, 'replay');
  q.close();
  // What close() stopped lets go of its audio once its sink settles.
  await clock.run(() => true, 'close');
  const unreleased = [...synth.handed.values()].filter((n) => n === 0).length;
  return { log, unreleased };
}

describe('the scheduler replayed on the bench scenarios', () => {
  for (const scenario of SCENARIOS) {
    it(`GIVEN the ${scenario} scenario THEN its decisions are as recorded, and every clip handed out is released`, async () => {
      const trace = asRead(scenarioTrace(scenario, 1).filter((l) => l.at_ms < SECONDS * 1000));
      const { log, unreleased } = await replay(trace);
      expect(unreleased).toBe(0);
      await expect(log.join('\n') + '\n').toMatchFileSnapshot(`__snapshots__/queue-replay/${scenario}.txt`);
    });
  }
});
