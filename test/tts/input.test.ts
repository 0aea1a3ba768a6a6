// Every invalid input in the spec's tables is refused locally: zero requests reach the emulator and
// no rate budget is spent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdvancedRequest, StandardRequest } from '../../src/tts/validation.ts';
import { TtsInputError } from '../../src/tts/errors.ts';
import { emulatorFixture, rejection } from './helpers.ts';

let fx: Awaited<ReturnType<typeof emulatorFixture>>;
beforeAll(async () => {
  fx = await emulatorFixture();
});
afterAll(() => fx.emulator.close());

const STD = { voice: 'ja-JP-Wavenet-B', text: 'こんにちは', speed: 1, pitch: 0 };
const ADV = { text: 'これは十分な長さのテキストです' };

const standardCases: [string, unknown, string][] = [
  ['voice missing', { ...STD, voice: undefined }, 'voice_required'],
  ['voice not a string', { ...STD, voice: 3 }, 'voice_required'],
  ['text empty', { ...STD, text: '' }, 'missing_fields'],
  ['text missing', { ...STD, text: undefined }, 'missing_fields'],
  ['speed missing', { ...STD, speed: undefined }, 'missing_fields'],
  ['pitch missing', { ...STD, pitch: undefined }, 'missing_fields'],
  ['speed NaN', { ...STD, speed: Number.NaN }, 'non_finite'],
  ['speed Infinity', { ...STD, speed: Number.POSITIVE_INFINITY }, 'non_finite'],
  ['pitch -Infinity', { ...STD, pitch: Number.NEGATIVE_INFINITY }, 'non_finite'],
];

const advancedCases: [string, unknown, string][] = [
  ['text of 9 characters', { text: '123456789' }, 'validation_error'],
  ['only emoji', { text: '🎉🎉🎉🎉🎉😀😀😀😀😀' }, 'validation_error'],
  ['one character 20 times', { text: 'あ'.repeat(20) }, 'validation_error'],
  ['401 characters on free', { text: 'あい'.repeat(200) + 'う' }, 'text_too_long'],
  ['unknown voice', { ...ADV, voice: 'Nobody' }, 'invalid_voice'],
  ['tone over 100', { ...ADV, tone: 't'.repeat(101) }, 'invalid_request'],
  ['speed 2', { ...ADV, speed: 2 }, 'invalid_speed'],
  ['speed "fast"', { ...ADV, speed: 'fast' }, 'invalid_speed'],
  ['pitch -2', { ...ADV, pitch: -2 }, 'invalid_pitch'],
  ['temperature 0.3', { ...ADV, temperature: 0.3 }, 'invalid_temperature'],
  ['seed 0.5', { ...ADV, seed: 0.5 }, 'invalid_seed'],
  ['seed 2^31', { ...ADV, seed: 2 ** 31 }, 'invalid_seed'],
  ['model "turbo"', { ...ADV, model: 'turbo' }, 'invalid_model'],
];

function assertNothingSent(limiter: { acquires: unknown[] }): void {
  expect(fx.emulator.requests()).toEqual([]);
  expect(limiter.acquires).toEqual([]);
}

describe('standard: refused locally', () => {
  for (const [name, req, code] of standardCases) {
    it(`GIVEN ${name} THEN invalid_input (${code}) and zero requests`, async () => {
      const { client, limiter } = fx.fresh();
      const e = await rejection(client.speak(req as StandardRequest));
      expect(e).toBeInstanceOf(TtsInputError);
      expect(e.code).toBe('invalid_input');
      expect(e.kind).toBe('input');
      expect((e as TtsInputError).issues.map((i) => i.code)).toContain(code);
      assertNothingSent(limiter);
    });
  }
});

describe('advanced: refused locally by createJob and narrate', () => {
  for (const [name, req, code] of advancedCases) {
    it(`GIVEN ${name} THEN invalid_input (${code}) and zero requests`, async () => {
      const { client, limiter } = fx.fresh();
      for (const call of [() => client.createJob(req as AdvancedRequest), () => client.narrate(req as AdvancedRequest)]) {
        const e = await rejection(call());
        expect(e.code).toBe('invalid_input');
        expect((e as TtsInputError).issues.map((i) => i.code)).toContain(code);
      }
      assertNothingSent(limiter);
    });
  }

  it('GIVEN 401 characters on the paid plan THEN it is sent', async () => {
    const { client } = fx.fresh({ plan: 'paid' });
    // The emulator's account is free, so the service refuses it; what matters is that it was sent.
    const e = await rejection(client.createJob({ text: 'あい'.repeat(200) + 'う' }));
    expect(e.code).toBe('text_too_long');
    expect(fx.seen('advanced')).toHaveLength(1);
  });

  it('GIVEN a stored job with an invalid request THEN resumeJob refuses it without polling', async () => {
    const { client, limiter } = fx.fresh();
    const e = await rejection(client.resumeJob({ jobId: 'j', jobToken: 't', createdAt: 0, request: { text: 'short' } }));
    expect(e.code).toBe('invalid_input');
    assertNothingSent(limiter);
  });
});

describe('access token shape (spec: Authentication)', () => {
  for (const [name, token] of [
    ['63 characters', 'a'.repeat(63)],
    ['65 characters', 'a'.repeat(65)],
    ['empty', ''],
    ['with a newline', `${'a'.repeat(63)}\n`],
  ] as const) {
    it(`GIVEN a token of ${name} THEN invalid_input on both endpoints and zero requests`, async () => {
      const { client, limiter } = fx.fresh({ token });
      const e1 = await rejection(client.speak(STD));
      expect((e1 as TtsInputError).issues[0]).toMatchObject({ field: 'token', code: 'token_missing' });
      const e2 = await rejection(client.narrate(ADV));
      expect((e2 as TtsInputError).issues[0]).toMatchObject({ field: 'token', code: 'invalid_token' });
      assertNothingSent(limiter);
    });
  }
});
