/**
 * A member's permissions in one channel: the guild-wide ones from roles, then the channel's
 * overwrites in Discord's order (@everyone, the member's roles together, the member), as
 * https://discord.com/developers/docs/topics/permissions#permission-overwrites computes them.
 */
import { ALL_PERMISSIONS, memberPermissions, PERMISSIONS, type FakeChannel, type FakeGuild } from './fixtures.ts';

/** The member's permissions in `channel` (owner and Administrator: every permission, overwrites aside). */
export function channelPermissions(guild: FakeGuild, channel: FakeChannel, userId: string): bigint {
  const base = memberPermissions(guild, userId);
  if (base === ALL_PERMISSIONS) return ALL_PERMISSIONS;
  const overwrites = channel.permissionOverwrites ?? [];
  const apply = (bits: bigint, allow: bigint, deny: bigint) => (bits & ~deny) | allow;
  let bits = base;
  const everyone = overwrites.find((o) => o.type === 0 && o.id === guild.id);
  if (everyone) bits = apply(bits, BigInt(everyone.allow), BigInt(everyone.deny));
  const roles = new Set(guild.members.find((m) => m.user.id === userId)?.roles ?? []);
  let allow = 0n;
  let deny = 0n;
  for (const o of overwrites) {
    if (o.type !== 0 || !roles.has(o.id)) continue;
    allow |= BigInt(o.allow);
    deny |= BigInt(o.deny);
  }
  bits = apply(bits, allow, deny);
  const own = overwrites.find((o) => o.type === 1 && o.id === userId);
  if (own) bits = apply(bits, BigInt(own.allow), BigInt(own.deny));
  return bits;
}

/**
 * Whether Discord lets `userId` into voice channel `channel`: View Channel and Connect there, and
 * room under its user_limit unless they have Move Members. Discord does not answer a bot's voice
 * state update (op 4) that fails this, so its voice connection never becomes ready.
 */
export function canJoinVoice(guild: FakeGuild, channel: FakeChannel, userId: string): boolean {
  const bits = channelPermissions(guild, channel, userId);
  const needed = PERMISSIONS.ViewChannel | PERMISSIONS.Connect;
  if ((bits & needed) !== needed) return false;
  const limit = channel.userLimit ?? 0;
  const inside = guild.voiceStates.filter((v) => v.channelId === channel.id && v.userId !== userId).length;
  return limit === 0 || inside < limit || (bits & PERMISSIONS.MoveMembers) !== 0n;
}
