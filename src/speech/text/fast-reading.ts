import { LIMITS } from '../../tts/validation.ts';

// Long messages read faster (早口) instead of cut: a message longer than the server's max length is
// read at a speed raised in proportion to its length, so it takes about as long as a message of
// the max length would, up to the server's ceiling (/config fast-reading); only past the ceiling
// times the max length is it cut with "以下略" (text.ts). A ceiling of 1 is the old rule: cut at the
// max length, never faster. Pure, so the rule is tested GIVEN/THEN on its own.

/** The standard endpoint's fastest speed: the service reads a faster request at 1.0 (spec: speed). */
const FASTEST = LIMITS.standardSpeed.max;

const ceilingOf = (ceiling: number) => (Number.isFinite(ceiling) ? Math.min(FASTEST, Math.max(1, ceiling)) : 1);
// Speeds are sent with two decimals: enough for the ear, and one text always gets the same cache key.
const twoDecimals = (x: number) => Math.round(x * 100) / 100;

/** How many characters a message may have before it is cut: the max length times the ceiling. */
export function readLimit(maxLength: number, ceiling: number): number {
  return Math.max(1, Math.floor(Math.max(1, maxLength) * ceilingOf(ceiling)));
}

/**
 * How much faster a text of `chars` characters is read: `chars / maxLength` past the max length
 * (as long as the max length would take), at most the ceiling; 1 up to the max length.
 */
export function fastFactor(chars: number, maxLength: number, ceiling: number): number {
  const factor = Math.min(ceilingOf(ceiling), chars / Math.max(1, maxLength));
  return factor > 1 ? twoDecimals(factor) : 1;
}

/**
 * The speed a text of `chars` characters is read at: `speed` (the member's or the server's) times
 * `fastFactor`, never past the service's fastest (4.0).
 */
export function fastSpeed(speed: number, chars: number, maxLength: number, ceiling: number): number {
  const factor = fastFactor(chars, maxLength, ceiling);
  return factor === 1 ? speed : Math.min(FASTEST, twoDecimals(speed * factor));
}
