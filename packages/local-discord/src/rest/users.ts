/** Users and DM channels (https://discord.com/developers/docs/resources/user). */
import { API_ERRORS } from '../errors.ts';
import { snowflake, toAPIUser } from '../fixtures.ts';
import type { DiscordState } from '../state.ts';
import { ok, type Router } from './router.ts';

export function userRoutes(router: Router, state: DiscordState): void {
  router.on('GET', '/users/@me', ({ bot }) =>
    ok({ ...toAPIUser(bot.user), bot: true, verified: true, mfa_enabled: false, email: null, locale: 'en-US' }),
  );
  router.on('GET', '/users/:user', ({ params }) => {
    const user = state.findUser(params.user as string);
    return user ? ok(toAPIUser(user)) : API_ERRORS.unknownUser;
  });
  // Create DM: one channel per recipient, reused on later calls.
  router.on('POST', '/users/@me/channels', ({ json }) => {
    const recipient = state.findUser(String((json as Record<string, unknown> | undefined)?.recipient_id));
    if (!recipient) return API_ERRORS.unknownUser;
    let channelId = [...state.dmChannels].find(([, userId]) => userId === recipient.id)?.[0];
    if (!channelId) {
      channelId = snowflake();
      state.dmChannels.set(channelId, recipient.id);
    }
    return ok({ id: channelId, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(recipient)] });
  });
}
