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
 * so is a pattern that matches empty text (it would match between every two characters): the
 * syntax and its refusals are pattern-syntax.ts's. Pure.
 */

import {
  cp,
  isWordChar,
  matches,
  parseTree,
  PATTERN_LIMITS,
  type Assertion,
  type CharSet,
  type Node,
  type PatternError,
} from './pattern-syntax.ts';

type PatternResult = { ok: true; value: Pattern } | { ok: false; error: PatternError };

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

/**
 * Parses a pattern and checks it whole: its tree, or the first problem (its length, its syntax,
 * what needs backtracking, an empty match, its compiled size).
 */
function parsePattern(source: string, fold: boolean): { ok: true; tree: Node } | { ok: false; error: PatternError } {
  const length = [...source].length;
  if (length === 0) return { ok: false, error: { identifier: 'pattern.empty', context: {} } };
  if (length > PATTERN_LIMITS.maxChars)
    return { ok: false, error: { identifier: 'pattern.too_long', context: { max: PATTERN_LIMITS.maxChars } } };
  const parsed = parseTree(source, fold);
  if (!parsed.ok) return parsed;
  const tree = parsed.tree;
  if (nullable(tree)) return { ok: false, error: { identifier: 'pattern.matches_empty', context: {} } };
  if (emptyRepeat(tree)) return { ok: false, error: { identifier: 'pattern.empty_repeat', context: {} } };
  if (size(tree) > PATTERN_LIMITS.maxStates)
    return { ok: false, error: { identifier: 'pattern.too_complex', context: { max: PATTERN_LIMITS.maxStates } } };
  return { ok: true, tree };
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

interface PatternOptions {
  /** ASCII letters match in either case (as dictionary words do). Default true. */
  ignoreAsciiCase?: boolean;
}

/** Parses and compiles a pattern, or says why not (the first problem found: pattern-syntax.ts). */
export function compilePattern(source: string, options: PatternOptions = {}): PatternResult {
  const parsed = parsePattern(source, options.ignoreAsciiCase ?? true);
  if (!parsed.ok) return parsed;
  const { insts, start } = compile(parsed.tree);
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
interface PatternMatch {
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
