/**
 * The TLS presentation language as MLS uses it (RFC 9420 section 2.1): big-endian integers and vectors
 * with a variable-size length header (section 2.1.2: 1, 2 or 4 bytes, the top two bits giving the size).
 */
import { LocalDiscordError } from '../../errors.ts';

/** Appends MLS-encoded values to a growing list of chunks. */
export class TlsWriter {
  readonly #chunks: Buffer[] = [];

  u8(value: number): this {
    this.#chunks.push(Buffer.from([value]));
    return this;
  }

  u16(value: number): this {
    return this.#fixed(2, (b) => b.writeUInt16BE(value));
  }

  u32(value: number): this {
    return this.#fixed(4, (b) => b.writeUInt32BE(value));
  }

  u64(value: bigint): this {
    return this.#fixed(8, (b) => b.writeBigUInt64BE(value));
  }

  /** Bytes written as they are (a struct already encoded). */
  raw(bytes: Uint8Array): this {
    this.#chunks.push(Buffer.from(bytes));
    return this;
  }

  /** A big-endian integer of `size` bytes. */
  #fixed(size: number, write: (b: Buffer) => unknown): this {
    const b = Buffer.alloc(size);
    write(b);
    this.#chunks.push(b);
    return this;
  }

  /** `opaque x<V>`: the length header, then the bytes. */
  vector(bytes: Uint8Array): this {
    this.#chunks.push(encodeVarint(bytes.length), Buffer.from(bytes));
    return this;
  }

  bytes(): Buffer {
    return Buffer.concat(this.#chunks);
  }
}

/** The minimal variable-size length header for `length` (RFC 9420 section 2.1.2). */
function encodeVarint(length: number): Buffer {
  if (length < 0x40) return Buffer.from([length]);
  if (length < 0x4000) {
    const b = Buffer.alloc(2);
    b.writeUInt16BE(length | 0x4000);
    return b;
  }
  if (length < 0x40000000) {
    const b = Buffer.alloc(4);
    b.writeUInt32BE((length | 0x80000000) >>> 0);
    return b;
  }
  throw new RangeError(`vector of ${length} bytes is too long for MLS`);
}

/** Reads MLS-encoded values from a buffer, throwing LocalDiscordError `mls_malformed` on truncation. */
export class TlsReader {
  readonly buffer: Buffer;
  offset: number;

  constructor(buffer: Buffer, offset = 0) {
    this.buffer = buffer;
    this.offset = offset;
  }

  get remaining(): number {
    return this.buffer.length - this.offset;
  }

  #need(n: number): void {
    if (this.offset + n > this.buffer.length) {
      throw new LocalDiscordError('mls_malformed', {
        message: `truncated: need ${n} bytes at offset ${this.offset} of ${this.buffer.length}`,
      });
    }
  }

  u8(): number {
    this.#need(1);
    return this.buffer.readUInt8(this.offset++);
  }

  u16(): number {
    this.#need(2);
    const v = this.buffer.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }

  u32(): number {
    this.#need(4);
    const v = this.buffer.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  u64(): bigint {
    this.#need(8);
    const v = this.buffer.readBigUInt64BE(this.offset);
    this.offset += 8;
    return v;
  }

  bytes(n: number): Buffer {
    this.#need(n);
    const v = this.buffer.subarray(this.offset, this.offset + n);
    this.offset += n;
    return v;
  }

  /** `opaque x<V>`; rejects non-minimal length headers as RFC 9420 requires. */
  vector(): Buffer {
    const first = this.u8();
    const prefix = first >> 6;
    let length: number;
    if (prefix === 0) length = first;
    else if (prefix === 1) {
      length = ((first & 0x3f) << 8) | this.u8();
      if (length < 0x40) throw new LocalDiscordError('mls_malformed', { message: 'non-minimal vector length' });
    } else if (prefix === 2) {
      length = (((first & 0x3f) << 24) | (this.u8() << 16) | (this.u8() << 8) | this.u8()) >>> 0;
      if (length < 0x4000) throw new LocalDiscordError('mls_malformed', { message: 'non-minimal vector length' });
    } else throw new LocalDiscordError('mls_malformed', { message: 'invalid vector length prefix 0b11' });
    return this.bytes(length);
  }

  /** The bytes read since `start` (to re-hash or re-sign an already parsed struct). */
  since(start: number): Buffer {
    return this.buffer.subarray(start, this.offset);
  }
}
