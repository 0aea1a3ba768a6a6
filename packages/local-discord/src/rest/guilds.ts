/** Guilds, their channels, roles, members and voice states (https://discord.com/developers/docs/resources/guild). */
import { API_ERRORS } from '../errors.ts';
import { toAPIChannel, toAPIGuild, toAPIMember, toAPIRole, type FakeGuild } from '../fixtures.ts';
import type { DiscordState } from '../state.ts';
import { ok, type RequestContext, type RouteResult, type Router } from './router.ts';

export function guildRoutes(router: Router, state: DiscordState): void {
  // A bot that is not in a guild gets Unknown Guild, as from Discord.
  const withGuild = (handler: (guild: FakeGuild, ctx: RequestContext) => RouteResult) => (ctx: RequestContext) => {
    const guild = state.guild(ctx.params.guild);
    return guild && state.inGuild(ctx.bot.user.id, guild.id) ? handler(guild, ctx) : API_ERRORS.unknownGuild;
  };
  /** `@me` names the bot that asks. */
  const userId = (ctx: RequestContext) => (ctx.params.user === '@me' ? ctx.bot.user.id : ctx.params.user);

  router.on(
    'GET',
    '/guilds/:guild',
    withGuild((guild) => ok({ ...toAPIGuild(guild), approximate_member_count: guild.members.length })),
  );
  router.on(
    'GET',
    '/guilds/:guild/channels',
    withGuild((guild) => ok(guild.channels.map((c) => toAPIChannel(c, guild.id)))),
  );
  router.on(
    'GET',
    '/guilds/:guild/roles',
    withGuild((guild) => ok(guild.roles.map(toAPIRole))),
  );
  router.on(
    'GET',
    '/guilds/:guild/members',
    withGuild((guild, { query }) => {
      const limit = Number(query.get('limit') ?? 1);
      const after = BigInt(query.get('after') ?? '0');
      const members = guild.members
        .filter((m) => BigInt(m.user.id) > after)
        .sort((a, b) => (BigInt(a.user.id) < BigInt(b.user.id) ? -1 : 1));
      return ok(members.slice(0, limit).map(toAPIMember));
    }),
  );
  router.on(
    'GET',
    '/guilds/:guild/members/:user',
    withGuild((guild, ctx) => {
      const member = guild.members.find((m) => m.user.id === userId(ctx));
      return member ? ok(toAPIMember(member)) : API_ERRORS.unknownMember;
    }),
  );
  router.on(
    'GET',
    '/guilds/:guild/voice-states/:user',
    withGuild((guild, ctx) => {
      const voice = guild.voiceStates.find((v) => v.userId === userId(ctx));
      if (!voice) return API_ERRORS.unknownVoiceState;
      return ok({
        guild_id: guild.id,
        user_id: voice.userId,
        channel_id: voice.channelId,
        session_id: voice.sessionId,
        deaf: false,
        mute: false,
        self_deaf: voice.selfDeaf,
        self_mute: voice.selfMute,
        self_video: false,
        suppress: voice.suppress ?? false,
        request_to_speak_timestamp: voice.requestToSpeakTimestamp ?? null,
      });
    }),
  );
}
