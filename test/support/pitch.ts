/**
 * How high a voice a listener heard: the mean fundamental frequency (the middle 60% of them) of
 * 48 kHz stereo PCM (a listener's decoded packets), by normalised autocorrelation over 40 ms
 * windows of the voiced parts. Enough to tell two of the emulator's voices apart by ear, as a member would.
 */
const RATE = 48_000;
/** Analysed at 12 kHz: plenty for voices between MIN_HZ and MAX_HZ. */
const STEP = 4;
const MIN_HZ = 70;
const MAX_HZ = 400;
const WINDOW = 480;

export function pitchHz(pcm: readonly Int16Array[]): number {
  const mono: number[] = [];
  for (const part of pcm) for (let i = 0; i + 1 < part.length; i += 2 * STEP) mono.push((part[i]! + part[i + 1]!) / 2);
  const rate = RATE / STEP;
  const minLag = Math.floor(rate / MAX_HZ);
  const maxLag = Math.ceil(rate / MIN_HZ);
  const found: number[] = [];
  for (let start = 0; start + WINDOW + maxLag <= mono.length; start += WINDOW) {
    let energy = 0;
    for (let i = start; i < start + WINDOW; i++) energy += mono[i]! * mono[i]!;
    // Quiet windows (gaps between syllables) say nothing about the voice.
    if (Math.sqrt(energy / WINDOW) < 500) continue;
    const score: number[] = [];
    for (let lag = minLag; lag <= maxLag; lag++) {
      let sum = 0;
      let shifted = 0;
      for (let i = start; i < start + WINDOW; i++) {
        sum += mono[i]! * mono[i + lag]!;
        shifted += mono[i + lag]! * mono[i + lag]!;
      }
      score.push(sum / Math.sqrt(energy * shifted || 1));
    }
    const best = Math.max(...score);
    if (best < 0.5) continue;
    // The shortest lag nearly as good as the best: the period itself, not a multiple of it.
    let at = score.findIndex((s) => s >= 0.9 * best);
    while (at + 1 < score.length && score[at + 1]! > score[at]!) at++;
    const lag = minLag + at;
    found.push(rate / lag);
  }
  // A trimmed mean: each syllable has its own intonation, so the middle of them all (a median
  // jumps from one syllable's pitch to the next when a window more or less is voiced).
  found.sort((a, b) => a - b);
  const middle = found.slice(Math.floor(found.length * 0.2), Math.ceil(found.length * 0.8));
  return middle.length === 0 ? NaN : middle.reduce((sum, hz) => sum + hz, 0) / middle.length;
}
