/** Users and DM channels (https://discord.com/developers/docs/resources/user). */
import { API_ERRORS } from '../errors.ts';
import { memberPermissions, snowflake, toAPIUser, type FakeGuild } from '../fixtures.ts';
import type { DiscordState } from '../state.ts';
import { ok, type Router } from './router.ts';

/**
 * GET users/@me/guilds: the guilds `userId` is in, as partial guilds (`owner`, and the member's
 * permissions as a string), by id, with `before`, `after`, `limit` (1-200) and `with_counts`
 * (https://discord.com/developers/docs/resources/user#get-current-user-guilds).
 */
export function currentUserGuilds(
  guilds: readonly FakeGuild[],
  userId: string,
  isIn: (g: FakeGuild) => boolean,
  query: URLSearchParams,
): unknown[] {
  const limit = Math.min(200, Math.max(1, Number(query.get('limit') ?? 200) || 200));
  const after = query.get('after');
  const before = query.get('before');
  const withCounts = query.get('with_counts') === 'true';
  return guilds
    .filter(isIn)
    .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
    .filter((g) => (after === null || BigInt(g.id) > BigInt(after)) && (before === null || BigInt(g.id) < BigInt(before)))
    .slice(0, limit)
    .map((g) => ({
      id: g.id,
      name: g.name,
      icon: null,
      banner: null,
      owner: g.ownerId === userId,
      permissions: memberPermissions(g, userId).toString(),
      features: [],
      ...(withCounts ? { approximate_member_count: g.members.length, approximate_presence_count: 0 } : {}),
    }));
}

export function userRoutes(router: Router, state: DiscordState): void {
  router.on('GET', '/users/@me', ({ bot }) =>
    ok({ ...toAPIUser(bot.user), bot: true, verified: true, mfa_enabled: false, email: null, locale: 'en-US' }),
  );
  router.on('GET', '/users/@me/guilds', ({ bot, query }) =>
    ok(currentUserGuilds(state.guilds, bot.user.id, (g) => state.inGuild(bot.user.id, g.id), query)),
  );
  router.on('GET', '/users/:user', ({ params }) => {
    const user = state.findUser(params.user as string);
    return user ? ok(toAPIUser(user)) : API_ERRORS.unknownUser;
  });
  // Create DM: one channel per bot and recipient, reused on later calls.
  router.on('POST', '/users/@me/channels', ({ json, bot }) => {
    const recipient = state.findUser(String((json as Record<string, unknown> | undefined)?.recipient_id));
    if (!recipient) return API_ERRORS.unknownUser;
    const ours = (channelId: string) => (state.dmBots.get(channelId) ?? state.botUser.id) === bot.user.id;
    let channelId = [...state.dmChannels].find(([id, userId]) => userId === recipient.id && ours(id))?.[0];
    if (!channelId) {
      channelId = snowflake();
      state.dmChannels.set(channelId, recipient.id);
      if (bot !== state.mainBot) state.dmBots.set(channelId, bot.user.id);
    }
    return ok({ id: channelId, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(recipient)] });
  });
}
