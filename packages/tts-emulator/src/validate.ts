import { randomUUID } from 'node:crypto';
import { STANDARD_ERRORS, VALIDATION_MESSAGES, type AdvancedErrorCode, type StandardError } from './messages.ts';

/** What a validator returns: the cleaned value, or why it was refused. */
type Result<T, E> = { ok: true; value: T } | { ok: false; error: E };

/** The 25 advanced voice names (spec: Advanced job creation request). */
export const ADVANCED_VOICES = [
  'Anna',
  'Chloe',
  'Ellis',
  'Emma',
  'Flora',
  'Iris',
  'Lena',
  'Luna',
  'Misa',
  'Ruby',
  'Sophie',
  'Tina',
  'Ash',
  'Chris',
  'Eden',
  'Gray',
  'Hope',
  'Hugo',
  'Kai',
  'Leo',
  'Noah',
  'Reid',
  'Roy',
  'Sam',
  'Yann',
] as const;

/** Spec: Limits. */
const LIMITS = {
  standardSpeed: { min: 0.3, max: 4.0, default: 1.0 },
  standardPitch: { min: -20, max: 20, default: 0 },
  advancedSpeed: { min: 0.5, max: 1.5, default: 1.0 },
  advancedPitch: { min: -1.0, max: 1.0, default: 0.0 },
  seed: { min: -2147483648, max: 2147483647 },
  temperatures: [0, 0.5, 0.7, 1.0],
  textMin: 10,
  textMax: { free: 400, paid: 3000 },
  toneMax: 100,
  repeatRun: 20,
} as const;

/** Number of Unicode code points: the unit in which the service counts characters. */
export function codePointLength(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

const NAN_SENTINEL = `\u0000NaN-${randomUUID()}`;
const STRING_OR_NONFINITE = /"(?:[^"\\]|\\.)*"|-?Infinity|NaN/g;

/**
 * Parses a request body like the service's Python JSON parser does: besides standard JSON it
 * accepts the bare literals NaN, Infinity and -Infinity, so a client sending them reaches the
 * "must be finite" checks instead of a parse error.
 */
export function parseJsonBody(raw: string): Result<unknown, 'invalid_json'> {
  try {
    return { ok: true, value: JSON.parse(raw) };
  } catch {
    // fall through to the lenient parse
  }
  const patched = raw.replace(STRING_OR_NONFINITE, (m) => {
    if (m.startsWith('"')) return m;
    if (m === 'NaN') return JSON.stringify(NAN_SENTINEL);
    return m.startsWith('-') ? '-1e999' : '1e999';
  });
  try {
    return { ok: true, value: JSON.parse(patched, (_k, v: unknown) => (v === NAN_SENTINEL ? NaN : v)) };
  } catch {
    return { ok: false, error: 'invalid_json' };
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

interface StandardRequest {
  voice: string;
  text: string;
  /** Effective speed: out-of-range values replaced by 1.0. */
  speed: number;
  /** Effective pitch: out-of-range values replaced by 0. */
  pitch: number;
}

/**
 * Checks a standard speech request in the order of the spec's error table: voice present, voice
 * known, all four fields present, speed/pitch finite; then replaces out-of-range speed/pitch by
 * their defaults (spec: Standard speech request).
 */
export function validateStandard(body: unknown, voices: ReadonlySet<string>): Result<StandardRequest, StandardError> {
  const b = isObject(body) ? body : {};
  const { voice, text, speed, pitch } = b;
  if (typeof voice !== 'string' || voice === '') return { ok: false, error: STANDARD_ERRORS.voiceRequired };
  if (!voices.has(voice)) return { ok: false, error: STANDARD_ERRORS.unsupportedVoice };
  if (typeof text !== 'string' || text === '' || speed === undefined || speed === null || pitch === undefined || pitch === null) {
    return { ok: false, error: STANDARD_ERRORS.missingField };
  }
  const speedValue = parseFloatLike(speed);
  const pitchValue = parseFloatLike(pitch);
  // Non-numbers, booleans, and the infinities and NaN (from a float parse or a lenient JSON parse) fail here.
  if (speedValue === undefined || pitchValue === undefined || !Number.isFinite(speedValue) || !Number.isFinite(pitchValue)) {
    return { ok: false, error: STANDARD_ERRORS.notFinite };
  }
  const s = LIMITS.standardSpeed;
  const p = LIMITS.standardPitch;
  return {
    ok: true,
    value: {
      voice,
      text,
      speed: speedValue >= s.min && speedValue <= s.max ? speedValue : s.default,
      pitch: pitchValue >= p.min && pitchValue <= p.max ? pitchValue : p.default,
    },
  };
}

/** Python float() syntax: sign, digits (with single underscores between them), point, exponent. */
const FLOAT_STRING = /^[+-]?(?:\d+(?:_\d+)*(?:\.(?:\d+(?:_\d+)*)?)?|\.\d+(?:_\d+)*)(?:[eE][+-]?\d+(?:_\d+)*)?$/;
const SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i;

/**
 * Reads a standard speed or pitch the way a service calling Python's float() on it does: a JSON
 * number as it is, a numeric string parsed ("1.2", " 0 ", "1e1"; the service's official client
 * sends its settings as strings), and "inf"/"nan" parsed to values the finite check then refuses.
 * Anything else (booleans, "fast", "0x10", "") is not a number: undefined.
 */
export function parseFloatLike(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string') return undefined;
  const s = v.trim();
  const special = SPECIAL_FLOAT.exec(s);
  if (special) return special[2]!.toLowerCase() === 'nan' ? Number.NaN : special[1] === '-' ? -Infinity : Infinity;
  // Number() alone would also take "0x10", "0b1" and "" (as 0); the pattern keeps to float() syntax.
  return FLOAT_STRING.test(s) ? Number(s.replaceAll('_', '')) : undefined;
}

interface AdvancedRequest {
  text: string;
  voice: string;
  tone?: string | undefined;
  speed: number;
  pitch: number;
  model?: 'flash' | 'pro' | undefined;
  seed?: number | undefined;
  temperature?: number | undefined;
}

interface AdvancedRules {
  plan: 'free' | 'paid';
  /** Words the content policy blocks (matched case-insensitively in text and tone). */
  blockList: readonly string[];
}

interface AdvancedRefusal {
  code: AdvancedErrorCode;
  /** A more precise message than the code's default, if there is one. */
  message?: string;
}

// eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
const EMOJI_PART = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\p{Regional_Indicator}\u200d\ufe0e\ufe0f\u20e3\s]/u;
const PICTOGRAPH = /[\p{Extended_Pictographic}\p{Regional_Indicator}]/u;

/** True when `text` has at least one emoji and nothing but emoji (and joiners, modifiers, spaces). */
export function isEmojiOnly(text: string): boolean {
  if (!PICTOGRAPH.test(text)) return false;
  for (const ch of text) if (!EMOJI_PART.test(ch)) return false;
  return true;
}

/** True when one code point occurs `run` or more times in a row. */
export function hasRepeatedRun(text: string, run: number = LIMITS.repeatRun): boolean {
  let prev = '';
  let count = 0;
  for (const ch of text) {
    count = ch === prev ? count + 1 : 1;
    prev = ch;
    if (count >= run) return true;
  }
  return false;
}

const ADVANCED_VOICE_SET: ReadonlySet<string> = new Set(ADVANCED_VOICES);

/**
 * Checks an advanced job creation request (spec: Advanced job creation request, Errors). Order:
 * text rules, text length by plan, voice, tone, speed, pitch, temperature, seed, model, content
 * policy. Absent optional fields take their defaults; a present field of the wrong type is an
 * error of that field (null included).
 */
export function validateAdvanced(body: unknown, rules: AdvancedRules): Result<AdvancedRequest, AdvancedRefusal> {
  if (!isObject(body)) return { ok: false, error: { code: 'invalid_json' } };
  const { text, voice, tone, speed, pitch, model, seed, temperature } = body;
  if (typeof text !== 'string') return { ok: false, error: { code: 'validation_error', message: VALIDATION_MESSAGES.short } };
  // Surrounding blanks do not count towards the minimum: ten spaces are not a text.
  if (codePointLength(text.trim()) < LIMITS.textMin) {
    return { ok: false, error: { code: 'validation_error', message: VALIDATION_MESSAGES.short } };
  }
  if (isEmojiOnly(text)) return { ok: false, error: { code: 'validation_error', message: VALIDATION_MESSAGES.emoji } };
  if (hasRepeatedRun(text)) return { ok: false, error: { code: 'validation_error', message: VALIDATION_MESSAGES.repeated } };
  const max = LIMITS.textMax[rules.plan];
  if (codePointLength(text) > max) {
    return { ok: false, error: { code: 'text_too_long', message: `テキストが長すぎます（最大${max}文字）。` } };
  }
  if (voice !== undefined && (typeof voice !== 'string' || !ADVANCED_VOICE_SET.has(voice))) {
    return { ok: false, error: { code: 'invalid_voice' } };
  }
  // The spec has no code for a bad tone; it is "other input" (invalid_request).
  if (tone !== undefined && (typeof tone !== 'string' || codePointLength(tone) > LIMITS.toneMax)) {
    return { ok: false, error: { code: 'invalid_request', message: `toneは${LIMITS.toneMax}文字以内で指定してください。` } };
  }
  const sp = LIMITS.advancedSpeed;
  if (speed !== undefined && !inRange(speed, sp.min, sp.max)) return { ok: false, error: { code: 'invalid_speed' } };
  const pp = LIMITS.advancedPitch;
  if (pitch !== undefined && !inRange(pitch, pp.min, pp.max)) return { ok: false, error: { code: 'invalid_pitch' } };
  if (temperature !== undefined && !(typeof temperature === 'number' && (LIMITS.temperatures as readonly number[]).includes(temperature))) {
    return { ok: false, error: { code: 'invalid_temperature' } };
  }
  if (seed !== undefined && !(Number.isInteger(seed) && inRange(seed, LIMITS.seed.min, LIMITS.seed.max))) {
    return { ok: false, error: { code: 'invalid_seed' } };
  }
  if (model !== undefined && model !== 'flash' && model !== 'pro') return { ok: false, error: { code: 'invalid_model' } };
  if (isBlocked(text, rules.blockList) || (typeof tone === 'string' && isBlocked(tone, rules.blockList))) {
    return { ok: false, error: { code: 'content_policy_violation' } };
  }
  return {
    ok: true,
    value: {
      text,
      voice: typeof voice === 'string' ? voice : 'Ruby',
      tone: typeof tone === 'string' ? tone : undefined,
      speed: typeof speed === 'number' ? speed : sp.default,
      pitch: typeof pitch === 'number' ? pitch : pp.default,
      model: model === 'flash' || model === 'pro' ? model : undefined,
      seed: typeof seed === 'number' ? seed : undefined,
      temperature: typeof temperature === 'number' ? temperature : undefined,
    },
  };
}

function inRange(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isFinite(v) && v >= min && v <= max;
}

function isBlocked(text: string, blockList: readonly string[]): boolean {
  const lower = text.toLowerCase();
  return blockList.some((w) => w !== '' && lower.includes(w.toLowerCase()));
}
