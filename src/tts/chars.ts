/**
 * Character counting, in one place. The service's limits (advanced text 10..400/3000 characters,
 * tone <= 100) and the monthly allowance are in characters; we count Unicode code points, so an
 * emoji outside the BMP is one character, not two UTF-16 units (a surrogate pair), and a
 * combining sequence counts each code point. Everything outside the emulator counts through here.
 */

/** Number of characters in `text`, counted as Unicode code points. */
export function countChars(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** `text` split into characters (code points), the unit `countChars` counts. */
export function splitChars(text: string): string[] {
  return Array.from(text);
}

/** The first `max` characters (code points) of `text`; never splits a surrogate pair. */
export function truncateChars(text: string, max: number): string {
  if (max <= 0) return '';
  let out = '';
  let n = 0;
  for (const ch of text) {
    if (n === max) break;
    out += ch;
    n++;
  }
  return out;
}
