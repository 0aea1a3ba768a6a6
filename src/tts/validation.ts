/**
 * Local validation mirroring the service's rules (spec: Resources and their fields, Limits), so a
 * request the service would refuse is refused before any network call and before any rate budget
 * is spent. Validators are pure and return a result; they never throw. Each issue's `code` is the
 * code the service would have answered with, so a local refusal reads like a remote one.
 */
import { z } from 'zod';
import { countChars, splitChars } from './chars.ts';

export type Plan = 'free' | 'paid';

/** The advanced voices with a female name (spec: Advanced voice names). */
export const ADVANCED_FEMALE_VOICES = [
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
] as const;
/** The advanced voices with a male name (spec: Advanced voice names). */
export const ADVANCED_MALE_VOICES = [
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
/** The 25 advanced voices (spec: Advanced voice names). Female first, then male. */
export const ADVANCED_VOICES = [...ADVANCED_FEMALE_VOICES, ...ADVANCED_MALE_VOICES] as const;
export type AdvancedVoice = (typeof ADVANCED_VOICES)[number];

const ADVANCED_MODELS = ['flash', 'pro'] as const;
type AdvancedModel = (typeof ADVANCED_MODELS)[number];

/** Allowed `temperature` values (spec: Advanced job creation request). */
const ADVANCED_TEMPERATURES = [0, 0.5, 0.7, 1.0] as const;

/** Limits from the spec's Limits table. */
export const LIMITS = {
  advancedTextMin: 10,
  advancedTextMax: { free: 400, paid: 3000 },
  toneMax: 100,
  repeatRun: 20,
  advancedSpeed: { min: 0.5, max: 1.5 },
  advancedPitch: { min: -1, max: 1 },
  standardSpeed: { min: 0.3, max: 4.0, default: 1.0 },
  standardPitch: { min: -20, max: 20, default: 0 },
  int32: { min: -2147483648, max: 2147483647 },
  tokenLength: 64,
} as const;

export interface StandardRequest {
  voice: string;
  text: string;
  speed: number;
  pitch: number;
}

export interface AdvancedRequest {
  text: string;
  voice?: AdvancedVoice;
  tone?: string;
  speed?: number;
  pitch?: number;
  model?: AdvancedModel;
  seed?: number;
  temperature?: number;
}

export interface ValidationIssue {
  /** The request field at fault (`text`, `speed`, ...; `token` for the access token). */
  field: string;
  /** The code the service would answer with (`validation_error`, `invalid_speed`, ...). */
  code: string;
  message: string;
  /** `text_too_long`: the most characters the plan allows (shown to the member). */
  max?: number;
}

type ValidationResult<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

// Emoji-only text is refused by the service (spec: validation_error). Emoji here: pictographs,
// regional indicators, and the joiners/modifiers that build sequences; keycaps (1️⃣) are removed
// first because their base digits are not pictographs.
const KEYCAP = /[0-9#*]\uFE0F?\u20E3/gu;
const EMOJI_PART =
  // eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
  /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}|[\u200D\uFE0E\uFE0F\u20E3]|[\u{E0020}-\u{E007F}])$/u;
const EMOJI_BASE = /\p{Extended_Pictographic}|\p{Regional_Indicator}/u;

/** True when `text` has emoji and nothing but emoji and whitespace. */
export function isOnlyEmoji(text: string): boolean {
  const hadKeycap = KEYCAP.test(text);
  KEYCAP.lastIndex = 0;
  const rest = text.replace(KEYCAP, '').replace(/\s+/gu, '');
  if (rest === '') return hadKeycap;
  return EMOJI_BASE.test(rest) && splitChars(rest).every((ch) => EMOJI_PART.test(ch));
}

/** Length of the longest run of one repeated character (code point). */
function longestRun(text: string): number {
  let best = 0;
  let run = 0;
  let prev: string | undefined;
  for (const ch of text) {
    run = ch === prev ? run + 1 : 1;
    prev = ch;
    if (run > best) best = run;
  }
  return best;
}

function issue(ctx: z.RefinementCtx, code: string, message: string, max?: number): void {
  ctx.addIssue({ code: 'custom', message, params: max === undefined ? { code } : { code, max } });
}

function advancedTextSchema(plan: Plan) {
  const max = LIMITS.advancedTextMax[plan];
  return z.string({ error: 'text must be a string' }).superRefine((text, ctx) => {
    const n = countChars(text);
    // Surrounding blanks do not count towards the minimum (ten spaces are not a text).
    const meaningful = countChars(text.trim());
    if (meaningful < LIMITS.advancedTextMin) {
      issue(
        ctx,
        'validation_error',
        `text has ${meaningful} characters without surrounding blanks; at least ${LIMITS.advancedTextMin} are required`,
      );
    }
    if (n > max) issue(ctx, 'text_too_long', `text has ${n} characters; the ${plan} plan allows at most ${max}`, max);
    if (n > 0 && isOnlyEmoji(text)) issue(ctx, 'validation_error', 'text must not consist only of emoji');
    const run = longestRun(text);
    if (run >= LIMITS.repeatRun) {
      issue(ctx, 'validation_error', `text repeats one character ${run} times in a row (limit ${LIMITS.repeatRun - 1})`);
    }
  });
}

function advancedSchema(plan: Plan) {
  const { advancedSpeed: sp, advancedPitch: pi, int32 } = LIMITS;
  return z.object({
    text: advancedTextSchema(plan),
    voice: z.enum(ADVANCED_VOICES, { error: 'voice must be one of the 25 advanced voices' }).optional(),
    tone: z
      .string({ error: 'tone must be a string' })
      .refine((t) => countChars(t) <= LIMITS.toneMax, { error: `tone must be at most ${LIMITS.toneMax} characters` })
      .optional(),
    speed: z
      .number({ error: 'speed must be a finite number' })
      .min(sp.min, { error: `speed must be at least ${sp.min}` })
      .max(sp.max, { error: `speed must be at most ${sp.max}` })
      .optional(),
    pitch: z
      .number({ error: 'pitch must be a finite number' })
      .min(pi.min, { error: `pitch must be at least ${pi.min}` })
      .max(pi.max, { error: `pitch must be at most ${pi.max}` })
      .optional(),
    model: z.enum(ADVANCED_MODELS, { error: 'model must be flash or pro' }).optional(),
    seed: z
      .int({ error: 'seed must be an integer' })
      .min(int32.min, { error: 'seed must be an int32' })
      .max(int32.max, { error: 'seed must be an int32' })
      .optional(),
    temperature: z
      .number({ error: 'temperature must be a number' })
      .refine((t) => (ADVANCED_TEMPERATURES as readonly number[]).includes(t), { error: 'temperature must be one of 0, 0.5, 0.7, 1.0' })
      .optional(),
  });
}

const ADVANCED_SCHEMAS: Record<Plan, ReturnType<typeof advancedSchema>> = {
  free: advancedSchema('free'),
  paid: advancedSchema('paid'),
};

// The code the service answers with for a problem in each advanced field (spec: Errors).
const ADVANCED_FIELD_CODES: Record<string, string> = {
  text: 'validation_error',
  voice: 'invalid_voice',
  tone: 'invalid_request',
  speed: 'invalid_speed',
  pitch: 'invalid_pitch',
  model: 'invalid_model',
  seed: 'invalid_seed',
  temperature: 'invalid_temperature',
};

const STANDARD_SCHEMA = z.object({
  voice: z.string({ error: 'voice is required and must be a string' }).min(1, { error: 'voice must not be empty' }),
  text: z.string({ error: 'text is required and must be a string' }).min(1, { error: 'text must not be empty' }),
  speed: z.number({ error: 'speed is required and must be a finite number' }),
  pitch: z.number({ error: 'pitch is required and must be a finite number' }),
});

function toIssues(error: z.ZodError, codeFor: (field: string) => string): ValidationIssue[] {
  return error.issues.map((i) => {
    const field = i.path.length > 0 ? String(i.path[0]) : 'request';
    const params = (i as { params?: { code?: unknown; max?: unknown } }).params;
    const code = typeof params?.code === 'string' ? params.code : codeFor(field);
    return { field, code, message: i.message, ...(typeof params?.max === 'number' ? { max: params.max } : {}) };
  });
}

function notAnObject(code: string): ValidationResult<never> {
  return { ok: false, issues: [{ field: 'request', code, message: 'request must be an object' }] };
}

/** Validates a standard request (spec: Standard speech request); out-of-range speed/pitch pass. */
export function validateStandard(req: unknown): ValidationResult<StandardRequest> {
  if (typeof req !== 'object' || req === null) return notAnObject('missing_fields');
  const r = STANDARD_SCHEMA.safeParse(req);
  if (r.success) return { ok: true, value: r.data };
  const raw = req as Record<string, unknown>;
  return {
    ok: false,
    issues: toIssues(r.error, (field) => {
      // The service's message for each case (spec: Errors / Standard endpoint).
      if (field === 'voice') return 'voice_required';
      // Present but not a finite number (NaN, Infinity, a string) vs absent.
      if ((field === 'speed' || field === 'pitch') && raw[field] !== undefined && raw[field] !== null) return 'non_finite';
      return 'missing_fields';
    }),
  };
}

/** Validates an advanced job request for `plan` (spec: Advanced job creation request). */
export function validateAdvanced(req: unknown, plan: Plan): ValidationResult<AdvancedRequest> {
  if (typeof req !== 'object' || req === null) return notAnObject('invalid_request');
  const r = ADVANCED_SCHEMAS[plan].safeParse(req);
  if (r.success) {
    // Keep only the fields that were given, so the body sent carries no `undefined` keys.
    const value = { ...r.data };
    for (const k of Object.keys(value) as (keyof typeof value)[]) if (value[k] === undefined) delete value[k];
    return { ok: true, value: value as AdvancedRequest };
  }
  return { ok: false, issues: toIssues(r.error, (field) => ADVANCED_FIELD_CODES[field] ?? 'invalid_request') };
}

/** Validates the access token's shape (spec: Authentication 1-2: 64 characters, sent as a header). */
export function validateToken(token: unknown): ValidationResult<string> {
  if (typeof token === 'string' && token.length === LIMITS.tokenLength && /^[\x21-\x7e]+$/.test(token)) {
    return { ok: true, value: token };
  }
  // The message never echoes the token, not even its length.
  return {
    ok: false,
    issues: [{ field: 'token', code: 'token_missing', message: 'the access token must be 64 visible ASCII characters' }],
  };
}

/** What the service will actually use for a standard speed/pitch: out of range becomes the default. */
export function standardEffective(field: 'speed' | 'pitch', value: number): number {
  const lim = field === 'speed' ? LIMITS.standardSpeed : LIMITS.standardPitch;
  return value < lim.min || value > lim.max ? lim.default : value;
}
