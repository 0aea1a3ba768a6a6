import { describe, expect, it } from 'vitest';
import type { SynthesisRequest, Synthesizer } from '../../src/speech/synthesis/synthesize.ts';
import { CONFIRM_TEXT, VoiceChecker } from '../../src/speech/synthesis/voice-check.ts';

function synth(refuse?: (req: SynthesisRequest) => Error | undefined): Synthesizer & { requests: SynthesisRequest[]; released: number } {
  const s = {
    requests: [] as SynthesisRequest[],
    released: 0,
    async synthesize(req: SynthesisRequest) {
      s.requests.push(req);
      const error = refuse?.(req);
      if (error) throw error;
      return { mp3Path: '/x.mp3', oggPath: '/x.ogg', durationMs: 100, fromCache: false, key: 'k', release: () => void s.released++ };
    },
  };
  return s;
}

describe('VoiceChecker', () => {
  it('GIVEN a voice in the known list THEN it is usable without any request', async () => {
    const s = synth();
    const checker = new VoiceChecker({ synthesizer: s });
    expect(checker.isKnown('ja-JP-Wavenet-B')).toBe(true);
    await checker.confirm('ja-JP-Wavenet-B', { guildId: 'g', userId: 'u' });
    expect(s.requests).toEqual([]);
  });

  it('GIVEN an unknown voice THEN one short request through the pipeline, charged to the member and server who asked; then remembered', async () => {
    const s = synth();
    const checker = new VoiceChecker({ synthesizer: s });
    expect(checker.isKnown('ja-JP-Standard-A')).toBe(false);
    await checker.confirm('ja-JP-Standard-A', { guildId: 'g1', userId: 'u1' });
    expect(s.requests).toEqual([
      {
        guildId: 'g1',
        endpoint: 'standard',
        text: CONFIRM_TEXT,
        voice: 'ja-JP-Standard-A',
        speed: 1,
        pitch: 0,
        charges: [{ guildId: 'g1', userId: 'u1', endpoint: 'standard', chars: 1 }],
      },
    ]);
    expect(s.released).toBe(1); // the confirming audio is not kept pinned
    expect(checker.isKnown('ja-JP-Standard-A')).toBe(true);
    await checker.confirm('ja-JP-Standard-A', { guildId: 'g1', userId: 'u1' });
    expect(s.requests).toHaveLength(1);
  });

  it('GIVEN the service refuses (or the budget, or the rate limit) THEN the error comes back and nothing is remembered', async () => {
    const refusal = Object.assign(new Error('Unsupported voice requested.'), { code: 'unsupported_voice' });
    const s = synth(() => refusal);
    const checker = new VoiceChecker({ synthesizer: s });
    await expect(checker.confirm('no-such-voice', { guildId: 'g', userId: 'u' })).rejects.toBe(refusal);
    expect(checker.isKnown('no-such-voice')).toBe(false);
  });
});
