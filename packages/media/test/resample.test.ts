import { describe, expect, it } from 'vitest';
import { Resampler } from '@yomiage/media';

// The resampler as a pure function: sample counts, pitch and level are what a listener would
// notice (a clip too short or too long, a voice shifted in pitch, a click at a chunk boundary).

function sine(rate: number, hz: number, seconds: number, amplitude = 0.5): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin((2 * Math.PI * hz * i) / rate);
  return out;
}

function concat(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Upward zero crossings per second over the middle of `x` (away from the edges' ramps). */
function pitch(x: Float32Array, rate: number): number {
  const from = Math.floor(x.length * 0.2);
  const to = Math.floor(x.length * 0.8);
  let crossings = 0;
  for (let i = from + 1; i < to; i++) if (x[i - 1]! < 0 && x[i]! >= 0) crossings++;
  return crossings / ((to - from) / rate);
}

function rms(x: Float32Array): number {
  const from = Math.floor(x.length * 0.2);
  const to = Math.floor(x.length * 0.8);
  let sum = 0;
  for (let i = from; i < to; i++) sum += x[i]! * x[i]!;
  return Math.sqrt(sum / (to - from));
}

describe('Resampler', () => {
  it.each([
    [24_000, 2],
    [16_000, 3],
    [22_050, 48_000 / 22_050],
    [44_100, 48_000 / 44_100],
    [48_000, 1],
  ])(
    'GIVEN 1 s of a 440 Hz tone at %i Hz THEN 48 kHz out has ceil(n x ratio) samples, the same pitch and the same level',
    (from, ratio) => {
      const input = sine(from, 440, 1);
      const r = new Resampler({ from, to: 48_000, channels: 1 });
      const out = concat([r.push([input])[0]!, r.flush()[0]!]);
      expect(out.length).toBe(Math.ceil(input.length * ratio - 1e-9));
      expect(pitch(out, 48_000)).toBeCloseTo(440, -1);
      expect(rms(out)).toBeCloseTo(0.5 / Math.SQRT2, 2);
    },
  );

  it('GIVEN the input in uneven chunks THEN the output is the same as from one push (no seam at chunk boundaries)', () => {
    const input = sine(24_000, 300, 0.5);
    const whole = new Resampler({ from: 24_000, to: 48_000, channels: 1 });
    const once = concat([whole.push([input])[0]!, whole.flush()[0]!]);
    const chunked = new Resampler({ from: 24_000, to: 48_000, channels: 1 });
    const parts: Float32Array[] = [];
    for (let at = 0, size = 1; at < input.length; at += size, size = (size * 7 + 3) % 1153 || 1) {
      parts.push(chunked.push([input.subarray(at, at + size)])[0]!);
    }
    parts.push(chunked.flush()[0]!);
    const streamed = concat(parts);
    expect(streamed.length).toBe(once.length);
    let worst = 0;
    for (let i = 0; i < once.length; i++) worst = Math.max(worst, Math.abs(once[i]! - streamed[i]!));
    expect(worst).toBeLessThan(1e-6);
  });

  it('GIVEN two channels THEN each is resampled on its own (no crosstalk)', () => {
    const left = sine(24_000, 440, 0.5);
    const right = new Float32Array(left.length);
    const r = new Resampler({ from: 24_000, to: 48_000, channels: 2 });
    const [l1, r1] = r.push([left, right]);
    const [l2, r2] = r.flush();
    expect(rms(concat([l1!, l2!]))).toBeCloseTo(0.5 / Math.SQRT2, 2);
    expect(Math.max(...concat([r1!, r2!]).map(Math.abs))).toBe(0);
  });

  it('GIVEN nothing pushed THEN flush gives nothing', () => {
    const r = new Resampler({ from: 24_000, to: 48_000, channels: 1 });
    expect(r.flush()[0]).toHaveLength(0);
  });
});
