/**
 * DAVE's protocol frame check (daveprotocol.com, "Payload Format" and "Protocol Frame Check"): an
 * end-to-end encrypted media frame ends with supplemental data (an 8-byte truncated AES-GCM tag, a
 * ULEB128 nonce, ULEB128 unencrypted ranges, one size byte) and the magic marker 0xFAFA.
 */

const MAGIC_MARKER = 0xfafa;
const TAG_LENGTH = 8;
/** Tag, a one-byte nonce, the size byte and the marker. */
const MIN_SUPPLEMENTAL = TAG_LENGTH + 1 + 1 + 2;
/** The Opus silence frame, which DAVE lets through unencrypted ("Silence Packets"). */
export const OPUS_SILENCE_FRAME = Buffer.from([0xf8, 0xff, 0xfe]);

interface DaveFrame {
  /** The 32-bit truncated synchronization nonce; its top byte is the key ratchet generation. */
  nonce: number;
  /** Byte ranges of the interleaved frame left unencrypted (none for Opus). */
  unencryptedRanges: { offset: number; length: number }[];
  /** Length of the interleaved (encrypted) media frame, supplemental data excluded. */
  mediaLength: number;
}

function readUleb128(bytes: Buffer, start: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  let shift = 0;
  for (let i = start; i < end; i++) {
    const byte = bytes[i]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return value > 0xffffffff ? undefined : { value, next: i + 1 };
    shift += 7;
    if (shift > 35) return undefined;
  }
  return undefined;
}

/** Parses `frame` as a DAVE protocol frame; undefined when it fails the protocol frame check. */
export function parseDaveFrame(frame: Buffer): DaveFrame | undefined {
  if (frame.length < MIN_SUPPLEMENTAL) return undefined;
  if (frame.readUInt16BE(frame.length - 2) !== MAGIC_MARKER) return undefined;
  const supplemental = frame[frame.length - 3]!;
  if (supplemental < MIN_SUPPLEMENTAL || supplemental > frame.length) return undefined;
  const mediaLength = frame.length - supplemental;
  let at = mediaLength + TAG_LENGTH;
  const end = frame.length - 3;
  const nonce = readUleb128(frame, at, end);
  if (!nonce) return undefined;
  at = nonce.next;
  const unencryptedRanges: DaveFrame['unencryptedRanges'] = [];
  let covered = 0;
  while (at < end) {
    const offset = readUleb128(frame, at, end);
    if (!offset) return undefined;
    const length = readUleb128(frame, offset.next, end);
    if (!length) return undefined;
    at = length.next;
    // Ordered, not overlapping, inside the media frame.
    if (offset.value < covered || offset.value + length.value > mediaLength) return undefined;
    covered = offset.value + length.value;
    unencryptedRanges.push({ offset: offset.value, length: length.value });
  }
  return { nonce: nonce.value, unencryptedRanges, mediaLength };
}
