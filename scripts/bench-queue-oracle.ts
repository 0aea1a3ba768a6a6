/**
 * `npm run bench:queue -- --names-cached`: an oracle, not something the bot can do. Every name of
 * the trace (as each voice reads it) is put in the cache before the trace starts, and the rate
 * window is left to empty; those requests and characters are not counted. What reading names from
 * the cache could save at most, against what the scheduler saves when it has to pay for each name.
 * The scheduler mode's CPU and wall time include filling the cache.
 */
import type { Synthesizer } from '../src/speech/synthesis/synthesize.ts';
import type { Clock } from '../src/util/clock.ts';
import { countChars } from '../src/tts/chars.ts';
import type { TraceMessage } from './bench-queue-traces.ts';

/** Caches every name of `trace`, waits `settleMs` (scaled), and returns what that cost, to be left out of the figures. */
export async function cacheNames(
  trace: readonly TraceMessage[],
  synth: Synthesizer,
  clock: Clock,
  settleMs: number,
  charged: () => Promise<number>,
): Promise<{ requests: number; chars: number }> {
  const names = new Map<string, TraceMessage>();
  for (const m of trace) if (m.prefix) names.set(JSON.stringify([m.voice, m.prefix]), m);
  for (const m of names.values()) {
    const charges = [{ guildId: m.guild, userId: m.user, endpoint: 'standard' as const, chars: countChars(m.prefix) }];
    const req = { guildId: m.guild, endpoint: 'standard' as const, text: m.prefix, voice: m.voice, speed: 1, pitch: 0, charges };
    (await synth.synthesize(req)).release?.();
  }
  await clock.sleep(settleMs);
  return { requests: names.size, chars: await charged() };
}
