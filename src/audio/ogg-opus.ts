import { VOICE_CHANNELS } from '../util/voice-format.ts';

/**
 * An Ogg Opus muxer (RFC 7845 over RFC 3533): OpusHead (pre-skip, input rate), OpusTags, then the
 * audio packets in pages whose granule position counts 48 kHz samples, each page with its CRC-32,
 * the last flagged end-of-stream. Enough for one stereo stream of 20 ms packets as the bot makes.
 */

/**
 * Samples the decoder drops at the start: libopus's encoder lookahead at 48 kHz (2.5 ms plus the
 * 4 ms delay compensation of the audio and voip applications), what ffmpeg's libopus writes.
 */
const OPUS_PRE_SKIP = 312;
/** Packets per page: about one second of 20 ms packets, as ffmpeg's ogg muxer pages them. */
const PACKETS_PER_PAGE = 50;
const MAX_SEGMENTS = 255;
const FLAG_CONTINUED = 0x01;
const FLAG_FIRST = 0x02;
const FLAG_LAST = 0x04;
const VENDOR = 'yomiage';

/** CRC-32 as Ogg computes it: polynomial 0x04c11db7, not reflected, initial value 0. */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let b = 0; b < 8; b++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** The Ogg CRC-32 of `data`. */
function oggCrc(data: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < data.length; i++) crc = ((crc << 8) ^ CRC_TABLE[((crc >>> 24) ^ data[i]!) & 0xff]!) >>> 0;
  return crc;
}

interface OggOpusWriterOptions {
  /** The sample rate of the audio before it was encoded (informational, in OpusHead). */
  inputSampleRate: number;
  /** The stream's serial number (any 32-bit value; fixed by default so equal input gives equal files). */
  serial?: number;
}

/** Collects Opus packets and writes them as one Ogg Opus file. */
export class OggOpusWriter {
  readonly #serial: number;
  readonly #pages: Buffer[] = [];
  #sequence = 0;
  /** Packets of the page being filled, and 48 kHz samples of every packet so far (with pre-skip). */
  #pending: Buffer[] = [];
  #granule = OPUS_PRE_SKIP;

  constructor(options: OggOpusWriterOptions) {
    this.#serial = (options.serial ?? 0x796f6d69) >>> 0;
    const head = Buffer.alloc(19);
    head.write('OpusHead', 0, 'latin1');
    head.writeUInt8(1, 8); // version
    head.writeUInt8(VOICE_CHANNELS, 9);
    head.writeUInt16LE(OPUS_PRE_SKIP, 10);
    head.writeUInt32LE(options.inputSampleRate, 12);
    head.writeInt16LE(0, 16); // output gain
    head.writeUInt8(0, 18); // channel mapping family 0: mono or stereo, no table
    this.#page([head], 0, FLAG_FIRST);
    const vendor = Buffer.from(VENDOR, 'utf8');
    const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
    tags.write('OpusTags', 0, 'latin1');
    tags.writeUInt32LE(vendor.length, 8);
    vendor.copy(tags, 12);
    tags.writeUInt32LE(0, 12 + vendor.length); // no user comments
    this.#page([tags], 0, 0);
  }

  /** Adds one Opus packet of `samples` 48 kHz samples per channel (960 for 20 ms). */
  push(packet: Buffer, samples: number): void {
    if (this.#pending.length >= PACKETS_PER_PAGE || this.#segments([...this.#pending, packet]) > MAX_SEGMENTS) this.#flush(0);
    this.#pending.push(packet);
    this.#granule += samples;
  }

  /**
   * The whole file. `samples` is how many of the pushed samples are audio: the last page's granule
   * position says so, so a player drops the padding of the last packet (RFC 7845 end trimming).
   */
  end(samples?: number): Buffer {
    if (samples !== undefined) this.#granule = Math.min(this.#granule, OPUS_PRE_SKIP + samples);
    this.#flush(FLAG_LAST);
    return Buffer.concat(this.#pages);
  }

  #flush(flags: number): void {
    if (this.#pending.length === 0 && !(flags & FLAG_LAST)) return;
    this.#page(this.#pending, this.#granule, flags);
    this.#pending = [];
  }

  #segments(packets: readonly Buffer[]): number {
    return packets.reduce((n, p) => n + Math.floor(p.length / 255) + 1, 0);
  }

  /** One page of whole packets (never continued: a 20 ms packet is far below a page's 65 kB). */
  #page(packets: readonly Buffer[], granule: number, flags: number): void {
    const lacing: number[] = [];
    for (const p of packets) {
      for (let left = p.length; ; left -= 255) {
        lacing.push(Math.min(left, 255));
        if (left < 255) break;
      }
    }
    const header = Buffer.alloc(27 + lacing.length);
    header.write('OggS', 0, 'latin1');
    header.writeUInt8(0, 4); // version
    header.writeUInt8(flags & ~FLAG_CONTINUED, 5);
    header.writeBigInt64LE(BigInt(granule), 6);
    header.writeUInt32LE(this.#serial, 14);
    header.writeUInt32LE(this.#sequence++, 18);
    header.writeUInt32LE(0, 22); // CRC, computed over the page with this field zero
    header.writeUInt8(lacing.length, 26);
    Buffer.from(lacing).copy(header, 27);
    const page = Buffer.concat([header, ...packets]);
    page.writeUInt32LE(oggCrc(page), 22);
    this.#pages.push(page);
  }
}
