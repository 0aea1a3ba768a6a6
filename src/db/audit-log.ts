import type { Db } from './database.ts';
import { Repo } from './table.ts';
import type { Actor, AuditEntry } from '../domain/audit.ts';
import type { Clock } from '../util/clock.ts';

// The audit_log table (migrations/014): each change to a server's settings or dictionary, who made
// it, through which door (the web dashboard or a slash command), and when.

/** Entries kept per guild; older ones are deleted as new ones are written. */
const AUDIT_KEEP_PER_GUILD = 1000;

interface Row {
  id: number;
  guild_id: string;
  user_id: string;
  user_name: string;
  via: 'dashboard' | 'command';
  action: string;
  detail: string;
  at: number;
}

const statements = (db: Db) => ({
  insert: db.prepare<[string, string, string, string, string, string, number]>(
    'INSERT INTO audit_log (guild_id, user_id, user_name, via, action, detail, at) VALUES (?, ?, ?, ?, ?, ?, ?)',
  ),
  trim: db.prepare<[string, string, number]>(
    'DELETE FROM audit_log WHERE guild_id = ? AND id < (SELECT id FROM audit_log WHERE guild_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)',
  ),
  recent: db.prepare<[string, number], Row>('SELECT * FROM audit_log WHERE guild_id = ? ORDER BY id DESC LIMIT ?'),
});

export class AuditLogRepo extends Repo<ReturnType<typeof statements>> {
  constructor(db: Db, clock?: Clock) {
    super(db, clock, statements);
  }

  /** Records one change (and forgets the guild's entries past AUDIT_KEEP_PER_GUILD). */
  record(guildId: string, actor: Actor, action: string, detail: Record<string, unknown>): Promise<void> {
    return this.write(() => {
      this.sql.insert.run(guildId, actor.userId, actor.name.slice(0, 100), actor.via, action, JSON.stringify(detail), this.clock.now());
      this.sql.trim.run(guildId, guildId, AUDIT_KEEP_PER_GUILD - 1);
    });
  }

  /** The guild's latest changes, newest first. */
  recent(guildId: string, limit = 100): AuditEntry[] {
    return this.sql.recent.all(guildId, limit).map((r) => ({
      id: r.id,
      guildId: r.guild_id,
      userId: r.user_id,
      name: r.user_name,
      via: r.via,
      action: r.action,
      detail: JSON.parse(r.detail) as Record<string, unknown>,
      at: r.at,
    }));
  }
}
