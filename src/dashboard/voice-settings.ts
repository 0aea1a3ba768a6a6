import type { Repositories } from '../db/repositories.ts';
import { UserError } from '../i18n/errors.ts';
import type { BotView, GuildAccess } from './access.ts';

// What the dashboard's voice routes (the voice pool, members' volumes: api.ts) need besides the use
// cases: the member an admin's change names, and the volumes admins set, with names.

const SNOWFLAKE = /^\d{17,20}$/;

/**
 * The member an admin's change names (as /config volume's member option): a member of the server
 * now, or what to tell the admin. The bot itself is marked so the use case can refuse it.
 */
export async function memberNamed(view: BotView, access: GuildAccess, memberId: unknown): Promise<{ id: string; isBot: boolean }> {
  // Checked before any lookup: an empty id would ask the gateway for every member of the server.
  if (memberId === undefined || memberId === '') throw new UserError('dashboard.member_missing');
  if (typeof memberId !== 'string' || !SNOWFLAKE.test(memberId)) throw new UserError('dashboard.unknown_member');
  const member = await view.member(access.guild, memberId);
  if (!member) throw new UserError('dashboard.unknown_member');
  return { id: member.id, isBot: member.id === access.guild.client.user.id };
}

/** The members an admin set a volume for (/config volume), with their names as the gateway knows them. */
export function volumesOf(repos: Pick<Repositories, 'userSettings'>, access: GuildAccess) {
  return repos.userSettings
    .adminVolumes(access.guild.id)
    .map((v) => ({ id: v.userId, volume: v.volume, name: access.guild.members.cache.get(v.userId)?.displayName ?? v.userId }));
}
