/**
 * What the page's members hear in the voice channels: the local voice server already decrypts the
 * bot's packets (transport, then DAVE as a member's client would) and decodes the Opus back to
 * PCM; the tap takes the PCM that a simulated listener (a page member in the call) could decrypt,
 * mixes it to mono and passes it on 20 ms at a time with the voice channel it was said in, and
 * groups it into utterances: one per clip the bot plays (@discordjs/voice ends each with speaking
 * off), or until the audio stops for a second. Two voice channels read at once (two accounts of the
 * bot) are two utterances at once.
 */
import { EventEmitter } from 'node:events';
import { VOICE_SAMPLE_RATE } from '@yomiage/local-discord';
import type { FakeVoiceServer, ReceivedPacket, VoiceSession } from '@yomiage/local-discord';
import { frameOf, type ClipLabel, type Frame } from './clips.ts';

export interface TappedUtterance {
  /** 1, 2, 3... in the order they started. */
  id: number;
  /** Wall-clock time of the first audible packet. */
  startedAt: number;
  /** Decoded audio so far, from the first audible packet to the last one. */
  durationMs: number;
  /** Loudness of the audible packets, dBFS RMS. */
  rmsDb: number;
  playing: boolean;
  /** Every audible packet was end-to-end encrypted (DAVE) and decrypted by a listener. */
  endToEndEncrypted: boolean;
  /** Members whose simulated client decrypted it. */
  heardBy: string[];
  /** The voice channel it was said in (when the voice server knows the call's channel). */
  channelId?: string;
  /** What the bot is saying, once one clip the emulator made matches (see clips.ts). */
  text?: string;
  voice?: string;
}

interface VoiceTapEvents {
  /** Mono 48 kHz PCM of one packet (about 20 ms), in arrival order, and the voice channel it was said in. */
  audio: [pcm: Int16Array, channelId: string | undefined];
  /** An utterance started, grew or ended. */
  utterance: [utterance: TappedUtterance];
}

/** An utterance still playing is reported at most this often while it grows. */
const PROGRESS_EVERY_MS = 250;

interface Open {
  view: TappedUtterance;
  key: string;
  ssrc: number;
  lastAt: number;
  reportedAt: number;
  loudMs: number;
  sumSquares: number;
  samples: number;
  pendingMs: number;
  /** Loudness and pitch per packet from the first audible one, for `identify`. */
  contour: Frame[];
}

export class VoiceTap extends EventEmitter<VoiceTapEvents> {
  readonly utterances: TappedUtterance[] = [];
  readonly #guildId: string;
  readonly #voice: FakeVoiceServer;
  readonly #endAfterMs: number;
  readonly #keep: number;
  readonly #identify: ((contour: readonly Frame[], complete: boolean) => ClipLabel | undefined) | undefined;
  /** The utterance playing in each call (by sender and speaking turn); several calls play at once. */
  readonly #open = new Map<string, Open>();
  #next = 1;
  readonly #timer: NodeJS.Timeout;
  readonly #onPacket = (packet: ReceivedPacket) => this.#packet(packet);
  readonly #onSpeaking = (session: VoiceSession, info: { speaking: number }) => {
    if (info.speaking !== 0) return;
    for (const open of [...this.#open.values()]) if (open.ssrc === session.ssrc) this.#finish(open);
  };

  constructor(
    voice: FakeVoiceServer,
    options: {
      guildId: string;
      endAfterMs?: number;
      keep?: number;
      identify?: (contour: readonly Frame[], complete: boolean) => ClipLabel | undefined;
    },
  ) {
    super();
    this.#identify = options.identify;
    this.#voice = voice;
    this.#guildId = options.guildId;
    this.#endAfterMs = options.endAfterMs ?? 1000;
    this.#keep = options.keep ?? 200;
    voice.on('packet', this.#onPacket);
    voice.on('speaking', this.#onSpeaking);
    // A clip cut off without speaking off (the bot left, a stall) ends after a second of nothing.
    this.#timer = setInterval(() => {
      for (const open of [...this.#open.values()]) if (performance.now() - open.lastAt > this.#endAfterMs) this.#finish(open);
    }, 200);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#voice.off('packet', this.#onPacket);
    this.#voice.off('speaking', this.#onSpeaking);
  }

  #packet(packet: ReceivedPacket): void {
    if (packet.guildId !== this.#guildId || packet.undecryptable || packet.decodeError) return;
    const heardBy = Object.entries(packet.heardBy)
      .filter(([, outcome]) => outcome === 'decrypted' || outcome === 'plain')
      .map(([userId]) => userId);
    if (heardBy.length === 0) return; // nobody of the page is in the call: nothing to hear
    const mono = toMono(packet.pcm);
    this.emit('audio', mono, packet.channelId);
    const key = `${packet.ssrc}:${packet.speakingOffCount}`;
    // The same sender's next turn ends its previous utterance; other senders' go on.
    for (const other of [...this.#open.values()]) if (other.ssrc === packet.ssrc && other.key !== key) this.#finish(other);
    const ms = (mono.length / VOICE_SAMPLE_RATE) * 1000;
    let open = this.#open.get(key);
    if (!open) {
      if (packet.silent) return; // an utterance starts with sound
      open = this.#start(key, packet.ssrc, packet.channelId);
    }
    open.lastAt = performance.now();
    open.contour.push(frameOf(mono));
    for (const userId of heardBy) if (!open.view.heardBy.includes(userId)) open.view.heardBy.push(userId);
    if (packet.silent) {
      open.pendingMs += ms; // counts only if sound follows: trailing silence is not the utterance
    } else {
      open.loudMs += open.pendingMs + ms;
      open.pendingMs = 0;
      for (const s of mono) open.sumSquares += s * s;
      open.samples += mono.length;
      if (!packet.daveFramed || !heardBy.some((u) => packet.heardBy[u] === 'decrypted')) open.view.endToEndEncrypted = false;
    }
    open.view.durationMs = Math.round(open.loudMs);
    open.view.rmsDb = rms(open.sumSquares, open.samples);
    if (open.lastAt - open.reportedAt >= PROGRESS_EVERY_MS) {
      open.reportedAt = open.lastAt;
      this.#label(open, false);
      this.emit('utterance', { ...open.view, heardBy: [...open.view.heardBy] });
    }
  }

  #start(key: string, ssrc: number, channelId: string | undefined): Open {
    const view: TappedUtterance = {
      id: this.#next++,
      startedAt: Date.now(),
      durationMs: 0,
      rmsDb: -Infinity,
      playing: true,
      endToEndEncrypted: true,
      heardBy: [],
      ...(channelId ? { channelId } : {}),
    };
    this.utterances.push(view);
    if (this.utterances.length > this.#keep) this.utterances.splice(0, this.utterances.length - this.#keep);
    const now = performance.now();
    const open: Open = { view, key, ssrc, lastAt: now, reportedAt: now, loudMs: 0, sumSquares: 0, samples: 0, pendingMs: 0, contour: [] };
    this.#open.set(key, open);
    this.emit('utterance', { ...view, heardBy: [] });
    return open;
  }

  #finish(open: Open): void {
    if (this.#open.get(open.key) !== open) return;
    this.#open.delete(open.key);
    open.view.playing = false;
    this.#label(open, true);
    this.emit('utterance', { ...open.view, heardBy: [...open.view.heardBy] });
  }

  #label(open: Open, complete: boolean): void {
    if (open.view.text !== undefined || !this.#identify) return;
    const label = this.#identify(open.contour, complete);
    if (!label) return;
    open.view.text = label.text;
    open.view.voice = label.voice;
  }
}

/** 48 kHz stereo interleaved to mono (the average of both channels). */
function toMono(stereo: Int16Array): Int16Array {
  const mono = new Int16Array(stereo.length >> 1);
  for (let i = 0; i < mono.length; i++) mono[i] = (stereo[2 * i]! + stereo[2 * i + 1]!) >> 1;
  return mono;
}

function rms(sumSquares: number, samples: number): number {
  if (samples === 0 || sumSquares === 0) return -Infinity;
  return 20 * Math.log10(Math.sqrt(sumSquares / samples) / 32768);
}
