/**
 * Patterns that admins and members write (a filter, a dictionary entry written `r/…/`): a checked
 * subset of JavaScript's regular expressions, compiled to a Thompson NFA and run as a Pike VM (one
 * pass over the text holding every live state at once, as RE2 does), so one search costs at most
 * the text's length times the pattern's compiled size, whatever the pattern. Nothing backtracks:
 * `(a+)+$` on thirty a's and a b costs what `a+` costs.
 *
 * What a pattern means is JavaScript's with the `u` flag (the leftmost match; of the alternatives
 * and repetitions, the one a backtracking engine would try first), ASCII letters matched in either
 * case. What only backtracking can do (backreferences, lookaround, an empty iteration of a
 * repetition failing) is refused, as is anything else outside the subset, each with its reason, and
 * so is a pattern that matches empty text (it would match between every two characters). Pure; the identifiers are i18n keys (src/i18n/locales).
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

export type PatternResult = { ok: true; value: Pattern } | { ok: false; error: PatternError };

// ---- character sets ----

/** A set of code points: ranges and Unicode properties (each tested on one code point, so in constant time), maybe negated. */
interface CharSet {
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

function matches(set: CharSet, cp: number): boolean {
  let found = inSet(set, cp);
  // Either case of an ASCII letter: the set's members, then negation (as `[^a]` with the i flag refuses "A").
  if (!found && set.fold && ((cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a))) found = inSet(set, cp ^ 0x20);
  return found !== set.negated;
}

const isWordChar = (cp: number) => (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || (cp >= 0x61 && cp <= 0x7a);

// ---- the syntax tree ----

type Assertion = 'start' | 'end' | 'word' | 'nonword';
type Node =
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
const cp = (c: string) => c.codePointAt(0)!;

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

// ---- what a tree matches ----

/** Whether a tree can match empty text (assertions consume nothing). */
function nullable(n: Node): boolean {
  switch (n.t) {
    case 'set':
      return false;
    case 'cat':
      return n.items.every(nullable);
    case 'alt':
      return n.items.some(nullable);
    case 'rep':
      return n.min === 0 || nullable(n.node);
    case 'assert':
    case 'empty':
      return true;
  }
}

/**
 * Whether a repetition past its minimum repeats something that can match empty text (`(a*)*`,
 * `(b|)+`, `(\b)?`). JavaScript fails such an empty iteration and tries the next choice, which a
 * machine without memory of where an iteration began cannot do; refused, so that what is accepted
 * means what it means in JavaScript.
 */
function emptyRepeat(n: Node): boolean {
  switch (n.t) {
    case 'cat':
    case 'alt':
      return n.items.some(emptyRepeat);
    case 'rep':
      return (n.max > n.min && nullable(n.node)) || emptyRepeat(n.node);
    default:
      return false;
  }
}

/** How many instructions a tree compiles to (saturating above the limit, so `(a{100}){100}` is refused before it is built). */
function size(n: Node): number {
  const cap = PATTERN_LIMITS.maxStates + 1;
  switch (n.t) {
    case 'set':
    case 'assert':
      return 1;
    case 'empty':
      return 0;
    case 'cat':
      return Math.min(
        cap,
        n.items.reduce((s, x) => s + size(x), 0),
      );
    case 'alt':
      return Math.min(cap, n.items.reduce((s, x) => s + size(x), 0) + n.items.length - 1);
    case 'rep': {
      const s = size(n.node);
      const copies = n.max === Infinity ? n.min * s + s + 1 : n.min * s + (n.max - n.min) * (s + 1);
      return Math.min(cap, copies);
    }
  }
}

// ---- the program ----

const CHAR = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;

interface Inst {
  op: typeof CHAR | typeof SPLIT | typeof ASSERT | typeof MATCH;
  /** CHAR, ASSERT: the next instruction; SPLIT: the preferred one. */
  x: number;
  /** SPLIT: the other one. */
  y: number;
  set?: CharSet;
  kind?: Assertion;
}

/** A compiled pattern. */
export interface Pattern {
  /** As written (after NFKC), for listing. */
  readonly source: string;
  readonly insts: readonly Inst[];
  readonly start: number;
}

/** Compiles a tree so that each instruction knows its successor (built back to front, loops patched). */
function compile(root: Node): { insts: Inst[]; start: number } {
  const insts: Inst[] = [{ op: MATCH, x: -1, y: -1 }];
  const push = (inst: Inst) => insts.push(inst) - 1;
  const comp = (n: Node, next: number): number => {
    switch (n.t) {
      case 'set':
        return push({ op: CHAR, x: next, y: -1, set: n.set });
      case 'assert':
        return push({ op: ASSERT, x: next, y: -1, kind: n.kind });
      case 'empty':
        return next;
      case 'cat': {
        let cur = next;
        for (let i = n.items.length - 1; i >= 0; i--) cur = comp(n.items[i]!, cur);
        return cur;
      }
      case 'alt': {
        const entries = n.items.map((item) => comp(item, next));
        let cur = entries[entries.length - 1]!;
        for (let i = entries.length - 2; i >= 0; i--) cur = push({ op: SPLIT, x: entries[i]!, y: cur });
        return cur;
      }
      case 'rep': {
        let cur: number;
        if (n.max === Infinity) {
          const loop = push({ op: SPLIT, x: -1, y: -1 });
          const body = comp(n.node, loop);
          insts[loop]!.x = n.greedy ? body : next;
          insts[loop]!.y = n.greedy ? next : body;
          cur = loop;
        } else {
          // x{0,k} nested as (x(x(x)?)?)?: skipping an optional copy skips the rest, as backtracking does.
          cur = next;
          for (let k = 0; k < n.max - n.min; k++) {
            const body = comp(n.node, cur);
            cur = push({ op: SPLIT, x: n.greedy ? body : next, y: n.greedy ? next : body });
          }
        }
        for (let k = 0; k < n.min; k++) cur = comp(n.node, cur);
        return cur;
      }
    }
  };
  const start = comp(root, 0);
  return { insts, start };
}

export interface PatternOptions {
  /** ASCII letters match in either case (as dictionary words do). Default true. */
  ignoreAsciiCase?: boolean;
}

/** Parses and compiles a pattern, or says why not (the first problem found). */
export function compilePattern(source: string, options: PatternOptions = {}): PatternResult {
  const length = [...source].length;
  if (length === 0) return { ok: false, error: { identifier: 'pattern.empty', context: {} } };
  if (length > PATTERN_LIMITS.maxChars)
    return { ok: false, error: { identifier: 'pattern.too_long', context: { max: PATTERN_LIMITS.maxChars } } };
  let tree: Node;
  try {
    tree = new Parser(source, options.ignoreAsciiCase ?? true).parse();
  } catch (error) {
    if (error instanceof Refused) return { ok: false, error: error.error };
    throw error;
  }
  if (nullable(tree)) return { ok: false, error: { identifier: 'pattern.matches_empty', context: {} } };
  if (emptyRepeat(tree)) return { ok: false, error: { identifier: 'pattern.empty_repeat', context: {} } };
  if (size(tree) > PATTERN_LIMITS.maxStates)
    return { ok: false, error: { identifier: 'pattern.too_complex', context: { max: PATTERN_LIMITS.maxStates } } };
  const { insts, start } = compile(tree);
  return { ok: true, value: Object.freeze({ source, insts: Object.freeze(insts), start }) };
}

/** A pattern matching `word` as written (ASCII letters in either case), whole where it starts or ends with a letter or digit. */
export function literalPattern(word: string, options: { wholeAsciiWords?: boolean } = {}): Pattern {
  const cps = [...word].map(cp);
  const set = (ranges: number[]): Node => ({ t: 'set', set: { ranges, props: [], parts: [], negated: false, fold: true } });
  // An empty word matches nothing (an empty pattern would match everywhere).
  const items: Node[] = cps.length === 0 ? [set([])] : cps.map((c) => set([c, c]));
  if (options.wholeAsciiWords ?? true) {
    if (cps.length > 0 && isWordChar(cps[0]!)) items.unshift({ t: 'assert', kind: 'word' });
    if (cps.length > 0 && isWordChar(cps[cps.length - 1]!)) items.push({ t: 'assert', kind: 'word' });
  }
  const { insts, start } = compile({ t: 'cat', items });
  return Object.freeze({ source: word, insts: Object.freeze(insts), start });
}

// ---- matching ----

/** One match: where (UTF-16 offsets, `end` exclusive) and which pattern of the list. */
export interface PatternMatch {
  start: number;
  end: number;
  /** Index of the matching pattern in the list searched. */
  pattern: number;
}

/** The code point ending at `pos` (-1 at the start). */
function codePointBefore(text: string, pos: number): number {
  if (pos <= 0) return -1;
  const lo = text.charCodeAt(pos - 1);
  if (lo >= 0xdc00 && lo <= 0xdfff && pos >= 2) {
    const hi = text.charCodeAt(pos - 2);
    if (hi >= 0xd800 && hi <= 0xdbff) return (hi - 0xd800) * 0x400 + (lo - 0xdc00) + 0x10000;
  }
  return lo;
}

function holds(kind: Assertion, text: string, pos: number): boolean {
  switch (kind) {
    case 'start':
      return pos === 0;
    case 'end':
      return pos === text.length;
    case 'word':
    case 'nonword': {
      const before = isWordChar(codePointBefore(text, pos));
      const after = pos < text.length && isWordChar(text.codePointAt(pos)!);
      return (before !== after) === (kind === 'word');
    }
  }
}

/** Steps (threads moved over one character) one scan may take per character and instruction before it stops waiting for longer matches. */
const STEP_FACTOR = 4;

/**
 * Several patterns searched together, in order of precedence: a Pike VM whose thread list holds
 * (pattern, instruction) pairs in priority order, each pair at most once per position, so a search
 * costs at most the text's length times the patterns' instructions together.
 */
export class PatternScanner {
  readonly #patterns: readonly Pattern[];
  /** Where each pattern's instructions start in the shared numbering. */
  readonly #base: number[] = [];
  readonly #total: number;
  // Thread lists (pattern, instruction, start), and per shared instruction the generation that last added it.
  #cur: { p: Int32Array; pc: Int32Array; start: Int32Array; n: number };
  #next: { p: Int32Array; pc: Int32Array; start: Int32Array; n: number };
  readonly #mark: Uint32Array;
  #gen = 0;
  readonly #stack: Int32Array;
  /** Thread steps taken by the scans of this scanner (for the tests' cost checks). */
  steps = 0;

  constructor(patterns: readonly Pattern[]) {
    this.#patterns = patterns;
    let total = 0;
    for (const p of patterns) {
      this.#base.push(total);
      total += p.insts.length;
    }
    this.#total = total;
    const list = () => ({ p: new Int32Array(total), pc: new Int32Array(total), start: new Int32Array(total), n: 0 });
    this.#cur = list();
    this.#next = list();
    this.#mark = new Uint32Array(total);
    this.#stack = new Int32Array(total * 2 + 2);
  }

  /** The instructions of all the patterns together. */
  get size(): number {
    return this.#total;
  }

  /** Adds the thread (p, pc) started at `start` to `list` at position `pos`, following splits and assertions in priority order. */
  #add(
    list: { p: Int32Array; pc: Int32Array; start: Int32Array; n: number },
    p: number,
    pc0: number,
    start: number,
    text: string,
    pos: number,
  ) {
    const insts = this.#patterns[p]!.insts;
    const base = this.#base[p]!;
    const stack = this.#stack;
    let top = 0;
    stack[top++] = pc0;
    while (top > 0) {
      const pc = stack[--top]!;
      if (this.#mark[base + pc] === this.#gen) continue;
      this.#mark[base + pc] = this.#gen;
      const inst = insts[pc]!;
      if (inst.op === SPLIT) {
        stack[top++] = inst.y;
        stack[top++] = inst.x; // the preferred branch first
      } else if (inst.op === ASSERT) {
        if (holds(inst.kind!, text, pos)) stack[top++] = inst.x;
      } else {
        list.p[list.n] = p;
        list.pc[list.n] = pc;
        list.start[list.n] = start;
        list.n++;
      }
    }
  }

  /**
   * The leftmost match in `text` within [from, to) (assertions see the whole text): of the matches
   * starting there, the one the first pattern in order, then a backtracking engine, would pick.
   * With `earliest`, the first match to end (used once a scan has run long: see `all`).
   */
  first(text: string, from = 0, to = text.length, earliest = false): PatternMatch | undefined {
    if (this.#total === 0) return undefined;
    let cur = this.#cur;
    let next = this.#next;
    cur.n = 0;
    this.#gen++;
    let found: PatternMatch | undefined;
    let pos = from;
    for (;;) {
      if (!found && pos < to) for (let p = 0; p < this.#patterns.length; p++) this.#add(cur, p, this.#patterns[p]!.start, pos, text, pos);
      const atEnd = pos >= to;
      if (cur.n === 0) {
        if (found || atEnd) break;
        pos += text.codePointAt(pos)! > 0xffff ? 2 : 1;
        this.#gen++;
        continue;
      }
      const c = atEnd ? -1 : text.codePointAt(pos)!;
      const width = c > 0xffff ? 2 : 1;
      this.#gen++;
      next.n = 0;
      this.steps += cur.n;
      for (let k = 0; k < cur.n; k++) {
        const p = cur.p[k]!;
        const inst = this.#patterns[p]!.insts[cur.pc[k]!]!;
        if (inst.op === MATCH) {
          // Every thread after this one has a lower priority: cut. Those before it may still match longer.
          found = { start: cur.start[k]!, end: pos, pattern: p };
          if (earliest) return found;
          break;
        }
        if (!atEnd && matches(inst.set!, c)) this.#add(next, p, inst.x, cur.start[k]!, text, pos + width);
      }
      if (atEnd) break;
      [cur, next] = [next, cur];
      pos += width;
    }
    this.#cur = cur;
    this.#next = next;
    return found;
  }

  /** Whether any pattern matches anywhere in [from, to). */
  test(text: string, from = 0, to = text.length): boolean {
    return this.first(text, from, to, true) !== undefined;
  }

  /**
   * Every match in [from, to), left to right, none overlapping (as String.prototype.matchAll finds
   * them). One search is linear, but a search may follow a preferred alternative far past the match
   * it ends with (`a.*z|a` on "aaaa…"), and doing so for every match would be quadratic: once the
   * scans together have taken STEP_FACTOR steps per character and instruction, the rest of the
   * text is searched for the earliest-ending matches, which is linear overall.
   */
  all(text: string, from = 0, to = text.length): PatternMatch[] {
    const found: PatternMatch[] = [];
    const budget = STEP_FACTOR * Math.max(to - from + 1, 256) * Math.max(this.#total, 1);
    const before = this.steps;
    let pos = from;
    while (pos < to) {
      const m = this.first(text, pos, to, this.steps - before > budget);
      if (!m) break;
      found.push(m);
      pos = m.end > pos ? m.end : pos + 1;
    }
    return found;
  }
}
