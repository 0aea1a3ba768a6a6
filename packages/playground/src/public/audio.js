// The voice channel's audio as the member's client plays it: WebAudio at 48 kHz, a small jitter
// buffer, and the level meter.
import { $, heard, state, voiceChannels } from './state.js';

export const speaker = {
  ctx: null,
  nextTime: 0,
  /** Starts (or resumes) playback; browsers allow it only from a click. */
  start() {
    if (!this.ctx) this.ctx = new AudioContext({ sampleRate: 48000 });
    void this.ctx.resume();
  },
  play(pcm) {
    if (!this.ctx || this.ctx.state !== 'running') return;
    const buffer = this.ctx.createBuffer(1, pcm.length, 48000);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < pcm.length; i++) channel[i] = pcm[i] / 32768;
    const source = this.ctx.createBufferSource();
    source.buffer = buffer;
    source.connect(this.ctx.destination);
    // A small jitter buffer: packets come every 20 ms, give or take.
    const now = this.ctx.currentTime;
    if (this.nextTime < now + 0.02) this.nextTime = now + 0.08;
    source.start(this.nextTime);
    this.nextTime += buffer.duration;
  },
};

export function onAudio(data) {
  const framed = new Int16Array(data);
  // Heard only in the voice channel the member is in (each channel is read by its own account).
  const mine = state.guild?.voiceStates.find((v) => v.userId === state.me)?.channelId;
  if (framed[0] < 0 || voiceChannels()[framed[0]]?.id !== mine) return;
  const pcm = framed.subarray(1);
  let sum = 0;
  let peak = 0;
  for (const s of pcm) {
    sum += s * s;
    peak = Math.max(peak, Math.abs(s));
  }
  heard.frames += 1;
  heard.samples += pcm.length;
  heard.peak = Math.max(heard.peak, peak);
  const db = sum > 0 ? 20 * Math.log10(Math.sqrt(sum / pcm.length) / 32768) : -Infinity;
  if (db > -60) {
    heard.loudFrames += 1;
    heard.sumSquares += sum;
    heard.loudSamples += pcm.length;
  }
  showLevel(db);
  speaker.play(pcm);
}

let silenceTimer;
/** The level bar: empty in silence, also when the frames simply stop coming. */
function showLevel(db) {
  const value = Math.max(-60, Math.min(0, db));
  const meter = $('#level');
  meter.setAttribute('aria-valuenow', String(Math.round(value)));
  meter.firstElementChild.style.width = `${((value + 60) / 60) * 100}%`;
  meter.classList.toggle('loud', value > -6);
  clearTimeout(silenceTimer);
  if (value > -60) silenceTimer = setTimeout(() => showLevel(-60), 150);
}
