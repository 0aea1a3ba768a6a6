/** MP3 frame headers read without decoding: the channel count and the duration of a clip. */

// MPEG audio header tables (ISO 11172-3 / 13818-3), Layer III only.
const BITRATES_V1 = [0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320];
const BITRATES_V2 = [0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160];
const SAMPLE_RATES: Record<number, readonly number[]> = {
  3: [44100, 48000, 32000], // MPEG-1
  2: [22050, 24000, 16000], // MPEG-2
  0: [11025, 12000, 8000], // MPEG-2.5
};

interface FrameHeader {
  length: number;
  samples: number;
  sampleRate: number;
  /** Offset of the Xing/Info tag inside the frame (after the side information). */
  xingOffset: number;
  mono: boolean;
}

function parseHeader(buf: Buffer, at: number): FrameHeader | undefined {
  if (at + 4 > buf.length) return undefined;
  const b1 = buf[at]!;
  const b2 = buf[at + 1]!;
  const b3 = buf[at + 2]!;
  const b4 = buf[at + 3]!;
  if (b1 !== 0xff || (b2 & 0xe0) !== 0xe0) return undefined;
  const version = (b2 >> 3) & 0x3; // 0 = 2.5, 1 = reserved, 2 = 2, 3 = 1
  const layer = (b2 >> 1) & 0x3; // 1 = Layer III
  if (version === 1 || layer !== 1) return undefined;
  const bitrateIndex = (b3 >> 4) & 0xf;
  const rateIndex = (b3 >> 2) & 0x3;
  if (bitrateIndex === 0 || bitrateIndex === 15 || rateIndex === 3) return undefined; // free format / bad
  const padding = (b3 >> 1) & 0x1;
  const mpeg1 = version === 3;
  const kbps = (mpeg1 ? BITRATES_V1 : BITRATES_V2)[bitrateIndex]!;
  const sampleRate = SAMPLE_RATES[version]![rateIndex]!;
  const samples = mpeg1 ? 1152 : 576;
  const length = Math.floor(((samples / 8) * kbps * 1000) / sampleRate) + padding;
  const mono = b4 >> 6 === 3;
  const sideInfo = mpeg1 ? (mono ? 17 : 32) : mono ? 9 : 17;
  return { length, samples, sampleRate, xingOffset: 4 + sideInfo, mono };
}

function id3v2Size(buf: Buffer): number {
  if (buf.length < 10 || buf.toString('latin1', 0, 3) !== 'ID3') return 0;
  const size = ((buf[6]! & 0x7f) << 21) | ((buf[7]! & 0x7f) << 14) | ((buf[8]! & 0x7f) << 7) | (buf[9]! & 0x7f);
  const footer = (buf[5]! & 0x10) !== 0 ? 10 : 0;
  return 10 + size + footer;
}

/** Whether the MP3's first audio frame is single-channel (false when no frame is found). */
export function isMonoMp3(mp3: Buffer | Uint8Array): boolean {
  const buf = Buffer.isBuffer(mp3) ? mp3 : Buffer.from(mp3.buffer, mp3.byteOffset, mp3.byteLength);
  for (let at = id3v2Size(buf); at + 4 <= buf.length; at++) {
    const header = parseHeader(buf, at);
    if (!header) continue;
    const next = at + header.length;
    // Synced only when another header follows (or the file ends): 0xFFE also occurs in data.
    if (next + 4 <= buf.length && !parseHeader(buf, next)) continue;
    return header.mono;
  }
  return false;
}

/**
 * Duration of an MP3 (MPEG-1/2/2.5 Layer III) in milliseconds, from its frame headers: frames ×
 * samples per frame ÷ sample rate. Skips ID3v2 and the Xing/Info frame; 0 when no frame is found.
 */
export function probeDurationMs(mp3: Buffer): number {
  let at = id3v2Size(mp3);
  let seconds = 0;
  let padSeconds = 0;
  let first = true;
  while (at + 4 <= mp3.length) {
    const header = parseHeader(mp3, at);
    const next = header ? at + header.length : 0;
    if (header && next > mp3.length) break; // a truncated last frame
    // To sync, a header must be followed by another header (or the end): 0xFFE also occurs in data.
    if (!header || (first && next + 4 <= mp3.length && !parseHeader(mp3, next))) {
      at++;
      continue;
    }
    const tag = mp3.toString('latin1', at + header.xingOffset, at + header.xingOffset + 4);
    if (first && (tag === 'Xing' || tag === 'Info')) {
      // The encoder's Xing/Info frame carries no audio; its LAME extension says how many silent
      // samples the encoder added at both ends (gapless playback), which are not speech.
      padSeconds = encoderPaddingSamples(mp3, at + header.xingOffset, at + header.length) / header.sampleRate;
    } else {
      seconds += header.samples / header.sampleRate;
    }
    first = false;
    at = next;
  }
  return Math.max(0, Math.round((seconds - (seconds > padSeconds ? padSeconds : 0)) * 1000));
}

/** Encoder delay + padding from the LAME extension of a Xing/Info tag at `at`; 0 when absent. */
function encoderPaddingSamples(buf: Buffer, at: number, end: number): number {
  const flags = buf.readUInt32BE(at + 4);
  // Optional fields: frames (4), bytes (4), TOC (100), quality (4).
  let lame = at + 8 + (flags & 1 ? 4 : 0) + (flags & 2 ? 4 : 0) + (flags & 4 ? 100 : 0) + (flags & 8 ? 4 : 0);
  if (lame + 24 > end) return 0;
  const encoder = buf.toString('latin1', lame, lame + 4);
  if (encoder !== 'LAME' && encoder !== 'Lavc' && encoder !== 'Lavf') return 0;
  lame += 21; // encoder string (9), revision/VBR (1), lowpass (1), replay gain (8), flags (1), ABR (1)
  const delay = (buf[lame]! << 4) | (buf[lame + 1]! >> 4);
  const padding = ((buf[lame + 1]! & 0x0f) << 8) | buf[lame + 2]!;
  return delay + padding;
}
