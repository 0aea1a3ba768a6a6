import { describe, expect, it } from 'vitest';
import { langOf, t, type MessageKey } from '../../src/i18n/texts.ts';
import en from '../../src/i18n/locales/en.json' with { type: 'json' };
import ja from '../../src/i18n/locales/ja.json' with { type: 'json' };
import { describeFailure } from '../../src/discord/delivery/outcomes.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { TTS_ERROR_CODES, TtsError, TtsInputError, type TtsErrorCode } from '../../src/tts/errors.ts';
import { BudgetRefusedError } from '../../src/billing/errors.ts';
import { validateAdvanced } from '../../src/tts/validation.ts';
import { shownNames, slashCommands } from '../../src/discord/interactions/command.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';

const JAPANESE = /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}]/u;
const placeholders = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('localised messages', () => {
  it('both locale files hold the same keys', () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(ja).sort());
  });

  it.each(Object.keys(ja) as (keyof typeof ja)[])('%s exists in Japanese and English with the same placeholders', (key) => {
    // Each in its own language: Japanese text in ja, and none left untranslated in en.
    expect(ja[key]).toMatch(JAPANESE);
    expect(en[key]).toMatch(/[A-Za-z]{2}/);
    expect(en[key]).not.toMatch(JAPANESE);
    expect(placeholders(ja[key])).toEqual(placeholders(en[key]));
  });

  it('Japanese messages name commands as a Japanese client shows them (/クリア, not /clear)', async () => {
    const shown = shownNames(
      slashCommands((await loadCommands()).values()).map((c) => c.data),
      'ja',
    );
    const english = new Set(slashCommands((await loadCommands()).values()).map((c) => c.data.name));
    const named = Object.entries(ja).flatMap(([key, text]) =>
      [...text.matchAll(/\/([a-z][a-z-]*)/g)]
        .filter((m) => english.has(m[1]!))
        .map((m) => `${key}: /${m[1]} (shown as ${shown[m[1]!.replaceAll('-', '_')]})`),
    );
    expect(named).toEqual([]);
  });

  it("commands' Japanese descriptions name commands as a Japanese client shows them (/参加 says /退出, not /leave)", async () => {
    const commands = slashCommands((await loadCommands()).values()).map((c) => c.data);
    const english = new Set(commands.map((c) => c.name));
    type Described = { name: string; description_localizations?: Record<string, string | null> | null; options?: readonly Described[] };
    const walk = (o: Described, at: string): string[] => [
      ...[...(o.description_localizations?.ja ?? '').matchAll(/\/([a-z][a-z-]*)/g)]
        .filter((m) => english.has(m[1]!))
        .map((m) => `${at}: /${m[1]}`),
      ...(o.options ?? []).flatMap((child) => walk(child, `${at} ${child.name}`)),
    ];
    const descriptions = commands.flatMap((c) => walk(c as Described, `/${c.name}`));
    expect(descriptions).toEqual([]);
    // What the Japanese client shows first: /参加's own description.
    expect(commands.find((c) => c.name === 'join')!.description_localizations!.ja).toContain('/退出');
  });

  it('GIVEN a Discord locale THEN replies use Japanese only for ja', () => {
    expect(langOf('ja')).toBe('ja');
    expect(langOf('en-US')).toBe('en');
    expect(langOf('fr')).toBe('en');
    expect(langOf(undefined)).toBe('en');
  });

  it('fills placeholders and leaves unknown ones visible', () => {
    expect(t('en', 'voice.cleared', { count: 3 })).toBe('Cleared 3 waiting messages.');
    expect(t('ja', 'voice.cleared', {})).toContain('{count}');
  });
});

/** What a member is told for each service code: every code once (the generic message names the code). */
const TOLD: Partial<Record<MessageKey, TtsErrorCode[]>> = {
  'tts.auth': ['token_missing', 'token_mismatch', 'invalid_token', 'client_ip_unresolved', 'service_not_configured', 'user_unavailable'],
  'tts.unsupported_voice': ['voice_required', 'unsupported_voice', 'invalid_voice'],
  'tts.failed': [
    'missing_fields',
    'non_finite',
    'invalid_json',
    'invalid_speed',
    'invalid_pitch',
    'invalid_temperature',
    'invalid_seed',
    'invalid_model',
    'invalid_request',
    'forbidden',
    'not_found',
    'method_not_allowed',
    'aborted',
    'unknown',
  ],
  'tts.rate_limited': ['rate_limited'],
  'tts.transient': [
    'internal_error',
    'unsupported_location',
    'tts_retry_exhausted',
    'job_timeout',
    'enqueue_failed',
    'download_failed',
    'bad_response',
    'network',
    'timeout',
    'job_stuck',
  ],
  'tts.validation_error': ['validation_error'],
  'tts.text_too_long': ['text_too_long'],
  'tts.content_policy_violation': ['content_policy_violation'],
  'tts.quota_exceeded': ['quota_exceeded'],
  'tts.invalid_input': ['invalid_input'],
  'tts.allowance_exhausted': ['allowance_exhausted'],
  'tts.download_refused': ['download_refused'],
  'tts.misconfigured': ['redirect_refused'],
};
const toldFor = new Map(Object.entries(TOLD).flatMap(([key, codes]) => codes.map((code) => [code, key as MessageKey] as const)));

describe('every failure a user can meet has a localised explanation', () => {
  const codes = Object.keys(TTS_ERROR_CODES) as TtsErrorCode[];
  it('the table names every service code once', () => {
    expect(Object.values(TOLD).flat().sort()).toEqual([...codes].sort());
  });

  it.each(codes)('service code %s', (code) => {
    for (const lang of ['ja', 'en'] as const) {
      const text = describeFailure(
        lang,
        new TtsError(code, { message: 'internal detail that must not leak', retryAfterMs: 7000, available: 12 }),
      );
      expect(text).toBe(t(lang, toldFor.get(code)!, { code, details: '', seconds: 7, available: 12, max: '', voice: '' }));
      expect(text).not.toContain('internal detail');
      expect(text).not.toMatch(/\{\w+\}/);
    }
  });

  it('GIVEN rate_limited THEN the wait is given in seconds', () => {
    expect(describeFailure('en', new TtsError('rate_limited', { retryAfterMs: 7000 }))).toContain('7 s');
  });

  it('GIVEN a budget refusal THEN which limit, the numbers and the reset date are given', () => {
    const refusal = { scope: 'user' as const, used: 990, limit: 1000, requested: 20, remaining: 10, resetsAt: Date.UTC(2026, 11, 1) };
    const en = describeFailure('en', new BudgetRefusedError({ refusal, guildId: 'g' }))!;
    expect(en).toContain('990 / 1000');
    expect(en).toContain('Dec 1, 2026');
    expect(describeFailure('ja', new BudgetRefusedError({ refusal: { ...refusal, scope: 'guild' }, guildId: 'g' }))).toContain(
      'このサーバー',
    );
  });

  it("GIVEN invalid input THEN the details say which field, not the validator's English", () => {
    const error = new TtsInputError({ issues: [{ field: 'speed', code: 'invalid_speed', message: 'speed must be between 0.5 and 1.5' }] });
    expect(describeFailure('en', error)).toBe(t('en', 'tts.invalid_input', { details: 'speed' }));
    expect(describeFailure('ja', error)).not.toContain('must be');
  });

  it('GIVEN /narrate text the bot refuses before sending THEN the member reads why in their language, with the limit', () => {
    const refused = (text: string) => {
      const r = validateAdvanced({ text, voice: 'Luna' }, 'free');
      if (r.ok) throw new Error('expected a refusal');
      return new TtsInputError({ issues: r.issues });
    };
    // Mentions and links read as short words can leave fewer than 10 characters.
    expect(describeFailure('ja', refused('  こんにちは  '))).toBe(t('ja', 'tts.validation_error'));
    expect(describeFailure('ja', refused('あいうえお'.repeat(81)))).toBe(t('ja', 'tts.text_too_long', { max: 400 }));
    expect(describeFailure('ja', refused('あいうえお'.repeat(81)))).toContain('400');
    expect(describeFailure('en', refused('  hi  '))).not.toMatch(/characters without surrounding blanks/);
  });

  it('GIVEN a wrapped failure THEN its cause is explained; an unexpected error is not', () => {
    const wrapped = Object.assign(new Error('synthesis failed'), { cause: new TtsError('content_policy_violation') });
    expect(describeFailure('en', wrapped)).toContain('content policy');
    expect(describeFailure('en', new Error('boom'))).toBeNull();
    expect(describeFailure('ja', new UserError('voice.join_first'))).toBe(t('ja', 'voice.join_first'));
  });
});
