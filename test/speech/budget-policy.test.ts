import { describe, expect, it } from 'vitest';
import { refundable, settleMaybeCharged, settleStale, type Charge, type ScopeUsage } from '../../src/billing/ledger.ts';
import {
  appliedLimit,
  billingPeriod,
  chargeProblem,
  refusalFor,
  serverChargeUser,
  toUsage,
  type BudgetLimits,
} from '../../src/billing/policy.ts';

const DAY = 86_400_000;
const LIMITS: BudgetLimits = { userMonthlyLimit: 100, guildMonthlyLimit: 250, accountMonthlyLimit: 400 };
const std = (userId: string, chars: number, guildId = 'g1'): Charge => ({ guildId, userId, endpoint: 'standard', chars });

/** Usage read from plain numbers: members as `g1/u1`, guilds by id, the account. */
function usage(used: { users?: Record<string, number>; guilds?: Record<string, number>; account?: number } = {}): ScopeUsage {
  return {
    user: (g, u) => used.users?.[`${g}/${u}`] ?? 0,
    guild: (g) => used.guilds?.[g] ?? 0,
    account: () => used.account ?? 0,
  };
}

const refusal = (charges: Charge[], used: ScopeUsage, limitsOf: (guildId: string) => BudgetLimits = () => LIMITS) =>
  refusalFor({ charges, usage: used, limitsOf, accountLimit: LIMITS.accountMonthlyLimit, resetsAt: 777 });

describe('billingPeriod', () => {
  it('GIVEN an anchor THEN periods are windows of periodMs from it, before and after', () => {
    expect(billingPeriod(1_000 + 3 * DAY, 1_000, 30 * DAY)).toEqual({ start: 1_000, end: 1_000 + 30 * DAY });
    expect(billingPeriod(1_000 + 30 * DAY, 1_000, 30 * DAY)).toEqual({ start: 1_000 + 30 * DAY, end: 1_000 + 60 * DAY });
    expect(billingPeriod(999, 1_000, 30 * DAY)).toEqual({ start: 1_000 - 30 * DAY, end: 1_000 });
  });
});

describe('chargeProblem', () => {
  it.each([
    [[std('u1', -1)], 'chars must be a non-negative integer (got -1)'],
    [[std('u1', 1.5)], 'chars must be a non-negative integer (got 1.5)'],
    [[std('', 1)], 'guildId and userId are required'],
    [[{ ...std('u1', 1), endpoint: 'poll' as never }], 'unknown endpoint poll'],
    [[{ ...std('u1', 5), channels: [{ channelId: 'c1', chars: 2 }] }], 'channel parts must sum to the charge (got 2 of 5)'],
    [[{ ...std('u1', 5), channels: [{ channelId: '', chars: 5 }] }], 'channel parts need an id and chars'],
  ])('GIVEN %j THEN %s', (charges, problem) => {
    expect(chargeProblem(charges)).toBe(problem);
  });

  it('GIVEN well-formed charges, zero characters included THEN no problem', () => {
    expect(chargeProblem([std('u1', 0), { ...std('u2', 5), endpoint: 'advanced' }])).toBeUndefined();
    const split = [
      { channelId: 'c1', chars: 3 },
      { channelId: 'c2', chars: 2 },
    ];
    expect(chargeProblem([{ ...std('u1', 5), channels: split }])).toBeUndefined();
  });
});

describe('refusalFor', () => {
  it("GIVEN the server's own clip (announcement, notice) THEN no member limit applies, only the server's and the account's", () => {
    const server = std(serverChargeUser('g1'), 150);
    expect(refusal([server], usage())).toBeUndefined(); // 150 is over a member's 100
    expect(refusal([server], usage({ guilds: { g1: 200 } }))).toMatchObject({ scope: 'guild', guildId: 'g1', requested: 150 });
    // Merged with a member's message: the member is still held to their own limit.
    expect(refusal([server, std('u1', 101)], usage())).toMatchObject({ scope: 'user', userId: 'u1', requested: 101 });
  });

  it('GIVEN every scope with room THEN nothing is refused', () => {
    expect(refusal([std('u1', 100)], usage())).toBeUndefined();
  });

  it('GIVEN a member at their limit THEN the member scope refuses first, with its numbers', () => {
    const used = usage({ users: { 'g1/u1': 90 }, guilds: { g1: 250 }, account: 400 });
    expect(refusal([std('u1', 11)], used)).toEqual({
      scope: 'user',
      guildId: 'g1',
      userId: 'u1',
      used: 90,
      limit: 100,
      requested: 11,
      remaining: 10,
      resetsAt: 777,
    });
  });

  it("GIVEN one member's charges spread over a merged request THEN they are summed against their limit", () => {
    expect(refusal([std('u1', 50), std('u2', 1), std('u1', 51)], usage())).toMatchObject({ scope: 'user', userId: 'u1', requested: 101 });
  });

  it('GIVEN members with room in a full guild THEN the guild refuses with what the whole request asks of it', () => {
    expect(refusal([std('u1', 10), std('u2', 10)], usage({ guilds: { g1: 240 } }))).toEqual({
      scope: 'guild',
      guildId: 'g1',
      used: 240,
      limit: 250,
      requested: 20,
      remaining: 10,
      resetsAt: 777,
    });
  });

  it('GIVEN members and guilds with room but the account nearly spent THEN the account refuses, over every guild together', () => {
    const charges = [std('u1', 30, 'g1'), std('u2', 30, 'g2')];
    expect(refusal(charges, usage({ account: 350 }))).toEqual({
      scope: 'account',
      used: 350,
      limit: 400,
      requested: 60,
      remaining: 50,
      resetsAt: 777,
    });
  });

  it("GIVEN a guild's own limits THEN they apply in that guild only", () => {
    const limitsOf = (guildId: string) => (guildId === 'g2' ? { ...LIMITS, userMonthlyLimit: 10 } : LIMITS);
    expect(refusal([std('u1', 11, 'g1')], usage(), limitsOf)).toBeUndefined();
    expect(refusal([std('u1', 11, 'g2')], usage(), limitsOf)).toMatchObject({ scope: 'user', guildId: 'g2', limit: 10 });
  });

  it('GIVEN a scope asked for 0 characters THEN it is not refused, however spent', () => {
    expect(refusal([std('u1', 0)], usage({ users: { 'g1/u1': 500 }, guilds: { g1: 500 }, account: 500 }))).toBeUndefined();
  });
});

describe('toUsage', () => {
  it('GIVEN totals by endpoint THEN used is reserved + charged + uncertain, with what remains of the limit', () => {
    const totals = [
      { endpoint: 'standard' as const, reserved: 5, charged: 20, uncertain: 1 },
      { endpoint: 'advanced' as const, reserved: 0, charged: 70, uncertain: 10 },
    ];
    expect(toUsage('guild', totals, 100, 9)).toEqual({
      scope: 'guild',
      used: 106,
      reserved: 5,
      charged: 90,
      uncertain: 11,
      limit: 100,
      remaining: 0,
      resetsAt: 9,
      byEndpoint: { standard: 26, advanced: 80 },
    });
    expect(toUsage('user', [], 50, 9)).toMatchObject({ used: 0, remaining: 50, byEndpoint: { standard: 0, advanced: 0 } });
  });
});

describe("appliedLimit: a stored limit under the operator's ceiling", () => {
  // Default 3,000, ceiling 50,000.
  const applied = (stored: number | null) => appliedLimit(stored, 3_000, 50_000);
  it('GIVEN nothing stored THEN the default, not capped', () =>
    expect(applied(null)).toEqual({ value: 3_000, stored: null, capped: false }));
  it('GIVEN a stored value within the ceiling THEN that value', () =>
    expect(applied(40_000)).toEqual({ value: 40_000, stored: 40_000, capped: false }));
  it('GIVEN a stored value at the ceiling THEN that value, not capped', () =>
    expect(applied(50_000)).toEqual({ value: 50_000, stored: 50_000, capped: false }));
  it('GIVEN a stored value above the ceiling THEN the ceiling, capped, with what was stored', () =>
    expect(applied(2_000_000)).toEqual({ value: 50_000, stored: 2_000_000, capped: true }));
  it('GIVEN a stored 0 (nothing read) THEN 0, which no ceiling raises', () =>
    expect(applied(0)).toEqual({ value: 0, stored: 0, capped: false }));
});

describe("a charge's settlement", () => {
  it('GIVEN a hold the service may have charged THEN uncertain, or released when its audio is already paid for', () => {
    expect(settleMaybeCharged(false)).toBe('uncertain');
    expect(settleMaybeCharged(true)).toBe('released');
  });

  it('GIVEN a hold left by a crashed process THEN released if never sent, else as maybe charged', () => {
    expect([settleStale('held', false), settleStale('held', true)]).toEqual(['released', 'released']);
    expect([settleStale('sent', false), settleStale('sent', true)]).toEqual(['uncertain', 'released']);
  });

  it('GIVEN a failed job THEN only what counted as charged is given back', () => {
    expect((['held', 'sent', 'charged', 'uncertain', 'released'] as const).filter(refundable)).toEqual(['charged', 'uncertain']);
  });
});
