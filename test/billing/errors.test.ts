import { describe, expect, it } from 'vitest';
import { BillingError, BudgetError, BudgetRefusedError, type BillingErrorCode } from '../../src/billing/errors.ts';

// One row per code: [code, the class a caller sees for it].
const TABLE: [BillingErrorCode, string][] = [
  ['budget_refused', 'BudgetRefusedError'],
  ['invalid_charge', 'BudgetError'],
];

describe('billing errors', () => {
  it('the table covers every code, each with its own default message', () => {
    expect(TABLE.map(([code]) => code).sort()).toEqual(Object.keys(BillingError.messages).sort());
    expect(new Set(Object.values(BillingError.messages)).size).toBe(TABLE.length);
  });

  it.each(TABLE)('GIVEN code %s THEN a BillingError with that code, its default message, the guild and the cause', (code) => {
    const cause = new Error('underneath');
    const error = new BillingError(code, { guildId: 'g1', cause });
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'BillingError', code, guildId: 'g1', message: BillingError.messages[code] });
    expect(error.cause).toBe(cause);
    expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('GIVEN a refusal THEN BudgetRefusedError carries its numbers in the message and as data', () => {
    const refusal = {
      scope: 'user' as const,
      guildId: 'g1',
      userId: 'u1',
      used: 90,
      limit: 100,
      requested: 20,
      remaining: 10,
      resetsAt: 5,
    };
    const error = new BudgetRefusedError({ refusal, guildId: 'g1' });
    expect(error).toBeInstanceOf(BillingError);
    expect(error).toMatchObject({ name: 'BudgetRefusedError', code: 'budget_refused', guildId: 'g1', refusal });
    expect(error.message).toBe('character allowance exceeded (user: 90+20 > 100)');
  });

  it('GIVEN a bad charge THEN BudgetError has the fixed code and the given detail', () => {
    const error = new BudgetError({ message: 'guildId and userId are required' });
    expect(error).toBeInstanceOf(BillingError);
    expect(error).toMatchObject({
      name: 'BudgetError',
      code: 'invalid_charge',
      message: 'guildId and userId are required',
      guildId: undefined,
    });
    expect(new BudgetError().message).toBe(BillingError.messages.invalid_charge);
  });
});
