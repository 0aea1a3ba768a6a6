import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { RoleAllowance } from '../domain/controls.ts';
import type { Clock } from '../util/clock.ts';

// The role_allowances table (migrations/009): roles with a larger monthly limit per member.

const statements = (db: Db) => ({
  upsert: db.prepare<[string, string, number, number]>(
    'INSERT INTO role_allowances (guild_id, role_id, monthly_limit, created_at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET monthly_limit = excluded.monthly_limit',
  ),
  delete: db.prepare<[string, string]>('DELETE FROM role_allowances WHERE guild_id = ? AND role_id = ?'),
  list: db.prepare<[string], { role_id: string; monthly_limit: number }>(
    'SELECT role_id, monthly_limit FROM role_allowances WHERE guild_id = ? ORDER BY monthly_limit DESC, role_id',
  ),
});

export class RoleAllowancesRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Gives the role this monthly limit per member (replacing an earlier one). */
  set(guildId: string, roleId: string, monthlyLimit: number): Promise<void> {
    return this.write(() => void this.sql.upsert.run(guildId, roleId, monthlyLimit, this.clock.now()));
  }

  /** Resolves false when the role had no allowance. */
  remove(guildId: string, roleId: string): Promise<boolean> {
    return this.write(() => this.sql.delete.run(guildId, roleId).changes > 0);
  }

  /** The guild's allowances, largest first. */
  list(guildId: string): RoleAllowance[] {
    return this.sql.list.all(guildId).map((r) => ({ roleId: r.role_id, monthlyLimit: r.monthly_limit }));
  }

  /** The largest allowance among `roleIds`, or undefined when none of them has one. */
  largestFor(guildId: string, roleIds: Iterable<string>): number | undefined {
    const held = new Set(roleIds);
    return this.list(guildId).find((a) => held.has(a.roleId))?.monthlyLimit;
  }
}
