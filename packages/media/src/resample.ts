/**
 * A streaming polyphase resampler (windowed sinc) for the exact rational ratios between MP3 sample
 * rates and Discord's 48 kHz: 16 / 24 kHz up by 3 / 2, 22.05 / 44.1 kHz by 160/147. Samples are fed
 * as they are decoded; outputs are made as soon as every tap they need has arrived, and `flush`
 * makes the rest (the input's end padded with zeros), so the output is exactly
 * ceil(inputs x to / from) samples long.
 */
export class Resampler {
  readonly #up: number;
  readonly #down: number;
  readonly #half: number;
  /** Taps per phase: `#up` phases of `2 * #half` coefficients. */
  readonly #table: Float32Array;
  readonly #channels: number;
  /** Input not yet consumed, per channel; global index `#start` is at position 0. */
  #buffers: Float32Array[];
  #length = 0;
  #start = 0;
  /** Input samples received and output samples made so far. */
  #received = 0;
  #made = 0;

  constructor(options: { from: number; to: number; channels: number; halfTaps?: number }) {
    const g = gcd(options.from, options.to);
    this.#up = options.to / g;
    this.#down = options.from / g;
    this.#half = options.halfTaps ?? 16;
    this.#channels = options.channels;
    this.#buffers = Array.from({ length: options.channels }, () => new Float32Array(4096));
    // Cut off at the lower of the two Nyquist frequencies (relative to the input's).
    const cutoff = Math.min(1, this.#up / this.#down);
    const taps = 2 * this.#half;
    this.#table = new Float32Array(this.#up * taps);
    for (let phase = 0; phase < this.#up; phase++) {
      let sum = 0;
      for (let k = 0; k < taps; k++) {
        // Tap k reads input sample base - half + 1 + k; its distance from the output instant:
        const t = k - this.#half + 1 - phase / this.#up;
        const x = Math.PI * cutoff * t;
        const sinc = x === 0 ? 1 : Math.sin(x) / x;
        // Blackman window over the kernel's span.
        const w = 0.42 + 0.5 * Math.cos((Math.PI * t) / this.#half) + 0.08 * Math.cos((2 * Math.PI * t) / this.#half);
        const v = Math.abs(t) >= this.#half ? 0 : sinc * w;
        this.#table[phase * taps + k] = v;
        sum += v;
      }
      // Unity gain at DC for every phase (no ripple from the table's rounding).
      for (let k = 0; k < taps; k++) this.#table[phase * taps + k]! /= sum;
    }
  }

  /** Feeds `input` (one array per channel, equal lengths); returns the output samples now complete. */
  push(input: readonly Float32Array[]): Float32Array[] {
    const n = input[0]?.length ?? 0;
    this.#append(input, n);
    this.#received += n;
    return this.#produce(false);
  }

  /** The input has ended: returns the remaining output. */
  flush(): Float32Array[] {
    return this.#produce(true);
  }

  #append(input: readonly Float32Array[], n: number): void {
    if (this.#length + n > this.#buffers[0]!.length) {
      const size = Math.max(this.#length + n, 2 * this.#buffers[0]!.length);
      this.#buffers = this.#buffers.map((b) => {
        const grown = new Float32Array(size);
        grown.set(b.subarray(0, this.#length));
        return grown;
      });
    }
    for (let c = 0; c < this.#channels; c++) this.#buffers[c]!.set(input[c]!.subarray(0, n), this.#length);
    this.#length += n;
  }

  #produce(final: boolean): Float32Array[] {
    const up = this.#up;
    const down = this.#down;
    const half = this.#half;
    const taps = 2 * half;
    const table = this.#table;
    // Output n reads inputs up to floor(n * down / up) + half: it is complete once that one arrived
    // (n * down < (received - half) * up); at the end, every output the input's length implies.
    const total = Math.max(0, Math.ceil(((final ? this.#received : this.#received - half) * up) / down));
    const count = Math.max(0, total - this.#made);
    const out = Array.from({ length: this.#channels }, () => new Float32Array(count));
    for (let i = 0; i < count; i++) {
      const n = this.#made + i;
      const base = Math.floor((n * down) / up);
      const phase = (n * down) % up;
      const row = phase * taps;
      const first = base - half + 1 - this.#start;
      // Before the start and past the end the signal is zero: only the taps inside the buffer count
      // (bounds found once per output, not tested per tap: this loop is most of a clip's resampling).
      const kFrom = Math.max(0, -first);
      const kTo = Math.min(taps, this.#length - first);
      for (let c = 0; c < this.#channels; c++) {
        const buf = this.#buffers[c]!;
        let acc = 0;
        for (let k = kFrom; k < kTo; k++) acc += buf[first + k]! * table[row + k]!;
        out[c]![i] = acc;
      }
    }
    this.#made += count;
    // Drop the inputs no later output needs.
    const keepFrom = Math.floor((this.#made * down) / up) - half + 1 - this.#start;
    if (keepFrom > 0) {
      const drop = Math.min(keepFrom, this.#length);
      for (const buf of this.#buffers) buf.copyWithin(0, drop, this.#length);
      this.#length -= drop;
      this.#start += drop;
    }
    return out;
  }
}

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}
