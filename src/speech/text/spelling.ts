/**
 * One spelling for what members write, what the dictionary holds and what the cache keys: NFKC
 * (full-width ASCII and half-width kana folded), except the full-width tilde. NFKC turns "～" into
 * "~", which voices read as a symbol ("チルダ") or drop, while "すごい～" is a drawn-out sound and "1～3"
 * a range; the wave dash "〜" that Japanese input methods also type means both and is read as such.
 */
export function normaliseSpelling(text: string): string {
  return text.replace(/\uFF5E/g, '\u301C').normalize('NFKC');
}
