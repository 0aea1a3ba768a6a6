/** Channels, their messages, typing and reactions (https://discord.com/developers/docs/resources/message). */
import { API_ERRORS, invalidFormBody } from '../errors.ts';
import { findChannel, memberPermissions, PERMISSIONS, toAPIChannel, toAPIUser } from '../fixtures.ts';
import { EPHEMERAL, validateMessageBody, type FakeMessage } from '../messages.ts';
import type { DiscordState } from '../state.ts';
import { NO_CONTENT, ok, type RequestContext, type RouteResult, type Router } from './router.ts';

export function channelRoutes(router: Router, state: DiscordState): void {
  /** One of the bot's own live messages in the route's channel. */
  const ownMessage = (params: Record<string, string>) =>
    state.messages.find((m) => m.id === params.message && m.channelId === params.channel && !m.deleted);

  router.on('GET', '/channels/:channel', ({ params }) => {
    const located = findChannel(state.guilds, params.channel as string);
    if (located) return ok(toAPIChannel(located.channel, located.guild.id));
    const dmUser = state.dmChannels.get(params.channel as string);
    const recipient = dmUser ? state.findUser(dmUser) : undefined;
    return recipient
      ? ok({ id: params.channel, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(recipient)] })
      : API_ERRORS.unknownChannel;
  });
  router.on('POST', '/channels/:channel/messages', (ctx) => createChannelMessage(state, ctx));
  router.on('POST', '/channels/:channel/typing', ({ params }) =>
    state.channelExists(params.channel as string) ? NO_CONTENT : API_ERRORS.unknownChannel,
  );
  // A channel's messages, newest first; `after`/`before` (ids) and `limit` (1-100, default 50), as
  // https://discord.com/developers/docs/resources/message#get-channel-messages documents. Without
  // Read Message History the list is empty, as Discord answers.
  router.on('GET', '/channels/:channel/messages', (ctx) => {
    const { params, query } = ctx;
    const channelId = params.channel as string;
    const located = findChannel(state.guilds, channelId);
    if (!located) return API_ERRORS.unknownChannel;
    const limit = Number(query.get('limit') ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return invalidFormBody('limit', 'NUMBER_TYPE_MAX', 'int value should be less than or equal to 100.');
    if (!(memberPermissions(located.guild, ctx.bot.user.id) & PERMISSIONS.ReadMessageHistory)) return ok([]);
    const after = query.get('after');
    const before = query.get('before');
    const newer = (a: string, b: string) => BigInt(a) > BigInt(b);
    const all = [
      ...state.messages.filter((m) => m.channelId === channelId && !m.deleted).map((m) => state.apiMessage(m)),
      ...[...state.userMessages.values()].filter((m) => m.channel_id === channelId),
    ]
      .filter((m) => (after === null || newer(m.id, after)) && (before === null || newer(before, m.id)))
      .sort((a, b) => (newer(a.id, b.id) ? -1 : 1));
    // With `after`, the messages right after it (the oldest of those newer), still newest first.
    return ok(after !== null && before === null ? all.slice(-limit) : all.slice(0, limit));
  });
  router.on('GET', '/channels/:channel/messages/:message', ({ params }) => {
    const own = ownMessage(params);
    if (own) return ok(state.apiMessage(own));
    const other = state.userMessages.get(params.message as string);
    return other && other.channel_id === params.channel ? ok(other) : API_ERRORS.unknownMessage;
  });
  router.on('PATCH', '/channels/:channel/messages/:message', ({ params, json, files, bot }) => {
    const message = ownMessage(params);
    if (message && message.authorId !== bot.user.id) return API_ERRORS.cannotEditOthers;
    if (!message) return state.userMessages.has(params.message as string) ? API_ERRORS.cannotEditOthers : API_ERRORS.unknownMessage;
    return state.editMessage(message, (json ?? {}) as Record<string, unknown>, files) ?? ok(state.apiMessage(message));
  });
  router.on('DELETE', '/channels/:channel/messages/:message', ({ params, bot }) => {
    const channelId = params.channel as string;
    const messageId = params.message as string;
    const own = ownMessage(params);
    if (own) {
      own.deleted = true;
    } else {
      // A member's message: the bot needs Manage Messages to delete it.
      const other = state.userMessages.get(messageId);
      if (!other || other.channel_id !== channelId) return API_ERRORS.unknownMessage;
      const located = findChannel(state.guilds, channelId);
      if (located && !(memberPermissions(located.guild, bot.user.id) & PERMISSIONS.ManageMessages)) return API_ERRORS.missingPermissions;
      state.userMessages.delete(messageId);
    }
    state.deletions.push({ channelId, messageId });
    state.dispatchBotEvent('MESSAGE_DELETE', { id: messageId, channel_id: channelId, ...state.guildIdOf(channelId) }, channelId);
    if (own) state.touch(own);
    else state.emitActivity({ kind: 'deletion', channelId, messageId });
    return NO_CONTENT;
  });
  router.on('PUT', '/channels/:channel/messages/:message/reactions/:emoji/@me', ({ params }) => {
    if (!state.findAnyMessage(params.message as string)) return API_ERRORS.unknownMessage;
    const reaction = { channelId: params.channel as string, messageId: params.message as string, emoji: params.emoji as string };
    state.reactions.push(reaction);
    state.emitActivity({ kind: 'reaction', ...reaction });
    return NO_CONTENT;
  });
}

function createChannelMessage(state: DiscordState, ctx: RequestContext): RouteResult {
  const channelId = ctx.params.channel as string;
  if (!state.channelExists(channelId)) return API_ERRORS.unknownChannel;
  const located = findChannel(state.guilds, channelId);
  if (located) {
    if (located.channel.type === 4) return API_ERRORS.nonTextChannel;
    if (!state.inGuild(ctx.bot.user.id, located.guild.id)) return API_ERRORS.missingAccess;
    const perms = memberPermissions(located.guild, ctx.bot.user.id);
    const needed = PERMISSIONS.ViewChannel | PERMISSIONS.SendMessages | (ctx.files.length > 0 ? PERMISSIONS.AttachFiles : 0n);
    if ((perms & needed) !== needed) return API_ERRORS.missingPermissions;
  }
  const payload = (ctx.json ?? {}) as Record<string, unknown>;
  const valid = validateMessageBody(payload, ctx.files, true, state.options.maxUploadBytes);
  if (!valid.ok) return valid.error;
  const reference = payload.message_reference as FakeMessage['messageReference'] | undefined;
  if (reference?.message_id && !state.findAnyMessage(reference.message_id) && reference.fail_if_not_exists !== false) {
    return invalidFormBody('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
  }
  // Ephemeral is for interaction responses only: Discord ignores the flag here.
  const message = state.createMessage(payload, ctx.files, {
    source: 'channel',
    channelId,
    flags: Number(payload.flags ?? 0) & ~EPHEMERAL,
    author: ctx.bot,
  });
  return ok(state.apiMessage(message));
}
