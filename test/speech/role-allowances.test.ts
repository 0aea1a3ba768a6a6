import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Db } from '../../src/db/database.ts';
import { GuildSettingsRepo } from '../../src/db/guild-settings.ts';
import { RoleAllowancesRepo } from '../../src/db/role-allowances.ts';
import { CharacterBudget } from '../../src/billing/budget.ts';
import { memberLimit } from '../../src/billing/policy.ts';

// Role allowances: a member's limit is the largest allowance of their roles, never
// below the server's member limit, and the budget refuses and reports by that limit.
describe('memberLimit', () => {
  it('GIVEN no allowance THEN the server member limit', () => expect(memberLimit(1_000, undefined)).toBe(1_000));
  it('GIVEN a larger allowance THEN the allowance', () => expect(memberLimit(1_000, 5_000)).toBe(5_000));
  it('GIVEN a smaller allowance THEN still the server member limit', () => expect(memberLimit(1_000, 200)).toBe(1_000));
  it('GIVEN an allowance above the role ceiling THEN the ceiling', () => expect(memberLimit(1_000, 2_000_000, 3_000)).toBe(3_000));
  it('GIVEN a role ceiling below the member limit THEN the member limit', () => expect(memberLimit(1_000, 5_000, 500)).toBe(1_000));
});

describe('role allowances in the budget', () => {
  let db: Db;
  let repo: RoleAllowancesRepo;
  const roles = new Map<string, string[]>();
  let budget: CharacterBudget;
  beforeEach(() => {
    db = openDatabase(':memory:');
    repo = new RoleAllowancesRepo(db);
    budget = new CharacterBudget({
      db,
      defaults: { userMonthlyLimit: 100 },
      roleAllowance: (g, u) => repo.largestFor(g, roles.get(u) ?? []),
    });
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

describe("the operator's ceilings in the budget", () => {
  let db: Db;
  afterEach(() => db.close());

  it('GIVEN stored server, member and role limits above the ceilings THEN the ceilings apply to reservations and usage', async () => {
    db = openDatabase(':memory:');
    const settings = new GuildSettingsRepo(db);
    const roles = new RoleAllowancesRepo(db);
    await settings.update('g', { guildMonthlyLimit: 2_000_000, userMonthlyLimit: 1_000_000 });
    await roles.set('g', 'patron', 900_000);
    const budget = new CharacterBudget({
      db,
      defaults: { userMonthlyLimit: 100, guildMonthlyLimit: 300 },
      ceilings: { guildMonthlyLimit: 500, userMonthlyLimit: 200, roleMonthlyLimit: 400 },
      roleAllowance: (g, u) => (u === 'carol' ? roles.largestFor(g, ['patron']) : undefined),
    });
    expect(budget.appliedLimits('g')).toEqual({
      guild: { value: 500, stored: 2_000_000, capped: true },
      user: { value: 200, stored: 1_000_000, capped: true },
    });
    expect((await budget.usage({ guildId: 'g' })).limit).toBe(500);
    expect((await budget.usage({ guildId: 'g', userId: 'dave' })).limit).toBe(200);
    expect((await budget.usage({ guildId: 'g', userId: 'carol' })).limit).toBe(400);
    const refused = await budget.reserve([{ guildId: 'g', userId: 'carol', endpoint: 'standard', chars: 401 }]);
    expect(refused.ok ? null : refused.refusal).toMatchObject({ scope: 'user', limit: 400 });
    expect((await budget.reserve([{ guildId: 'g', userId: 'carol', endpoint: 'standard', chars: 400 }])).ok).toBe(true);
    const server = await budget.reserve([{ guildId: 'g', userId: 'dave', endpoint: 'standard', chars: 101 }]);
    expect(server.ok ? null : server.refusal).toMatchObject({ scope: 'guild', limit: 500, used: 400 });
  });

  it('GIVEN no ceilings THEN each is its default: nothing stored above a default is raised past it', () => {
    db = openDatabase(':memory:');
    const budget = new CharacterBudget({ db, defaults: { userMonthlyLimit: 100, guildMonthlyLimit: 300 } });
    expect(budget.ceilings).toEqual({ guildMonthlyLimit: 300, userMonthlyLimit: 100, roleMonthlyLimit: 300 });
  });
});
