import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { RoleAllowancesRepo } from '../../src/db/role-allowances.ts';
import { CharacterBudget } from '../../src/speech/budget.ts';
import { memberLimit } from '../../src/speech/budget-policy.ts';

// Issue 13 "Role allowances": a member's limit is the largest allowance of their roles, never
// below the server's member limit, and the budget refuses and reports by that limit.
describe('memberLimit', () => {
  it('GIVEN no allowance THEN the server member limit', () => expect(memberLimit(1_000, undefined)).toBe(1_000));
  it('GIVEN a larger allowance THEN the allowance', () => expect(memberLimit(1_000, 5_000)).toBe(5_000));
  it('GIVEN a smaller allowance THEN still the server member limit', () => expect(memberLimit(1_000, 200)).toBe(1_000));
});

describe('role allowances in the budget', () => {
  let db: Db;
  let repo: RoleAllowancesRepo;
  const roles = new Map<string, string[]>();
  let budget: CharacterBudget;
  beforeEach(() => {
    db = openDatabase(':memory:');
    repo = new RoleAllowancesRepo(db);
    budget = new CharacterBudget({ db, defaults: { userMonthlyLimit: 100 }, roleAllowance: (g, u) => repo.largestFor(g, roles.get(u) ?? []) });
  });
  afterEach(() => db.close());

  it('GIVEN a member with several allowance roles THEN the largest applies to reservations and usage', async () => {
    await repo.set('g', 'booster', 300);
    await repo.set('g', 'patron', 800);
    roles.set('carol', ['booster', 'patron', 'other']);
    roles.set('dave', ['booster']);
    expect((await budget.usage({ guildId: 'g', userId: 'carol' })).limit).toBe(800);
    expect((await budget.reserve([{ guildId: 'g', userId: 'carol', endpoint: 'standard', chars: 700 }])).ok).toBe(true);
    const refused = await budget.reserve([{ guildId: 'g', userId: 'dave', endpoint: 'standard', chars: 301 }]);
    expect(refused.ok ? null : refused.refusal).toMatchObject({ scope: 'user', limit: 300, used: 0, requested: 301 });
    expect((await budget.reserve([{ guildId: 'g', userId: 'erin', endpoint: 'standard', chars: 101 }])).ok).toBe(false);
  });

  it('GIVEN an allowance removed THEN the member is back to the server limit', async () => {
    await repo.set('g', 'booster', 300);
    roles.set('dave', ['booster']);
    expect(await repo.remove('g', 'booster')).toBe(true);
    expect(await repo.remove('g', 'booster')).toBe(false);
    expect((await budget.usage({ guildId: 'g', userId: 'dave' })).limit).toBe(100);
  });
});
