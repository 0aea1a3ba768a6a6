/**
 * The syntax of the patterns admins and members write (src/speech/text/safe-pattern.ts runs them):
 * a checked subset of JavaScript's regular expressions with the `u` flag, parsed into a tree, and
 * refused with its reason when it needs backtracking (backreferences, lookaround, an empty
 * iteration of a repetition failing), matches empty text, is too long or would compile too large.
 * Pure; the identifiers are i18n keys (src/i18n/locales).
 */

/** Longest pattern (code points), most instructions it compiles to, largest count in `{n,m}`. */
export const PATTERN_LIMITS = { maxChars: 100, maxStates: 200, maxRepeat: 100 } as const;

export type PatternErrorIdentifier =
  | 'pattern.empty'
  | 'pattern.too_long'
  | 'pattern.too_complex'
  | 'pattern.repeat_too_large'
  | 'pattern.backreference'
  | 'pattern.lookaround'
  | 'pattern.matches_empty'
  | 'pattern.empty_repeat'
  | 'pattern.syntax';

export interface PatternError {
  identifier: PatternErrorIdentifier;
  /** `position`: the 1-based position (code point) where the pattern went wrong; `max`: the limit passed. */
  context: { position?: number; max?: number };
}

// ---- character sets ----

/** A set of code points: ranges and Unicode properties (each tested on one code point, so in constant time), maybe negated. */
export interface CharSet {
  /** Flat [lo, hi, lo, hi, …], inclusive. */
  ranges: number[];
  /** `\p{…}` classes, each anchored on one code point. */
  props: RegExp[];
  /** Negated escapes inside a class (`[\D…]`), each tested as a set of its own. */
  parts: CharSet[];
  negated: boolean;
  /** ASCII letters match in either case. */
  fold: boolean;
}

const LINE_TERMINATORS = [0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029];
const DIGIT = [0x30, 0x39];
const WORD = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
// JavaScript's \s: WhiteSpace and LineTerminator (ECMA-262 CharacterClassEscape).
const SPACE = [
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000,
  0xfeff, 0xfeff,
];

function inSet(set: CharSet, cp: number): boolean {
  const r = set.ranges;
  for (let i = 0; i < r.length; i += 2) if (cp >= r[i]! && cp <= r[i + 1]!) return true;
  if (set.props.length > 0) {
    const ch = String.fromCodePoint(cp);
    for (const p of set.props) if (p.test(ch)) return true;
  }
  for (const part of set.parts) if (matches(part, cp)) return true;
  return false;
}

export function matches(set: CharSet, cp: number): boolean {
  let found = inSet(set, cp);
  // Either case of an ASCII letter: the set's members, then negation (as `[^a]` with the i flag refuses "A").
  if (!found && set.fold && ((cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a))) found = inSet(set, cp ^ 0x20);
  return found !== set.negated;
}

export const isWordChar = (cp: number) =>
  (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || (cp >= 0x61 && cp <= 0x7a);

// ---- the syntax tree ----

export type Assertion = 'start' | 'end' | 'word' | 'nonword';
export type Node =
  | { t: 'set'; set: CharSet }
  | { t: 'cat'; items: Node[] }
  | { t: 'alt'; items: Node[] }
  | { t: 'rep'; node: Node; min: number; max: number; greedy: boolean }
  | { t: 'assert'; kind: Assertion }
  | { t: 'empty' };

class Refused {
  readonly error: PatternError;
  constructor(identifier: PatternErrorIdentifier, context: PatternError['context'] = {}) {
    this.error = { identifier, context };
  }
}

const SYNTAX_CHARS = new Set([...'^$\\.*+?()[]{}|/'].map((c) => c.codePointAt(0)!));
export const cp = (c: string) => c.codePointAt(0)!;

/** Recursive descent over the pattern's code points (ECMA-262 Pattern, u flag, without what needs backtracking). */
class Parser {
  readonly #cps: number[];
  readonly #fold: boolean;
  #i = 0;

  constructor(source: string, fold: boolean) {
    this.#cps = [...source].map(cp);
    this.#fold = fold;
  }

  parse(): Node {
    const node = this.#alternation();
    if (this.#i < this.#cps.length) this.#refuse('pattern.syntax'); // an unmatched ")"
    return node;
  }

  #peek(offset = 0): number | undefined {
    return this.#cps[this.#i + offset];
  }

  #refuse(identifier: PatternErrorIdentifier, at = this.#i, extra: { max?: number } = {}): never {
    throw new Refused(identifier, { position: Math.min(at, this.#cps.length - 1) + 1, ...extra });
  }

  #set(ranges: number[], negated = false, props: RegExp[] = [], parts: CharSet[] = []): Node {
    return { t: 'set', set: { ranges, props, parts, negated, fold: this.#fold } };
  }

  #alternation(): Node {
    const items = [this.#sequence()];
    while (this.#peek() === cp('|')) {
      this.#i++;
      items.push(this.#sequence());
    }
    return items.length === 1 ? items[0]! : { t: 'alt', items };
  }

  #sequence(): Node {
    const items: Node[] = [];
    for (let c = this.#peek(); c !== undefined && c !== cp('|') && c !== cp(')'); c = this.#peek()) {
      const atom = this.#atom();
      items.push(this.#quantified(atom));
    }
    return items.length === 0 ? { t: 'empty' } : items.length === 1 ? items[0]! : { t: 'cat', items };
  }

  #quantified(atom: Node): Node {
    const start = this.#i;
    const c = this.#peek();
    let min: number;
    let max: number;
    if (c === cp('*')) [min, max] = [0, Infinity];
    else if (c === cp('+')) [min, max] = [1, Infinity];
    else if (c === cp('?')) [min, max] = [0, 1];
    else if (c === cp('{')) {
      const bounds = this.#braces();
      if (!bounds) this.#refuse('pattern.syntax'); // a lone "{" (written \{ for the character)
      [min, max] = bounds;
    } else return atom;
    if (c !== cp('{')) this.#i++;
    // JavaScript refuses a quantifier on an assertion (with the u flag) and on nothing.
    if (atom.t === 'assert') this.#refuse('pattern.syntax', start);
    const greedy = this.#peek() !== cp('?');
    if (!greedy) this.#i++;
    const next = this.#peek();
    if (next === cp('*') || next === cp('+') || next === cp('?') || next === cp('{')) this.#refuse('pattern.syntax'); // nothing to repeat
    return { t: 'rep', node: atom, min, max, greedy };
  }

  /** `{n}`, `{n,}` or `{n,m}` at the cursor (consumed), or undefined (nothing consumed). */
  #braces(): [number, number] | undefined {
    const rest = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 16));
    const m = /^\{(\d+)(,(\d*))?\}/.exec(rest);
    if (!m) return undefined;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    if (min > PATTERN_LIMITS.maxRepeat || (max !== Infinity && max > PATTERN_LIMITS.maxRepeat))
      this.#refuse('pattern.repeat_too_large', this.#i, { max: PATTERN_LIMITS.maxRepeat });
    if (max < min) this.#refuse('pattern.syntax');
    this.#i += m[0].length;
    return [min, max];
  }

  #atom(): Node {
    const at = this.#i;
    const c = this.#cps[this.#i++]!;
    switch (c) {
      case cp('('):
        return this.#group(at);
      case cp('['):
        return this.#class();
      case cp('.'):
        return this.#set(LINE_TERMINATORS, true);
      case cp('^'):
        return { t: 'assert', kind: 'start' };
      case cp('$'):
        return { t: 'assert', kind: 'end' };
      case cp('\\'):
        return this.#escape(at);
      // Nothing to repeat, or brackets JavaScript refuses alone with the u flag.
      case cp('*'):
      case cp('+'):
      case cp('?'):
      case cp('{'):
      case cp('}'):
      case cp(']'):
        return this.#refuse('pattern.syntax', at);
      default:
        return this.#set([c, c]);
    }
  }

  #group(at: number): Node {
    if (this.#peek() === cp('?')) {
      const kind = this.#peek(1);
      if (kind === cp('=') || kind === cp('!')) this.#refuse('pattern.lookaround', at);
      if (kind === cp('<') && (this.#peek(2) === cp('=') || this.#peek(2) === cp('!'))) this.#refuse('pattern.lookaround', at);
      if (kind === cp(':')) this.#i += 2;
      else if (kind === cp('<')) {
        // A named group is a group: the name is only for backreferences, which are refused.
        const rest = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 40));
        const m = /^\?<([A-Za-z_$][\w$]*)>/.exec(rest);
        if (!m) this.#refuse('pattern.syntax', at);
        this.#i += m[0].length;
      } else this.#refuse('pattern.syntax', at);
    }
    const inner = this.#alternation();
    if (this.#peek() !== cp(')')) this.#refuse('pattern.syntax', at); // never closed
    this.#i++;
    // A group may be repeated even around an assertion alone ("(\b)*"), which is an assertion no more.
    return inner.t === 'assert' ? { t: 'cat', items: [inner] } : inner;
  }

  /** An escape outside a class: an assertion, a class escape or one character. */
  #escape(at: number): Node {
    const c = this.#peek();
    if (c === undefined) this.#refuse('pattern.syntax', at);
    if (c === cp('b') || c === cp('B')) {
      this.#i++;
      return { t: 'assert', kind: c === cp('b') ? 'word' : 'nonword' };
    }
    if (c >= cp('1') && c <= cp('9')) this.#refuse('pattern.backreference', at);
    if (c === cp('k')) this.#refuse('pattern.backreference', at);
    const one = this.#classEscape(at, false);
    return one.t === 'set' ? one : this.#set([one.cp, one.cp]);
  }

  /** After a backslash: a class escape (\d, \p{…}) or one code point. `inClass`: \b is a backspace, \- a hyphen. */
  #classEscape(at: number, inClass: boolean): { t: 'set'; set: CharSet } | { t: 'char'; cp: number } {
    const c = this.#cps[this.#i++];
    if (c === undefined) this.#refuse('pattern.syntax', at);
    const ch = String.fromCodePoint(c);
    const set = (ranges: number[], negated: boolean) => this.#set(ranges, negated) as { t: 'set'; set: CharSet };
    switch (ch) {
      case 'd':
      case 'D':
        return set(DIGIT, ch === 'D');
      case 'w':
      case 'W':
        return set(WORD, ch === 'W');
      case 's':
      case 'S':
        return set(SPACE, ch === 'S');
      case 'p':
      case 'P':
        return this.#property(at, ch === 'P');
      case 't':
        return { t: 'char', cp: 0x09 };
      case 'n':
        return { t: 'char', cp: 0x0a };
      case 'r':
        return { t: 'char', cp: 0x0d };
      case 'v':
        return { t: 'char', cp: 0x0b };
      case 'f':
        return { t: 'char', cp: 0x0c };
      case '0':
        if (this.#peek() !== undefined && this.#peek()! >= cp('0') && this.#peek()! <= cp('9')) this.#refuse('pattern.syntax', at);
        return { t: 'char', cp: 0 };
      case 'x':
        return { t: 'char', cp: this.#hex(at, 2) };
      case 'u':
        return { t: 'char', cp: this.#unicodeEscape(at) };
      case 'b':
        if (inClass) return { t: 'char', cp: 0x08 };
        break;
      case '-':
        if (inClass) return { t: 'char', cp: 0x2d };
        break;
    }
    if (SYNTAX_CHARS.has(c)) return { t: 'char', cp: c };
    if (c >= cp('1') && c <= cp('9')) this.#refuse('pattern.backreference', at);
    return this.#refuse('pattern.syntax', at); // an escape JavaScript refuses with the u flag (\a, \c…)
  }

  #hex(at: number, digits: number): number {
    const s = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + digits));
    if (!new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(s)) this.#refuse('pattern.syntax', at);
    this.#i += digits;
    return parseInt(s, 16);
  }

  #unicodeEscape(at: number): number {
    if (this.#peek() !== cp('{')) return this.#hex(at, 4);
    const rest = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 10));
    const m = /^\{([0-9a-fA-F]{1,6})\}/.exec(rest);
    if (!m || parseInt(m[1]!, 16) > 0x10ffff) this.#refuse('pattern.syntax', at);
    this.#i += m[0].length;
    return parseInt(m[1]!, 16);
  }

  /** `\p{…}`: whatever JavaScript accepts, tested on one code point at a time. */
  #property(at: number, negated: boolean): { t: 'set'; set: CharSet } {
    const rest = String.fromCodePoint(...this.#cps.slice(this.#i, this.#i + 60));
    const m = /^\{([A-Za-z_]+(?:=[A-Za-z_]+)?)\}/.exec(rest);
    if (!m) this.#refuse('pattern.syntax', at);
    let re: RegExp;
    try {
      re = new RegExp(`^\\p{${m[1]}}$`, 'u');
    } catch {
      return this.#refuse('pattern.syntax', at);
    }
    this.#i += m[0].length;
    return this.#set([], negated, [re]) as { t: 'set'; set: CharSet };
  }

  #class(): Node {
    const at = this.#i - 1;
    const negated = this.#peek() === cp('^');
    if (negated) this.#i++;
    const ranges: number[] = [];
    const props: RegExp[] = [];
    const parts: CharSet[] = [];
    for (;;) {
      const c = this.#peek();
      if (c === undefined) this.#refuse('pattern.syntax', at); // never closed
      if (c === cp(']')) {
        this.#i++;
        break;
      }
      const lo = this.#classAtom(at);
      if (this.#peek() === cp('-') && this.#peek(1) !== undefined && this.#peek(1) !== cp(']')) {
        this.#i++;
        const hi = this.#classAtom(at);
        // A class escape cannot end a range (u flag), and a range runs upwards.
        if (lo.t !== 'char' || hi.t !== 'char' || lo.cp > hi.cp) this.#refuse('pattern.syntax', at);
        ranges.push(lo.cp, hi.cp);
      } else if (lo.t === 'char') ranges.push(lo.cp, lo.cp);
      else if (lo.set.negated) parts.push(lo.set);
      else {
        ranges.push(...lo.set.ranges);
        props.push(...lo.set.props);
      }
    }
    return this.#set(ranges, negated, props, parts);
  }

  #classAtom(at: number): { t: 'set'; set: CharSet } | { t: 'char'; cp: number } {
    const c = this.#cps[this.#i++]!;
    if (c === cp('\\')) return this.#classEscape(at, true);
    return { t: 'char', cp: c };
  }
}

/** The tree of a pattern, or the first syntax problem (what needs backtracking included). */
export function parseTree(source: string, fold: boolean): { ok: true; tree: Node } | { ok: false; error: PatternError } {
  try {
    return { ok: true, tree: new Parser(source, fold).parse() };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, error: error.error };
    throw error;
  }
}
