/**
 * The application and its commands, global and per guild
 * (https://discord.com/developers/docs/resources/application,
 * https://discord.com/developers/docs/interactions/application-commands).
 */
import type { APIApplicationCommand } from 'discord.js';
import { API_ERRORS, type ApiError } from '../errors.ts';
import { toAPIUser } from '../fixtures.ts';
import type { DiscordState } from '../state.ts';
import type { FakeBot } from '../types.ts';
import { storeCommand, validateCommand, validateCommandList } from './commands.ts';
import { NO_CONTENT, ok, type RequestContext, type RouteResult, type Router } from './router.ts';

export function applicationRoutes(router: Router, state: DiscordState): void {
  const application = (bot: FakeBot) => ({
    id: bot.applicationId,
    name: bot.user.username,
    icon: null,
    description: '',
    bot_public: true,
    bot_require_code_grant: false,
    verify_key: '0'.repeat(64),
    flags: 0,
    team: null,
    owner: { id: state.guilds[0]?.ownerId ?? '1', username: 'owner', discriminator: '0', global_name: null, avatar: null },
    bot: toAPIUser(bot.user),
    approximate_guild_count: state.guilds.filter((g) => state.inGuild(bot.user.id, g.id)).length,
    summary: '',
  });
  router.on('GET', '/applications/@me', ({ bot }) => ok(application(bot)));
  router.on('GET', '/oauth2/applications/@me', ({ bot }) => ok(application(bot)));

  const commands = new CommandLists(state);
  const withList = (handler: (list: APIApplicationCommand[], ctx: RequestContext) => RouteResult) => (ctx: RequestContext) => {
    const list = commands.get(ctx.params, ctx.bot);
    return Array.isArray(list) ? handler(list, ctx) : list;
  };
  for (const base of ['/applications/:app/commands', '/applications/:app/guilds/:guild/commands']) {
    router.on(
      'GET',
      base,
      withList((list) => ok(list)),
    );
    // Bulk overwrite: what `deploy-commands` uses.
    router.on(
      'PUT',
      base,
      withList((list, { params, json, bot }) => {
        const valid = validateCommandList(json);
        if (!valid.ok) return valid.error;
        const stored = (json as Array<Record<string, unknown>>).map((c) => storeCommand(c, bot.applicationId, params.guild, list));
        commands.set(params, bot, stored);
        return ok(stored);
      }),
    );
    router.on(
      'POST',
      base,
      withList((list, { params, json, bot }) => {
        const valid = validateCommand(json);
        if (!valid.ok) return valid.error;
        const command = storeCommand(json as Record<string, unknown>, bot.applicationId, params.guild, list);
        const replaced = list.some((c) => c.id === command.id);
        commands.set(params, bot, [...list.filter((c) => c.id !== command.id), command]);
        return ok(command, replaced ? 200 : 201);
      }),
    );
    router.on(
      'GET',
      `${base}/:command`,
      withList((list, { params }) => {
        const command = list.find((c) => c.id === params.command);
        return command ? ok(command) : API_ERRORS.unknownCommand;
      }),
    );
    router.on(
      'PATCH',
      `${base}/:command`,
      withList((list, { params, json, bot }) => {
        const current = list.find((c) => c.id === params.command);
        if (!current) return API_ERRORS.unknownCommand;
        const merged = { ...current, ...(json as object) } as Record<string, unknown>;
        const valid = validateCommand(merged);
        if (!valid.ok) return valid.error;
        const command = storeCommand(merged, bot.applicationId, params.guild, list);
        commands.set(
          params,
          bot,
          list.map((c) => (c.id === current.id ? command : c)),
        );
        return ok(command);
      }),
    );
    router.on(
      'DELETE',
      `${base}/:command`,
      withList((list, { params, bot }) => {
        if (!list.some((c) => c.id === params.command)) return API_ERRORS.unknownCommand;
        commands.set(
          params,
          bot,
          list.filter((c) => c.id !== params.command),
        );
        return NO_CONTENT;
      }),
    );
  }
}

/** The global list, or a guild's, named by the route's `app` and `guild` params. */
class CommandLists {
  readonly #state: DiscordState;

  constructor(state: DiscordState) {
    this.#state = state;
  }

  get(params: Record<string, string>, bot: FakeBot): APIApplicationCommand[] | ApiError {
    const state = this.#state;
    if (params.app !== bot.applicationId) return API_ERRORS.missingAccess;
    const commands = state.commandsOf(bot.applicationId);
    if (params.guild === undefined) return commands.global;
    if (!state.guilds.some((g) => g.id === params.guild && state.inGuild(bot.user.id, g.id))) return API_ERRORS.missingAccess;
    return (commands.guild[params.guild] ??= []);
  }

  set(params: Record<string, string>, bot: FakeBot, list: APIApplicationCommand[]): void {
    const commands = this.#state.commandsOf(bot.applicationId);
    if (params.guild === undefined) commands.global = list;
    else commands.guild[params.guild] = list;
  }
}
