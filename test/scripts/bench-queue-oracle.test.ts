import { describe, expect, it } from 'vitest';
import { cacheNames } from '../../scripts/bench-queue-oracle.ts';
import { asRead, type TraceLine } from '../../scripts/bench-queue-traces.ts';
import type { ReadyAudio, SynthesisRequest, Synthesizer } from '../../src/speech/synthesis/synthesize.ts';
import { FakeClock } from '../support/clock.ts';

// The oracle that puts every name in the cache before a trace: it must ask for each name exactly
// as the bot reads it (once per voice), and report what that cost so the figures can leave it out.

const line = (at_ms: number, user: string, name: string, voice = 'ja-JP-Wavenet-B'): TraceLine => ({
  at_ms,
  guild: 'g01',
  user,
  name,
  voice,
  lang: 'ja',
  kind: 'auto',
  text: `メッセージ${at_ms}`,
});

describe('bench:queue --names-cached', () => {
  it('asks for each name once per voice, as the bot reads it, and reports the requests and characters spent', async () => {
    const asked: SynthesisRequest[] = [];
    const synth: Synthesizer = {
      async synthesize(req): Promise<ReadyAudio> {
        asked.push(req);
        return { mp3: Buffer.alloc(0), durationMs: 1, fromCache: false, key: req.text };
      },
    };
    // たろう twice in a row within the name window (read once), はなこ, たろう again, and たろう in another voice.
    const trace = asRead([
      line(0, 'u1', 'たろう'),
      line(1_000, 'u1', 'たろう'),
      line(2_000, 'u2', 'はなこ'),
      line(3_000, 'u1', 'たろう'),
      line(4_000, 'u3', 'たろう', 'ja-JP-Wavenet-C'),
    ]);
    const clock = new FakeClock();
    const done = cacheNames(trace, synth, clock, 64_000, async () => 17);
    await clock.advance(64_000);
    expect(await done).toEqual({ requests: 3, chars: 17 });
    expect(asked.map((r) => [r.voice, r.text])).toEqual([
      ['ja-JP-Wavenet-B', 'たろう、'],
      ['ja-JP-Wavenet-B', 'はなこ、'],
      ['ja-JP-Wavenet-C', 'たろう、'],
    ]);
    expect(asked.every((r) => r.charges[0]!.chars === 4)).toBe(true);
  });
});
