import { execFileSync } from 'node:child_process';
import { ffmpegPath } from '@yomiage/media';

/**
 * Reading Ogg Opus back for tests, written from RFC 3533 / RFC 7845 independently of the bot's
 * muxer (src/audio/ogg-opus.ts), and the ffmpeg command the cache used before it made its Ogg
 * Opus in-process: the reference the in-process audio is compared with.
 */

export interface OggPage {
  flags: number;
  granule: bigint;
  serial: number;
  sequence: number;
  /** The CRC field as written, and the CRC computed over the page with that field zero. */
  crc: number;
  computedCrc: number;
  packets: Buffer[];
}

/** Bitwise CRC-32 (polynomial 0x04c11db7, not reflected, initial 0), as Ogg defines it. */
function crc32(data: Buffer): number {
  let crc = 0;
  for (const byte of data) {
    crc ^= byte << 24;
    for (let b = 0; b < 8; b++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
  }
  return crc >>> 0;
}

/** Every page of an Ogg file (whole packets only: none of the bot's pages continues a packet). */
export function readOggPages(ogg: Buffer): OggPage[] {
  const pages: OggPage[] = [];
  for (let at = 0; at < ogg.length;) {
    if (ogg.toString('latin1', at, at + 4) !== 'OggS') throw new Error(`no page at byte ${at}`);
    const count = ogg[at + 26]!;
    const lacing = [...ogg.subarray(at + 27, at + 27 + count)];
    const bodyStart = at + 27 + count;
    const end = bodyStart + lacing.reduce((a, b) => a + b, 0);
    const page = Buffer.from(ogg.subarray(at, end));
    const crc = page.readUInt32LE(22);
    page.writeUInt32LE(0, 22);
    const packets: Buffer[] = [];
    let start = bodyStart;
    let length = 0;
    for (const l of lacing) {
      length += l;
      if (l < 255) {
        packets.push(ogg.subarray(start, start + length));
        start += length;
        length = 0;
      }
    }
    pages.push({
      flags: ogg[at + 5]!,
      granule: ogg.readBigInt64LE(at + 6),
      serial: ogg.readUInt32LE(at + 14),
      sequence: ogg.readUInt32LE(at + 18),
      crc,
      computedCrc: crc32(page),
      packets,
    });
    at = end;
  }
  return pages;
}

/** OpusHead's fields (RFC 7845 section 5.1). */
export function readOpusHead(packet: Buffer): { channels: number; preSkip: number; inputSampleRate: number } {
  if (packet.toString('latin1', 0, 8) !== 'OpusHead') throw new Error('not an OpusHead');
  return { channels: packet[9]!, preSkip: packet.readUInt16LE(10), inputSampleRate: packet.readUInt32LE(12) };
}

/** The Ogg Opus ffmpeg makes of an MP3 with the cache's settings (leading silence cut, 48 kHz stereo, 64 kbit/s). */
export function ffmpegOggOpus(mp3: Buffer): Buffer {
  // prettier-ignore
  return execFileSync(ffmpegPath(), [
    '-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', '-vn', '-map_metadata', '-1',
    '-af', 'silenceremove=start_periods=1:start_threshold=-50dB',
    '-ac', '2', '-ar', '48000', '-c:a', 'libopus', '-b:a', '64k', '-application', 'audio', '-f', 'ogg', 'pipe:1',
  ], { input: mp3, maxBuffer: 64 * 1024 * 1024 });
}
