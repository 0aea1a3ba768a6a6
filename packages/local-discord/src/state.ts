/**
 * The local Discord's world as its REST routes, its gateway glue and its test-facing API share it:
 * guilds, the messages the bot made (and those members sent), interactions, attachments, DM
 * channels, and the records of what the bot did. Messages are created and edited here because
 * channel messages, interaction responses and follow-ups all make and change them the same way.
 */
import { EventEmitter } from 'node:events';
import type { APIApplicationCommand, APIMessage } from 'discord.js';
import { LocalDiscordError, type ApiError } from './errors.ts';
import { DEFAULT_BOT_USER, defaultGuild, findChannel, randomToken, snowflake, type FakeGuild, type FakeUser } from './fixtures.ts';
import { FakeGateway, INTENTS, type GatewaySession, type VoiceStateRequest } from './gateway.ts';
import {
  computePings,
  EPHEMERAL,
  LOADING,
  resolveAttachments,
  toAPIMessage,
  validateMessageBody,
  type FakeAttachment,
  type FakeMessage,
  type MessageSource,
} from './messages.ts';
import type { UploadedFile } from './rest/body.ts';
import type {
  BotVoiceStateRequest,
  FakeBot,
  FakeDiscordOptions,
  InteractionResponse,
  LocalDiscordActivity,
  RestLogEntry,
  VoiceServerLink,
} from './types.ts';

const DEFAULTS = {
  applicationId: DEFAULT_BOT_USER.id,
  botUser: DEFAULT_BOT_USER,
  extraBots: [],
  clientSecret: '',
  redirectUris: [],
  accessTokenLifetimeMs: 7 * 24 * 3600_000,
  voiceServer: undefined as unknown as VoiceServerLink,
  guilds: [] as FakeGuild[],
  voiceEndpoint: () => '',
  voiceToken: (guildId: string, join: number) => `voice-${guildId}-${join}`,
  token: '',
  heartbeatIntervalMs: 41_250,
  shardCount: 1,
  maxUploadBytes: 10 * 1024 * 1024,
  interactionCallbackDeadlineMs: null,
  interactionTokenLifetimeMs: 15 * 60_000,
  messageContent: true,
  clock: { now: () => Date.now() },
  waitTimeoutMs: 10_000,
} as const satisfies Required<FakeDiscordOptions>;

type ResolvedOptions = Omit<Required<FakeDiscordOptions>, 'voiceEndpoint' | 'botUser' | 'voiceServer'> & {
  voiceEndpoint: (() => string) | undefined;
  voiceServer: VoiceServerLink | undefined;
  botUser: FakeUser;
};

/** An interaction sent to the bot, and every response it made to it. */
export interface InteractionRecord {
  id: string;
  token: string;
  type: number;
  name: string;
  user: FakeUser;
  guildId?: string;
  channelId: string;
  createdAt: number;
  callbackType?: number;
  originalMessageId?: string;
  responses: InteractionResponse[];
}

export class DiscordState {
  readonly options: ResolvedOptions;
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: FakeUser;
  /** The main bot first, then the extra ones. */
  readonly bots: FakeBot[];
  readonly guilds: FakeGuild[];
  readonly gateway: FakeGateway;
  /** `${botId}:${guildId}` of the bots that are not members of a guild (the main bot is in every guild unless removed). */
  readonly #absent = new Set<string>();
  readonly #otherCommands = new Map<string, DiscordState['commands']>();
  baseUrl = '';
  apiUrl = '';
  gatewayUrl = '';
  readonly requests: RestLogEntry[] = [];
  readonly commands: { global: APIApplicationCommand[]; guild: Record<string, APIApplicationCommand[]> } = { global: [], guild: {} };
  readonly messages: FakeMessage[] = [];
  readonly botVoiceStates: BotVoiceStateRequest[] = [];
  readonly reactions: Array<{ channelId: string; messageId: string; emoji: string }> = [];
  readonly deletions: Array<{ channelId: string; messageId: string }> = [];
  readonly interactions = new Map<string, InteractionRecord>();
  /** Messages members sent (sendMessage), by id. */
  readonly userMessages = new Map<string, APIMessage>();
  readonly attachments = new Map<string, FakeAttachment>();
  /** DM channel id -> the recipient's user id. */
  readonly dmChannels = new Map<string, string>();
  /** DM channel id -> the bot it is with, when that is not the main bot. */
  readonly dmBots = new Map<string, string>();
  /** What the waits listen to: 'message', 'request', 'botVoiceState', `interaction:<id>`; and 'activity' (onActivity). */
  readonly events = new EventEmitter();
  /** Bot tokens reset in the Developer Portal (revokeToken): refused everywhere until reinstated. */
  readonly revokedTokens = new Set<string>();
  /** The applications may read message content (`messageContent`, `setMessageContent`). */
  messageContent: boolean;
  #changeSeq = 0;
  readonly #changedAt = new WeakMap<FakeMessage, number>();

  constructor(options: FakeDiscordOptions, onVoiceStateRequest: (session: GatewaySession, request: VoiceStateRequest) => void) {
    const botUser: FakeUser = { ...(options.botUser ?? DEFAULT_BOT_USER), bot: true };
    this.options = {
      ...DEFAULTS,
      ...options,
      voiceEndpoint: options.voiceEndpoint ?? (options.voiceServer ? () => options.voiceServer!.endpoint : undefined),
      voiceServer: options.voiceServer,
      botUser,
      applicationId: options.applicationId ?? botUser.id,
    };
    this.botUser = botUser;
    this.messageContent = this.options.messageContent;
    this.applicationId = this.options.applicationId;
    this.token = options.token ?? `${Buffer.from(botUser.id).toString('base64url')}.${randomToken(4)}.${randomToken(27)}`;
    this.guilds = options.guilds ?? [defaultGuild(botUser)];
    this.bots = [
      {
        applicationId: this.applicationId,
        user: botUser,
        token: this.token,
        clientSecret: options.clientSecret ?? randomToken(24),
        redirectUris: [...(options.redirectUris ?? [])],
      },
    ];
    for (const extra of options.extraBots ?? []) {
      const user: FakeUser = { ...extra.user, bot: true };
      const bot: FakeBot = {
        applicationId: extra.applicationId ?? user.id,
        user,
        token: extra.token ?? `${Buffer.from(user.id).toString('base64url')}.${randomToken(4)}.${randomToken(27)}`,
        clientSecret: extra.clientSecret ?? randomToken(24),
        redirectUris: [...(extra.redirectUris ?? [])],
      };
      if (this.bots.some((b) => b.user.id === user.id || b.applicationId === bot.applicationId || b.token === bot.token))
        throw new LocalDiscordError('bad_option', {
          message: `extra bot ${user.id} repeats another bot's user id, application id or token`,
        });
      this.bots.push(bot);
      for (const guild of this.guilds) {
        if (extra.guildIds && !extra.guildIds.includes(guild.id)) this.#absent.add(`${user.id}:${guild.id}`);
        else addBotMember(guild, user, this.#mainBotPermissions(guild));
      }
    }
    this.events.setMaxListeners(0);
    this.gateway = new FakeGateway({
      bot: (token) => this.bots.find((b) => b.token === token && !this.revokedTokens.has(b.token)),
      mainBotId: botUser.id,
      inGuild: (botId, guildId) => this.inGuild(botId, guildId),
      dmBot: (channelId) => this.dmBots.get(channelId),
      guilds: this.guilds,
      heartbeatIntervalMs: this.options.heartbeatIntervalMs,
      shardCount: this.options.shardCount,
      resumeUrl: () => this.gatewayUrl,
      onVoiceStateRequest,
    });
  }

  now(): number {
    return this.options.clock.now();
  }

  // ---- bots -------------------------------------------------------------------------------------

  /** The commands an application registered (`commands` is the main application's). */
  commandsOf(applicationId: string): DiscordState['commands'] {
    if (applicationId === this.applicationId) return this.commands;
    let commands = this.#otherCommands.get(applicationId);
    if (!commands) this.#otherCommands.set(applicationId, (commands = { global: [], guild: {} }));
    return commands;
  }

  get mainBot(): FakeBot {
    return this.bots[0] as FakeBot;
  }

  /** The bot an `Authorization: Bot <token>` header names. */
  botByAuthorization(authorization: string | undefined): FakeBot | undefined {
    if (!authorization?.startsWith('Bot ')) return undefined;
    const token = authorization.slice(4);
    return this.bots.find((b) => b.token === token && !this.revokedTokens.has(b.token));
  }

  botByApplication(applicationId: string): FakeBot | undefined {
    return this.bots.find((b) => b.applicationId === applicationId);
  }

  botByUser(userId: string): FakeBot | undefined {
    return this.bots.find((b) => b.user.id === userId);
  }

  /** Whether bot `botId` is a member of guild `guildId`. */
  inGuild(botId: string, guildId: string): boolean {
    return !!this.guild(guildId) && !this.#absent.has(`${botId}:${guildId}`);
  }

  /** The ids of the bots in `guildId`. */
  botsIn(guildId: string): string[] {
    return this.bots.filter((b) => this.inGuild(b.user.id, guildId)).map((b) => b.user.id);
  }

  /** Makes `bot` a member of `guild` (a managed role of `permissions`); false when it already was. */
  joinGuild(bot: FakeBot, guild: FakeGuild, permissions = this.#mainBotPermissions(guild)): boolean {
    if (this.inGuild(bot.user.id, guild.id)) return false;
    this.#absent.delete(`${bot.user.id}:${guild.id}`);
    addBotMember(guild, bot.user, permissions);
    return true;
  }

  /** Takes `bot` out of `guild` (its member, its managed role and its voice state); false when it was not in it. */
  leaveGuild(bot: FakeBot, guild: FakeGuild): boolean {
    if (!this.inGuild(bot.user.id, guild.id)) return false;
    this.#absent.add(`${bot.user.id}:${guild.id}`);
    guild.members = guild.members.filter((m) => m.user.id !== bot.user.id);
    guild.roles = guild.roles.filter((r) => r.botId !== bot.user.id);
    guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== bot.user.id);
    return true;
  }

  /** The permissions of the main bot's managed role in `guild` (what a new bot role gets by default). */
  #mainBotPermissions(guild: FakeGuild): bigint {
    const role = guild.roles.find((r) => r.managed && r.botId === this.botUser.id);
    return BigInt(role?.permissions ?? guild.roles.find((r) => r.id === guild.id)?.permissions ?? '0');
  }

  // ---- lookups ----------------------------------------------------------------------------------

  guild(id: string | undefined): FakeGuild | undefined {
    return this.guilds.find((g) => g.id === id);
  }

  findUser(id: string): FakeUser | undefined {
    const bot = this.botByUser(id);
    if (bot) return bot.user;
    for (const guild of this.guilds) {
      const member = guild.members.find((m) => m.user.id === id);
      if (member) return member.user;
    }
    return undefined;
  }

  channelExists(channelId: string): boolean {
    return !!findChannel(this.guilds, channelId) || this.dmChannels.has(channelId);
  }

  /** `{guild_id}` of a guild channel, `{}` for a DM: the field events about messages carry. */
  guildIdOf(channelId: string): { guild_id?: string } {
    const located = findChannel(this.guilds, channelId);
    return located ? { guild_id: located.guild.id } : {};
  }

  /** A live message by id, the bot's or a member's, as the API shows it. */
  findAnyMessage(id: string): APIMessage | undefined {
    const own = this.messages.find((m) => m.id === id && !m.deleted);
    return own ? this.apiMessage(own) : this.userMessages.get(id);
  }

  // ---- the bot's messages -----------------------------------------------------------------------

  createMessage(
    payload: Record<string, unknown>,
    files: UploadedFile[],
    meta: { source: MessageSource; channelId: string; interactionId?: string; flags: number; author?: FakeBot },
  ): FakeMessage {
    const now = new Date(this.now()).toISOString();
    const reference = payload.message_reference as FakeMessage['messageReference'] | undefined;
    const content = typeof payload.content === 'string' ? payload.content : '';
    const message: FakeMessage = {
      id: snowflake(this.now()),
      channelId: meta.channelId,
      authorId: (meta.author ?? this.mainBot).user.id,
      source: meta.source,
      content,
      embeds: Array.isArray(payload.embeds) ? payload.embeds : [],
      components: Array.isArray(payload.components) ? payload.components : [],
      flags: meta.flags,
      tts: payload.tts === true,
      attachments: resolveAttachments(payload, files, [], (id, name) => this.#attachmentUrl(meta.channelId, id, name)),
      allowedMentions: payload.allowed_mentions,
      pings: computePings(content, payload.allowed_mentions, !!reference?.message_id),
      createdAt: now,
      editedAt: null,
      edits: 0,
      deleted: false,
    };
    const guildId = this.guildIdOf(meta.channelId).guild_id;
    if (guildId) message.guildId = guildId;
    if (meta.interactionId) message.interactionId = meta.interactionId;
    if (reference?.message_id) message.messageReference = reference;
    for (const a of message.attachments) this.attachments.set(a.id, a);
    this.messages.push(message);
    if (!(message.flags & EPHEMERAL)) this.dispatchBotEvent('MESSAGE_CREATE', this.apiMessage(message), message.channelId);
    this.touch(message);
    return message;
  }

  /** Checks an edit as Discord does and applies it; the error Discord would answer instead, if any. */
  editMessage(message: FakeMessage, payload: Record<string, unknown>, files: UploadedFile[]): ApiError | undefined {
    const valid = validateMessageBody(payload, files, false, this.options.maxUploadBytes);
    if (!valid.ok) return valid.error;
    this.applyEdit(message, payload, files);
    return undefined;
  }

  applyEdit(message: FakeMessage, payload: Record<string, unknown>, files: UploadedFile[]): void {
    const wasLoading = (message.flags & LOADING) !== 0;
    if ('content' in payload) message.content = typeof payload.content === 'string' ? payload.content : '';
    if ('embeds' in payload) message.embeds = Array.isArray(payload.embeds) ? payload.embeds : [];
    if ('components' in payload) message.components = Array.isArray(payload.components) ? payload.components : [];
    if ('allowed_mentions' in payload) message.allowedMentions = payload.allowed_mentions;
    if ('attachments' in payload || files.length > 0) {
      message.attachments = resolveAttachments(payload, files, message.attachments, (id, name) =>
        this.#attachmentUrl(message.channelId, id, name),
      );
      for (const a of message.attachments) this.attachments.set(a.id, a);
    }
    // Only SUPPRESS_EMBEDS (4) is editable; the loading flag clears on the first edit.
    if (typeof payload.flags === 'number') message.flags = (message.flags & ~4) | (payload.flags & 4);
    message.flags &= ~LOADING;
    message.pings = computePings(message.content, message.allowedMentions, !!message.messageReference);
    if (!wasLoading) {
      message.editedAt = new Date(this.now()).toISOString();
      message.edits += 1;
    }
    if (!(message.flags & EPHEMERAL)) this.dispatchBotEvent('MESSAGE_UPDATE', this.apiMessage(message), message.channelId);
    this.touch(message);
  }

  apiMessage(message: FakeMessage): APIMessage {
    const record = message.interactionId ? this.interactions.get(message.interactionId) : undefined;
    const author = this.botByUser(message.authorId) ?? this.mainBot;
    return toAPIMessage(message, {
      author: author.user,
      applicationId: author.applicationId,
      user: (id) => this.findUser(id),
      ...(record ? { interaction: { id: record.id, name: record.name, user: record.user, type: record.type } } : {}),
    });
  }

  /** Tells connected clients about a change the bot made itself (Discord echoes the bot's own messages). */
  dispatchBotEvent(t: string, d: unknown, channelId: string): void {
    if (this.gateway.sessions.size === 0) return;
    const inGuild = !!findChannel(this.guilds, channelId);
    void this.gateway.dispatch(t, d, { intent: inGuild ? INTENTS.GuildMessages : INTENTS.DirectMessages }).catch(() => {});
  }

  /** Marks a message as changed (created, edited, deleted) for waitForMessage and onActivity. */
  touch(message: FakeMessage): void {
    this.#changeSeq += 1;
    this.#changedAt.set(message, this.#changeSeq);
    this.events.emit('message');
    this.emitActivity({ kind: 'message', message });
  }

  /** Tells onActivity listeners what changed (the playground page follows the server this way). */
  emitActivity(activity: LocalDiscordActivity): void {
    this.events.emit('activity', activity);
  }

  #attachmentUrl(channelId: string, id: string, filename: string): string {
    return `${this.baseUrl}/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
  }

  // ---- interactions -----------------------------------------------------------------------------

  original(record: InteractionRecord): FakeMessage | undefined {
    return record.originalMessageId ? this.messages.find((m) => m.id === record.originalMessageId) : undefined;
  }

  recordResponse(record: InteractionRecord, response: InteractionResponse): void {
    record.responses.push(response);
    this.events.emit(`interaction:${record.id}`);
  }

  // ---- waiting ----------------------------------------------------------------------------------

  /** The change counter now: waitForMessage matches only messages changed after it. */
  changeMark(): number {
    return this.#changeSeq;
  }

  changedSince(message: FakeMessage, mark: number): boolean {
    return (this.#changedAt.get(message) ?? 0) > mark;
  }

  /** Resolves with `find()` once it finds something, re-checking on each `event`; rejects after `timeoutMs`. */
  waitFor<T>(event: string, find: () => T | undefined, timeoutMs: number, what: string, describe?: () => string): Promise<T> {
    const found = find();
    if (found !== undefined) return Promise.resolve(found);
    return new Promise<T>((resolve, reject) => {
      const onEvent = () => {
        const value = find();
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const timer = setTimeout(() => {
        cleanup();
        const seen = describe ? ` (seen: ${describe() || 'nothing'})` : '';
        reject(new LocalDiscordError('timeout', { message: `timed out after ${timeoutMs} ms waiting for ${what}${seen}` }));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.events.off(event, onEvent);
      };
      this.events.on(event, onEvent);
    });
  }
}

/** Adds a bot member with a managed role of `permissions` to `guild` (as Discord does when a bot is invited). */
function addBotMember(guild: FakeGuild, user: FakeUser, permissions: bigint): void {
  const roleId = snowflake();
  const position = Math.max(1, ...guild.roles.filter((r) => r.managed).map((r) => r.position));
  guild.roles.push({ id: roleId, name: user.username, permissions: permissions.toString(), position, managed: true, botId: user.id });
  guild.members.push({ user: { ...user, bot: true }, roles: [roleId], joinedAt: new Date().toISOString() });
}

/** A copy of `message` as it is now, kept with the response that made it. */
export function snapshot(message: FakeMessage): FakeMessage {
  return {
    ...message,
    attachments: [...message.attachments],
    pings: { ...message.pings, users: [...message.pings.users], roles: [...message.pings.roles] },
  };
}
