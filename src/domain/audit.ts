// Who changed a server's settings or dictionary, through which door, and when: recorded by
// src/db/audit-log.ts, shown by the dashboard.

/** Who made a change and through which door. */
export interface Actor {
  userId: string;
  /** Their name as shown then (a display name, never a mention). */
  name: string;
  via: 'dashboard' | 'command';
}

export interface AuditEntry extends Actor {
  id: number;
  guildId: string;
  action: string;
  detail: Record<string, unknown>;
  at: number;
}
