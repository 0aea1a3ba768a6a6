/**
 * A Discord-compatible loopback server (REST v10 + gateway v10) for end-to-end tests: a real
 * discord.js Client logs in with `new Client({ rest: { api: fake.apiUrl } })` and talks to it as it
 * would to Discord. Protocol facts: /work/shared/notes/discord-local-protocol.md.
 *
 * Behaviour a bot can trip over is modelled the way Discord behaves: 2000-character and empty
 * message limits, upload size, invalid command names, interactions acknowledged twice, the
 * MESSAGE_CONTENT intent, members missing from GUILD_CREATE without the presences intent, the
 * bot's own messages arriving as MESSAGE_CREATE, and `allowed_mentions` pings.
 *
 *   const fake = await startFakeDiscord({ voiceEndpoint: () => voice.endpoint });
 *   const client = new Client({ intents, rest: { api: fake.apiUrl } });
 *   await client.login(fake.token); await fake.waitForReady();
 *   const i = await fake.sendInteraction({ channelId: DEFAULT_IDS.general, user: alice, name: 'say', options });
 *   const last = await i.waitForResponse((r) => (r.message?.attachments.length ?? 0) > 0);
 *   ...; await client.destroy(); await fake.close();
 */
import { EventEmitter } from 'node:events';
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIApplicationCommand, APIApplicationCommandInteractionDataOption, APIMessage } from 'discord.js';
import { systemClock, type Clock } from '../util/clock.ts';
import { storeCommand, validateCommand, validateCommandList } from './commands.ts';
import { API_ERRORS, FakeDiscordError, invalidFormBody, type ApiError } from './errors.ts';
import {
  DEFAULT_BOT_USER,
  defaultGuild,
  findChannel,
  memberPermissions,
  PERMISSIONS,
  randomToken,
  snowflake,
  toAPIChannel,
  toAPIGuild,
  toAPIMember,
  toAPIRole,
  toAPIUser,
  type FakeGuild,
  type FakeMember,
  type FakeUser,
} from './fixtures.ts';
import { FakeGateway, INTENTS, type GatewaySession, type IdentifyRecord, type VoiceStateRequest } from './gateway.ts';
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
import { parseBody, type UploadedFile } from './rest/body.ts';

export type { FakeGuild, FakeMember, FakeUser } from './fixtures.ts';
export { DEFAULT_IDS, defaultGuild, PERMISSIONS } from './fixtures.ts';
export type { FakeAttachment, FakeMessage } from './messages.ts';
export type { UploadedFile } from './rest/body.ts';

export interface FakeDiscordOptions {
  applicationId?: string;
  botUser?: { id: string; username: string };
  /** Default: one guild, see `defaultGuild()`. */
  guilds?: FakeGuild[];
  /** "127.0.0.1:PORT" of the fake voice server; without it VOICE_SERVER_UPDATE is never sent. */
  voiceEndpoint?: () => string;
  /**
   * Voice token sent in VOICE_SERVER_UPDATE: a fixed string, or a function of the guild and the
   * join count. Default: `voice-<guildId>-<n>`, fresh on every join, readable via voiceCredentials().
   */
  voiceToken?: string | ((guildId: string, join: number) => string);
  /** Bot token the server accepts; default: a random one. */
  token?: string;
  /** Gateway heartbeat interval sent in Hello. */
  heartbeatIntervalMs?: number;
  /** Largest accepted upload per file (Discord's default limit is 10 MiB). */
  maxUploadBytes?: number;
  /**
   * When set, an interaction callback later than this (by `clock`) gets 404 Unknown interaction,
   * as Discord does after 3 s. Off by default: the test machine is too noisy for a wall-clock rule.
   */
  interactionCallbackDeadlineMs?: number | null;
  /**
   * An interaction's token works for its webhook (edits, follow-ups) this long after the
   * interaction, by `clock`; later requests get 404 Unknown Webhook. Discord: 15 minutes.
   */
  interactionTokenLifetimeMs?: number;
  clock?: Clock;
  /** Default timeout of the waitFor* helpers. */
  waitTimeoutMs?: number;
}

const DEFAULTS = {
  applicationId: DEFAULT_BOT_USER.id,
  botUser: DEFAULT_BOT_USER,
  guilds: [] as FakeGuild[],
  voiceEndpoint: () => '',
  voiceToken: (guildId: string, join: number) => `voice-${guildId}-${join}`,
  token: '',
  heartbeatIntervalMs: 41_250,
  maxUploadBytes: 10 * 1024 * 1024,
  interactionCallbackDeadlineMs: null,
  interactionTokenLifetimeMs: 15 * 60_000,
  clock: systemClock,
  waitTimeoutMs: 10_000,
} as const satisfies Required<FakeDiscordOptions>;

type ResolvedOptions = Omit<Required<FakeDiscordOptions>, 'voiceEndpoint' | 'botUser'> & {
  voiceEndpoint: (() => string) | undefined;
  botUser: FakeUser;
};

export interface RestLogEntry {
  method: string;
  /** Path after `/api/v10`, percent-decoded (`/webhooks/1/tok/messages/@original`). */
  path: string;
  query: Record<string, string>;
  /** Lower-case header names; Authorization is masked. */
  headers: Record<string, string>;
  /** JSON-parsed body; multipart as `{payload_json, files}`; undefined when empty. */
  body: unknown;
  status: number;
}

/** A REST failure to answer instead of the route's own answer (tests of error paths). */
export interface RestFault {
  /** Any method when omitted. */
  method?: string;
  /** Matched against the path after `/api/v10` (as in RestLogEntry.path). */
  path: RegExp;
  status: number;
  /** Discord's JSON error body; default `{ message: '<status>: <reason>', code: 0 }`. */
  body?: { message: string; code: number };
  /** How many matching requests fail; default 1. */
  count?: number;
}

export interface InteractionResponse {
  kind: 'callback' | 'editOriginal' | 'deleteOriginal' | 'followup' | 'editFollowup' | 'deleteFollowup';
  /** Callback type (4 message, 5 deferred, 6 deferred update, 7 update, 8 autocomplete, 9 modal). */
  type?: number;
  /** The callback's `data`, or the webhook request body (payload_json for multipart). */
  data: Record<string, unknown> | null;
  files: UploadedFile[];
  messageId?: string;
  /** A snapshot of the message right after this response, when one was created or edited. */
  message?: FakeMessage;
}

export interface FakeInteraction {
  id: string;
  token: string;
  /** Callback, then webhook edits / follow-ups, in the order they arrived. */
  responses(): InteractionResponse[];
  /** The first response (already received or future) matching `predicate`. */
  waitForResponse(predicate?: (r: InteractionResponse) => boolean, timeoutMs?: number): Promise<InteractionResponse>;
  /** The original response message as it stands now. */
  original(): FakeMessage | undefined;
}

export interface BotVoiceStateRequest {
  guildId: string;
  channelId: string | null;
  selfMute: boolean;
  selfDeaf: boolean;
}

/** What the fake voice server should expect in its Identify (op 0). */
export interface VoiceCredentials {
  guildId: string;
  channelId: string;
  userId: string;
  sessionId: string;
  token: string;
  endpoint: string;
}

export interface SendMessageInput {
  guildId?: string;
  channelId: string;
  author: { id: string; username: string; bot?: boolean; globalName?: string | null };
  content: string;
  /** Defaults to the author's stored member (nick, roles). */
  member?: { nick?: string | null; roles?: string[] };
  /** Default: parsed from `<@id>` in the content. */
  mentions?: Array<{ id: string; username: string; bot?: boolean }>;
  attachments?: Array<{ id?: string; filename: string; size?: number; url?: string; content_type?: string }>;
  sticker_items?: Array<{ id: string; name: string; format_type: number }>;
  embeds?: unknown[];
  webhookId?: string;
  /** Reply to this message id. */
  referenceMessageId?: string;
}

export interface SendInteractionInput {
  guildId?: string;
  channelId: string;
  user: { id: string; username: string; bot?: boolean; globalName?: string | null };
  /** Permission bitfield (decimal string); default: computed from the member's roles. */
  memberPermissions?: string;
  member?: { nick?: string | null; roles?: string[] };
  name: string;
  options?: APIApplicationCommandInteractionDataOption[];
  locale?: string;
  /** 2 = application command (default), 4 = autocomplete. */
  type?: 2 | 4;
}

export interface FakeDiscord {
  apiUrl: string;
  /** ws:// URL of the gateway. */
  gatewayUrl: string;
  token: string;
  applicationId: string;
  botUser: FakeUser;
  guilds: FakeGuild[];
  close(): Promise<void>;
  waitForReady(timeoutMs?: number): Promise<void>;
  sendMessage(m: SendMessageInput): Promise<{ id: string }>;
  sendInteraction(i: SendInteractionInput): Promise<FakeInteraction>;
  /** Moves a member (or the bot, as a moderator would) into a voice channel, or out with null. */
  setVoiceState(userId: string, guildId: string, channelId: string | null, options?: { selfDeaf?: boolean }): Promise<void>;
  closeGateway(code: number): void;
  /** op 9 Invalid Session; `resumable: false` makes the client identify again. */
  invalidateSession(resumable: boolean): void;
  /** op 7 Reconnect. */
  requestReconnect(): void;
  /** Makes the next matching REST request(s) fail (the request is still logged, with that status). */
  injectFault(fault: RestFault): void;
  requests: RestLogEntry[];
  commands: { global: APIApplicationCommand[]; guild: Record<string, APIApplicationCommand[]> };
  messages: FakeMessage[];
  botVoiceStates: BotVoiceStateRequest[];
  identifies: IdentifyRecord[];
  reactions: Array<{ channelId: string; messageId: string; emoji: string }>;
  deletions: Array<{ channelId: string; messageId: string }>;
  voiceCredentials(guildId: string): VoiceCredentials | undefined;
  checkVoiceIdentify(identify: { server_id: string; user_id: string; session_id: string; token: string }): boolean;
  /** The first bot message created, edited or deleted AFTER this call that matches (check `messages` for earlier ones). */
  waitForMessage(predicate?: (m: FakeMessage) => boolean, timeoutMs?: number): Promise<FakeMessage>;
  /** The first REST request received after this call that matches. */
  waitForRequest(predicate: (r: RestLogEntry) => boolean, timeoutMs?: number): Promise<RestLogEntry>;
  /** The first op 4 the bot sends after this call that matches. */
  waitForBotVoiceState(predicate?: (s: BotVoiceStateRequest) => boolean, timeoutMs?: number): Promise<BotVoiceStateRequest>;
  /** Raw dispatches (all sessions), for protocol-level tests. */
  readonly gateway: FakeGateway;
}

/** Starts the fake Discord on 127.0.0.1 (port 0). */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const server = new FakeDiscordServer(options);
  await server.listen();
  return server;
}

interface InteractionRecord {
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

interface RequestContext {
  params: Record<string, string>;
  query: URLSearchParams;
  /** JSON body or multipart payload_json. */
  json: unknown;
  files: UploadedFile[];
}

type RouteResult = { status: number; body?: unknown; raw?: { contentType: string; data: Buffer } } | ApiError;

interface Route {
  method: string;
  segments: string[];
  auth: boolean;
  handler: (ctx: RequestContext) => RouteResult;
}

const MAX_BODY_BYTES = 100 * 1024 * 1024;

class FakeDiscordServer implements FakeDiscord {
  apiUrl = '';
  gatewayUrl = '';
  baseUrl = '';
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: FakeUser;
  readonly guilds: FakeGuild[];
  readonly requests: RestLogEntry[] = [];
  readonly commands: { global: APIApplicationCommand[]; guild: Record<string, APIApplicationCommand[]> } = { global: [], guild: {} };
  readonly messages: FakeMessage[] = [];
  readonly botVoiceStates: BotVoiceStateRequest[] = [];
  readonly reactions: Array<{ channelId: string; messageId: string; emoji: string }> = [];
  readonly deletions: Array<{ channelId: string; messageId: string }> = [];
  readonly gateway: FakeGateway;
  readonly #options: ResolvedOptions;
  readonly #http: Server;
  readonly #events = new EventEmitter();
  readonly #routes: Route[] = [];
  readonly #interactions = new Map<string, InteractionRecord>();
  readonly #userMessages = new Map<string, APIMessage>();
  readonly #attachments = new Map<string, FakeAttachment>();
  readonly #dmChannels = new Map<string, string>();
  readonly #voice = new Map<string, VoiceCredentials>();
  #voiceTokenCounter = 0;
  #faults: Array<Required<Omit<RestFault, 'method'>> & { method: string | undefined }> = [];
  #changeSeq = 0;
  readonly #changedAt = new WeakMap<FakeMessage, number>();

  constructor(options: FakeDiscordOptions) {
    const botUser: FakeUser = { ...(options.botUser ?? DEFAULT_BOT_USER), bot: true };
    this.#options = {
      ...DEFAULTS,
      ...options,
      voiceEndpoint: options.voiceEndpoint,
      botUser,
      applicationId: options.applicationId ?? botUser.id,
    };
    this.botUser = botUser;
    this.applicationId = this.#options.applicationId;
    this.token = options.token ?? `${Buffer.from(botUser.id).toString('base64url')}.${randomToken(4)}.${randomToken(27)}`;
    this.guilds = options.guilds ?? [defaultGuild(botUser)];
    this.#events.setMaxListeners(0);
    this.gateway = new FakeGateway({
      token: this.token,
      botUser,
      applicationId: this.applicationId,
      guilds: this.guilds,
      heartbeatIntervalMs: this.#options.heartbeatIntervalMs,
      resumeUrl: () => this.gatewayUrl,
      onVoiceStateRequest: (session, request) => this.#onVoiceStateRequest(session, request),
    });
    this.#http = createServer((req, res) => void this.#onRequest(req, res));
    this.#http.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/gateway')) this.gateway.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
    this.#defineRoutes();
  }

  get identifies(): IdentifyRecord[] {
    return this.gateway.identifies;
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.#http.once('error', reject);
      this.#http.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = this.#http.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}`;
    this.apiUrl = `${this.baseUrl}/api`;
    this.gatewayUrl = `ws://127.0.0.1:${port}/gateway`;
  }

  async close(): Promise<void> {
    await this.gateway.close();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  waitForReady(timeoutMs = this.#options.waitTimeoutMs): Promise<void> {
    return this.gateway.waitForReady(timeoutMs);
  }

  closeGateway(code: number): void {
    this.gateway.closeConnections(code);
  }

  invalidateSession(resumable: boolean): void {
    this.gateway.invalidateSessions(resumable);
  }

  requestReconnect(): void {
    this.gateway.requestReconnect();
  }

  injectFault(fault: RestFault): void {
    const reason = STATUS_CODES[fault.status] ?? 'Error';
    this.#faults.push({
      method: fault.method?.toUpperCase(),
      path: fault.path,
      status: fault.status,
      body: fault.body ?? { message: `${fault.status}: ${reason}`, code: 0 },
      count: fault.count ?? 1,
    });
  }

  #takeFault(method: string, path: string): ApiError | undefined {
    const fault = this.#faults.find((f) => f.count > 0 && (f.method === undefined || f.method === method) && f.path.test(path));
    if (!fault) return undefined;
    fault.count -= 1;
    return { status: fault.status, body: fault.body };
  }

  voiceCredentials(guildId: string): VoiceCredentials | undefined {
    return this.#voice.get(guildId);
  }

  checkVoiceIdentify(identify: { server_id: string; user_id: string; session_id: string; token: string }): boolean {
    const expected = this.#voice.get(identify.server_id);
    return !!expected && expected.userId === identify.user_id && expected.sessionId === identify.session_id && expected.token === identify.token;
  }

  // The global waits match only what happens after the call (create the promise before the action),
  // so an entry left by an earlier test step never satisfies them.
  waitForMessage(predicate: (m: FakeMessage) => boolean = () => true, timeoutMs = this.#options.waitTimeoutMs): Promise<FakeMessage> {
    const since = this.#changeSeq;
    return this.#waitFor('message', () => this.messages.find((m) => (this.#changedAt.get(m) ?? 0) > since && predicate(m)), timeoutMs, 'a matching bot message');
  }

  waitForRequest(predicate: (r: RestLogEntry) => boolean, timeoutMs = this.#options.waitTimeoutMs): Promise<RestLogEntry> {
    const from = this.requests.length;
    return this.#waitFor('request', () => this.requests.slice(from).find(predicate), timeoutMs, 'a matching REST request');
  }

  waitForBotVoiceState(predicate: (s: BotVoiceStateRequest) => boolean = () => true, timeoutMs = this.#options.waitTimeoutMs): Promise<BotVoiceStateRequest> {
    const from = this.botVoiceStates.length;
    return this.#waitFor('botVoiceState', () => this.botVoiceStates.slice(from).find(predicate), timeoutMs, 'a matching bot voice state update (op 4)');
  }

  /** Marks a message as changed (created, edited, deleted) for waitForMessage. */
  #touch(message: FakeMessage): void {
    this.#changeSeq += 1;
    this.#changedAt.set(message, this.#changeSeq);
    this.#events.emit('message');
  }

  // ---- dispatching to the client -------------------------------------------------------------

  async sendMessage(input: SendMessageInput): Promise<{ id: string }> {
    const located = findChannel(this.guilds, input.channelId);
    if (input.guildId && located?.guild.id !== input.guildId) {
      throw new FakeDiscordError('FAKE_DISCORD_UNKNOWN_CHANNEL', `channel ${input.channelId} is not in guild ${input.guildId}`);
    }
    const guild = located?.guild;
    const stored = guild?.members.find((m) => m.user.id === input.author.id);
    const author: FakeUser = { ...stored?.user, ...input.author };
    const id = snowflake(this.#options.clock.now());
    const mentions = input.mentions ?? this.#mentionedUsers(input.content, guild);
    const message: Record<string, unknown> = {
      id,
      type: input.referenceMessageId ? 19 : 0,
      channel_id: input.channelId,
      author: toAPIUser(author),
      content: input.content,
      timestamp: new Date(this.#options.clock.now()).toISOString(),
      edited_timestamp: null,
      tts: false,
      mention_everyone: /@(everyone|here)\b/.test(input.content),
      mentions: mentions.map((u) => {
        const member = guild?.members.find((m) => m.user.id === u.id);
        const { user: _user, ...partial } = member ? toAPIMember(member) : { user: undefined };
        return { ...toAPIUser({ ...member?.user, ...u }), ...(member ? { member: partial } : {}) };
      }),
      mention_roles: [...new Set([...input.content.matchAll(/<@&(\d+)>/g)].map((m) => m[1]))],
      attachments: (input.attachments ?? []).map((a) => ({
        id: a.id ?? snowflake(),
        filename: a.filename,
        size: a.size ?? 0,
        url: a.url ?? `${this.baseUrl}/attachments/${input.channelId}/${a.id ?? 'x'}/${encodeURIComponent(a.filename)}`,
        proxy_url: a.url ?? `${this.baseUrl}/attachments/${input.channelId}/${a.id ?? 'x'}/${encodeURIComponent(a.filename)}`,
        ...(a.content_type ? { content_type: a.content_type } : {}),
      })),
      embeds: input.embeds ?? [],
      components: [],
      pinned: false,
      flags: 0,
      nonce: null,
    };
    if (input.sticker_items) message.sticker_items = input.sticker_items;
    if (guild) message.guild_id = guild.id;
    if (input.webhookId) {
      message.webhook_id = input.webhookId;
    } else if (guild) {
      const { user: _user, ...partial } = toAPIMember({
        user: author,
        roles: input.member?.roles ?? stored?.roles ?? [],
        nick: input.member?.nick !== undefined ? input.member.nick : (stored?.nick ?? null),
        ...(stored?.joinedAt ? { joinedAt: stored.joinedAt } : {}),
      });
      message.member = partial;
    }
    if (input.referenceMessageId) {
      message.message_reference = { type: 0, message_id: input.referenceMessageId, channel_id: input.channelId, ...(guild ? { guild_id: guild.id } : {}) };
      const referenced = this.#findAnyMessage(input.referenceMessageId);
      if (referenced) message.referenced_message = referenced;
    }
    this.#userMessages.set(id, message as unknown as APIMessage);
    const mentionsBot = mentions.some((u) => u.id === this.botUser.id);
    await this.gateway.dispatch('MESSAGE_CREATE', message, {
      intent: guild ? INTENTS.GuildMessages : INTENTS.DirectMessages,
      // Without the privileged MESSAGE_CONTENT intent Discord blanks these fields, except in DMs and
      // messages that mention the bot (https://discord.com/developers/docs/events/gateway#message-content-intent).
      transform: (d, session) =>
        session.intents & INTENTS.MessageContent || !guild || mentionsBot
          ? d
          : { ...(d as object), content: '', embeds: [], attachments: [], components: [] },
    });
    return { id };
  }

  async sendInteraction(input: SendInteractionInput): Promise<FakeInteraction> {
    const located = findChannel(this.guilds, input.channelId);
    if (input.guildId && located?.guild.id !== input.guildId) {
      throw new FakeDiscordError('FAKE_DISCORD_UNKNOWN_CHANNEL', `channel ${input.channelId} is not in guild ${input.guildId}`);
    }
    const guild = located?.guild;
    const stored = guild?.members.find((m) => m.user.id === input.user.id);
    const user: FakeUser = { ...stored?.user, ...input.user };
    const type = input.type ?? 2;
    const record: InteractionRecord = {
      id: snowflake(this.#options.clock.now()),
      token: `aW50ZXJhY3Rpb246${randomToken(48)}`,
      type,
      name: input.name,
      user,
      channelId: input.channelId,
      createdAt: this.#options.clock.now(),
      responses: [],
    };
    if (guild) record.guildId = guild.id;
    this.#interactions.set(record.id, record);
    const command = [...(guild ? (this.commands.guild[guild.id] ?? []) : []), ...this.commands.global].find((c) => c.name === input.name);
    const data: Record<string, unknown> = {
      id: command?.id ?? snowflake(),
      name: input.name,
      type: 1,
      ...(input.options ? { options: input.options } : {}),
      ...(guild && command?.guild_id ? { guild_id: guild.id } : {}),
    };
    if (guild && input.options) {
      const resolved = this.#resolveOptions(guild, input.options);
      if (resolved) data.resolved = resolved;
    }
    const payload: Record<string, unknown> = {
      id: record.id,
      application_id: this.applicationId,
      type,
      token: record.token,
      version: 1,
      data,
      locale: input.locale ?? 'ja',
      entitlements: [],
      attachment_size_limit: this.#options.maxUploadBytes,
    };
    if (guild && located) {
      const permissions = input.memberPermissions ?? memberPermissions(guild, user.id).toString();
      const member: FakeMember = {
        user,
        roles: input.member?.roles ?? stored?.roles ?? [],
        nick: input.member?.nick !== undefined ? input.member.nick : (stored?.nick ?? null),
        ...(stored?.joinedAt ? { joinedAt: stored.joinedAt } : {}),
      };
      Object.assign(payload, {
        guild_id: guild.id,
        guild: { id: guild.id, locale: guild.preferredLocale ?? 'en-US', features: [] },
        guild_locale: guild.preferredLocale ?? 'en-US',
        channel_id: located.channel.id,
        channel: toAPIChannel(located.channel, guild.id),
        member: { ...toAPIMember(member), permissions },
        app_permissions: memberPermissions(guild, this.botUser.id).toString(),
        authorizing_integration_owners: { '0': guild.id },
        context: 0,
      });
    } else {
      Object.assign(payload, {
        channel_id: input.channelId,
        channel: { id: input.channelId, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(user)] },
        user: toAPIUser(user),
        app_permissions: '0',
        authorizing_integration_owners: { '0': '0' },
        context: 1,
      });
    }
    await this.gateway.dispatch('INTERACTION_CREATE', payload);
    return this.#interactionHandle(record);
  }

  async setVoiceState(userId: string, guildId: string, channelId: string | null, options: { selfDeaf?: boolean } = {}): Promise<void> {
    const guild = this.guilds.find((g) => g.id === guildId);
    if (!guild) throw new FakeDiscordError('FAKE_DISCORD_UNKNOWN_GUILD', `unknown guild ${guildId}`);
    const previous = guild.voiceStates.find((v) => v.userId === userId);
    guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== userId);
    const sessionId = previous?.sessionId ?? randomToken(16);
    const selfDeaf = options.selfDeaf ?? false;
    if (channelId) guild.voiceStates.push({ userId, channelId, sessionId, selfMute: false, selfDeaf });
    if (this.gateway.sessions.size === 0) return; // state only: the next GUILD_CREATE carries it
    const member = guild.members.find((m) => m.user.id === userId);
    await this.gateway.dispatch(
      'VOICE_STATE_UPDATE',
      {
        guild_id: guildId,
        channel_id: channelId,
        user_id: userId,
        ...(member ? { member: toAPIMember(member) } : {}),
        session_id: sessionId,
        deaf: false,
        mute: false,
        self_deaf: selfDeaf,
        self_mute: false,
        self_video: false,
        suppress: false,
        request_to_speak_timestamp: null,
      },
      { intent: INTENTS.GuildVoiceStates },
    );
  }

  // ---- gateway op 4 -----------------------------------------------------------------------------

  #onVoiceStateRequest(session: GatewaySession, request: VoiceStateRequest): void {
    const state: BotVoiceStateRequest = {
      guildId: request.guild_id,
      channelId: request.channel_id ?? null,
      selfMute: !!request.self_mute,
      selfDeaf: !!request.self_deaf,
    };
    this.botVoiceStates.push(state);
    this.#events.emit('botVoiceState');
    const guild = this.guilds.find((g) => g.id === state.guildId);
    if (!guild) return;
    if (state.channelId) {
      const channel = guild.channels.find((c) => c.id === state.channelId);
      if (!channel || (channel.type !== 2 && channel.type !== 13)) return;
    }
    const botId = this.botUser.id;
    // Discord uses the gateway session id as the voice session id.
    const sessionId = session.id;
    guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== botId);
    if (state.channelId) guild.voiceStates.push({ userId: botId, channelId: state.channelId, sessionId, selfMute: state.selfMute, selfDeaf: state.selfDeaf });
    const member = guild.members.find((m) => m.user.id === botId) ?? { user: this.botUser, roles: [] };
    const dispatches: Promise<void>[] = [
      this.gateway.dispatch(
        'VOICE_STATE_UPDATE',
        {
          guild_id: guild.id,
          channel_id: state.channelId,
          user_id: botId,
          member: toAPIMember(member),
          session_id: sessionId,
          deaf: false,
          mute: false,
          self_deaf: state.selfDeaf,
          self_mute: state.selfMute,
          self_video: false,
          suppress: false,
          request_to_speak_timestamp: null,
        },
        { intent: INTENTS.GuildVoiceStates },
      ),
    ];
    if (!state.channelId) {
      this.#voice.delete(guild.id);
    } else if (this.#options.voiceEndpoint) {
      this.#voiceTokenCounter += 1;
      const credentials: VoiceCredentials = {
        guildId: guild.id,
        channelId: state.channelId,
        userId: botId,
        sessionId,
        token: typeof this.#options.voiceToken === 'string' ? this.#options.voiceToken : this.#options.voiceToken(guild.id, this.#voiceTokenCounter),
        endpoint: this.#options.voiceEndpoint(),
      };
      this.#voice.set(guild.id, credentials);
      dispatches.push(this.gateway.dispatch('VOICE_SERVER_UPDATE', { token: credentials.token, guild_id: guild.id, endpoint: credentials.endpoint }));
    }
    void Promise.all(dispatches).catch(() => {});
  }

  // ---- REST -------------------------------------------------------------------------------------

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.baseUrl);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of req) {
      size += (chunk as Buffer).length;
      if (size > MAX_BODY_BYTES) {
        reply(res, API_ERRORS.entityTooLarge);
        return;
      }
      chunks.push(chunk as Buffer);
    }
    const raw = Buffer.concat(chunks);
    if (url.pathname.startsWith('/attachments/')) {
      const id = decodeURIComponent(url.pathname.split('/')[3] ?? '');
      const attachment = this.#attachments.get(id);
      if (!attachment || req.method !== 'GET') return reply(res, API_ERRORS.notFound);
      res.writeHead(200, { 'content-type': attachment.contentType, 'content-length': attachment.data.length });
      res.end(attachment.data);
      return;
    }
    const prefix = '/api/v10';
    const routePath = url.pathname.startsWith(`${prefix}/`) ? url.pathname.slice(prefix.length) : url.pathname;
    const segments = routePath.split('/').slice(1).map((s) => safeDecode(s));
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined) continue;
      headers[name] = name === 'authorization' ? maskAuthorization(String(value)) : Array.isArray(value) ? value.join(', ') : value;
    }
    const entry: RestLogEntry = {
      method: req.method ?? 'GET',
      path: '/' + segments.join('/'),
      query: Object.fromEntries(url.searchParams),
      headers,
      body: undefined,
      status: 0,
    };
    const parsed = await parseBody(raw, req.headers['content-type']);
    entry.body = parsed.ok ? parsed.logged : raw.toString('utf8');
    this.requests.push(entry);
    let result: RouteResult;
    const fault = this.#takeFault(entry.method, entry.path);
    if (fault) {
      result = fault;
    } else if (!url.pathname.startsWith(`${prefix}/`)) {
      result = API_ERRORS.notFound;
    } else if (!parsed.ok) {
      result = parsed.error;
    } else {
      result = this.#route(entry.method, segments, req.headers.authorization, { params: {}, query: url.searchParams, json: parsed.json, files: parsed.files });
    }
    entry.status = result.status;
    this.#events.emit('request');
    if ('raw' in result && result.raw) {
      res.writeHead(result.status, { 'content-type': result.raw.contentType });
      res.end(result.raw.data);
      return;
    }
    reply(res, result);
  }

  #route(method: string, segments: string[], authorization: string | undefined, ctx: RequestContext): RouteResult {
    for (const route of this.#routes) {
      if (route.method !== method || route.segments.length !== segments.length) continue;
      const params: Record<string, string> = {};
      let matched = true;
      for (const [i, pattern] of route.segments.entries()) {
        const actual = segments[i] as string;
        if (pattern.startsWith(':')) params[pattern.slice(1)] = actual;
        else if (pattern !== actual) {
          matched = false;
          break;
        }
      }
      if (!matched) continue;
      if (route.auth && authorization !== `Bot ${this.token}`) return API_ERRORS.unauthorized;
      return route.handler({ ...ctx, params });
    }
    return API_ERRORS.notFound;
  }

  #on(method: string, path: string, handler: (ctx: RequestContext) => RouteResult, auth = true): void {
    this.#routes.push({ method, segments: path.split('/').slice(1), auth, handler });
  }

  #defineRoutes(): void {
    const ok = (body: unknown, status = 200): RouteResult => ({ status, body });
    const noContent: RouteResult = { status: 204 };

    this.#on('GET', '/gateway', () => ok({ url: this.gatewayUrl }), false);
    this.#on('GET', '/gateway/bot', () =>
      ok({ url: this.gatewayUrl, shards: 1, session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 } }),
    );
    this.#on('GET', '/users/@me', () => ok({ ...toAPIUser(this.botUser), bot: true, verified: true, mfa_enabled: false, email: null, locale: 'en-US' }));
    this.#on('GET', '/users/:user', ({ params }) => {
      const user = this.#findUser(params.user as string);
      return user ? ok(toAPIUser(user)) : API_ERRORS.unknownUser;
    });
    this.#on('POST', '/users/@me/channels', ({ json }) => {
      const recipient = this.#findUser(String((json as Record<string, unknown> | undefined)?.recipient_id));
      if (!recipient) return API_ERRORS.unknownUser;
      let channelId = [...this.#dmChannels].find(([, userId]) => userId === recipient.id)?.[0];
      if (!channelId) {
        channelId = snowflake();
        this.#dmChannels.set(channelId, recipient.id);
      }
      return ok({ id: channelId, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(recipient)] });
    });
    const application = () => ({
      id: this.applicationId,
      name: this.botUser.username,
      icon: null,
      description: '',
      bot_public: true,
      bot_require_code_grant: false,
      verify_key: '0'.repeat(64),
      flags: 0,
      team: null,
      owner: { id: this.guilds[0]?.ownerId ?? '1', username: 'owner', discriminator: '0', global_name: null, avatar: null },
      bot: toAPIUser(this.botUser),
      approximate_guild_count: this.guilds.length,
      summary: '',
    });
    this.#on('GET', '/applications/@me', () => ok(application()));
    this.#on('GET', '/oauth2/applications/@me', () => ok(application()));

    // Application commands, global and per guild.
    const commandList = (params: Record<string, string>): APIApplicationCommand[] | ApiError => {
      if (params.app !== this.applicationId) return API_ERRORS.missingAccess;
      if (params.guild === undefined) return this.commands.global;
      if (!this.guilds.some((g) => g.id === params.guild)) return API_ERRORS.missingAccess;
      return (this.commands.guild[params.guild] ??= []);
    };
    const setList = (params: Record<string, string>, list: APIApplicationCommand[]) => {
      if (params.guild === undefined) this.commands.global = list;
      else this.commands.guild[params.guild] = list;
    };
    for (const base of ['/applications/:app/commands', '/applications/:app/guilds/:guild/commands']) {
      this.#on('GET', base, ({ params }) => {
        const list = commandList(params);
        return Array.isArray(list) ? ok(list) : list;
      });
      this.#on('PUT', base, ({ params, json }) => {
        const list = commandList(params);
        if (!Array.isArray(list)) return list;
        const valid = validateCommandList(json);
        if (!valid.ok) return valid.error;
        const stored = (json as Array<Record<string, unknown>>).map((c) => storeCommand(c, this.applicationId, params.guild, list));
        setList(params, stored);
        return ok(stored);
      });
      this.#on('POST', base, ({ params, json }) => {
        const list = commandList(params);
        if (!Array.isArray(list)) return list;
        const valid = validateCommand(json);
        if (!valid.ok) return valid.error;
        const command = storeCommand(json as Record<string, unknown>, this.applicationId, params.guild, list);
        const replaced = list.some((c) => c.id === command.id);
        setList(params, [...list.filter((c) => c.id !== command.id), command]);
        return ok(command, replaced ? 200 : 201);
      });
      this.#on('GET', `${base}/:command`, ({ params }) => {
        const list = commandList(params);
        if (!Array.isArray(list)) return list;
        const command = list.find((c) => c.id === params.command);
        return command ? ok(command) : API_ERRORS.unknownCommand;
      });
      this.#on('PATCH', `${base}/:command`, ({ params, json }) => {
        const list = commandList(params);
        if (!Array.isArray(list)) return list;
        const current = list.find((c) => c.id === params.command);
        if (!current) return API_ERRORS.unknownCommand;
        const merged = { ...current, ...(json as object) } as Record<string, unknown>;
        const valid = validateCommand(merged);
        if (!valid.ok) return valid.error;
        const command = storeCommand(merged, this.applicationId, params.guild, list);
        setList(params, list.map((c) => (c.id === current.id ? command : c)));
        return ok(command);
      });
      this.#on('DELETE', `${base}/:command`, ({ params }) => {
        const list = commandList(params);
        if (!Array.isArray(list)) return list;
        if (!list.some((c) => c.id === params.command)) return API_ERRORS.unknownCommand;
        setList(params, list.filter((c) => c.id !== params.command));
        return noContent;
      });
    }

    // Interaction callback and the interaction webhook (no Authorization header).
    this.#on('POST', '/interactions/:id/:token/callback', (ctx) => this.#interactionCallback(ctx), false);
    this.#on('POST', '/webhooks/:app/:token', (ctx) => this.#followUp(ctx), false);
    this.#on('GET', '/webhooks/:app/:token/messages/:message', (ctx) => this.#webhookMessage(ctx, 'get'), false);
    this.#on('PATCH', '/webhooks/:app/:token/messages/:message', (ctx) => this.#webhookMessage(ctx, 'edit'), false);
    this.#on('DELETE', '/webhooks/:app/:token/messages/:message', (ctx) => this.#webhookMessage(ctx, 'delete'), false);

    // Channels and messages.
    this.#on('GET', '/channels/:channel', ({ params }) => {
      const located = findChannel(this.guilds, params.channel as string);
      if (located) return ok(toAPIChannel(located.channel, located.guild.id));
      const dmUser = this.#dmChannels.get(params.channel as string);
      const recipient = dmUser ? this.#findUser(dmUser) : undefined;
      return recipient ? ok({ id: params.channel, type: 1, last_message_id: null, flags: 0, recipients: [toAPIUser(recipient)] }) : API_ERRORS.unknownChannel;
    });
    this.#on('POST', '/channels/:channel/messages', (ctx) => this.#createChannelMessage(ctx));
    this.#on('POST', '/channels/:channel/typing', ({ params }) => (this.#channelExists(params.channel as string) ? noContent : API_ERRORS.unknownChannel));
    this.#on('GET', '/channels/:channel/messages/:message', ({ params }) => {
      const own = this.messages.find((m) => m.id === params.message && m.channelId === params.channel && !m.deleted);
      if (own) return ok(this.#apiMessage(own));
      const other = this.#userMessages.get(params.message as string);
      return other && other.channel_id === params.channel ? ok(other) : API_ERRORS.unknownMessage;
    });
    this.#on('PATCH', '/channels/:channel/messages/:message', (ctx) => {
      const message = this.messages.find((m) => m.id === ctx.params.message && m.channelId === ctx.params.channel && !m.deleted);
      if (!message) return this.#userMessages.has(ctx.params.message as string) ? API_ERRORS.cannotEditOthers : API_ERRORS.unknownMessage;
      return this.#editMessage(message, ctx);
    });
    this.#on('DELETE', '/channels/:channel/messages/:message', ({ params }) => {
      const channelId = params.channel as string;
      const messageId = params.message as string;
      const own = this.messages.find((m) => m.id === messageId && m.channelId === channelId && !m.deleted);
      if (own) {
        own.deleted = true;
      } else {
        const other = this.#userMessages.get(messageId);
        if (!other || other.channel_id !== channelId) return API_ERRORS.unknownMessage;
        const located = findChannel(this.guilds, channelId);
        if (located && !(memberPermissions(located.guild, this.botUser.id) & PERMISSIONS.ManageMessages)) return missingPermissions();
        this.#userMessages.delete(messageId);
      }
      this.deletions.push({ channelId, messageId });
      this.#dispatchBotEvent('MESSAGE_DELETE', { id: messageId, channel_id: channelId, ...guildIdOf(this.guilds, channelId) }, channelId);
      if (own) this.#touch(own);
      return noContent;
    });
    this.#on('PUT', '/channels/:channel/messages/:message/reactions/:emoji/@me', ({ params }) => {
      if (!this.#findAnyMessage(params.message as string)) return API_ERRORS.unknownMessage;
      this.reactions.push({ channelId: params.channel as string, messageId: params.message as string, emoji: params.emoji as string });
      return noContent;
    });

    // Guilds and members.
    const guildOf = (id: string | undefined) => this.guilds.find((g) => g.id === id);
    this.#on('GET', '/guilds/:guild', ({ params }) => {
      const guild = guildOf(params.guild);
      return guild ? ok({ ...toAPIGuild(guild), approximate_member_count: guild.members.length }) : API_ERRORS.unknownGuild;
    });
    this.#on('GET', '/guilds/:guild/channels', ({ params }) => {
      const guild = guildOf(params.guild);
      return guild ? ok(guild.channels.map((c) => toAPIChannel(c, guild.id))) : API_ERRORS.unknownGuild;
    });
    this.#on('GET', '/guilds/:guild/roles', ({ params }) => {
      const guild = guildOf(params.guild);
      return guild ? ok(guild.roles.map(toAPIRole)) : API_ERRORS.unknownGuild;
    });
    this.#on('GET', '/guilds/:guild/members', ({ params, query }) => {
      const guild = guildOf(params.guild);
      if (!guild) return API_ERRORS.unknownGuild;
      const limit = Number(query.get('limit') ?? 1);
      const after = BigInt(query.get('after') ?? '0');
      const members = guild.members.filter((m) => BigInt(m.user.id) > after).sort((a, b) => (BigInt(a.user.id) < BigInt(b.user.id) ? -1 : 1));
      return ok(members.slice(0, limit).map(toAPIMember));
    });
    this.#on('GET', '/guilds/:guild/members/:user', ({ params }) => {
      const guild = guildOf(params.guild);
      if (!guild) return API_ERRORS.unknownGuild;
      const userId = params.user === '@me' ? this.botUser.id : params.user;
      const member = guild.members.find((m) => m.user.id === userId);
      return member ? ok(toAPIMember(member)) : API_ERRORS.unknownMember;
    });
    this.#on('GET', '/guilds/:guild/voice-states/:user', ({ params }) => {
      const guild = guildOf(params.guild);
      if (!guild) return API_ERRORS.unknownGuild;
      const userId = params.user === '@me' ? this.botUser.id : params.user;
      const state = guild.voiceStates.find((v) => v.userId === userId);
      return state ? ok({ guild_id: guild.id, user_id: state.userId, channel_id: state.channelId, session_id: state.sessionId, deaf: false, mute: false, self_deaf: state.selfDeaf, self_mute: state.selfMute, self_video: false, suppress: false, request_to_speak_timestamp: null }) : { status: 404, body: { message: 'Unknown Voice State', code: 10065 } };
    });
  }

  // ---- interactions -----------------------------------------------------------------------------

  #interactionCallback({ params, query, json, files }: RequestContext): RouteResult {
    const record = this.#interactions.get(params.id as string);
    if (!record || record.token !== params.token) return API_ERRORS.unknownInteraction;
    const deadline = this.#options.interactionCallbackDeadlineMs;
    if (deadline !== null && this.#options.clock.now() - record.createdAt > deadline) return API_ERRORS.unknownInteraction;
    if (record.callbackType !== undefined) return API_ERRORS.alreadyAcknowledged;
    const body = (json ?? {}) as { type?: unknown; data?: Record<string, unknown> };
    const type = body.type;
    const allowed = record.type === 4 ? [8] : [4, 5, 9];
    if (typeof type !== 'number' || !allowed.includes(type)) return invalidFormBody('type', 'INTERACTION_CALLBACK_TYPE_INVALID', `Interaction callback type ${String(type)} is not valid for this interaction`);
    const data = body.data ?? null;
    const response: InteractionResponse = { kind: 'callback', type, data, files };
    let message: FakeMessage | undefined;
    if (type === 4 || type === 5) {
      const payload = data ?? {};
      if (type === 4) {
        const valid = validateMessageBody(payload, files, true, this.#options.maxUploadBytes);
        if (!valid.ok) return valid.error;
      }
      const flags = Number(payload.flags ?? 0);
      message = this.#createMessage(type === 4 ? payload : { flags }, type === 4 ? files : [], {
        source: 'interaction',
        channelId: record.channelId,
        interactionId: record.id,
        flags: type === 5 ? (flags & EPHEMERAL) | LOADING : flags,
      });
      record.originalMessageId = message.id;
      response.messageId = message.id;
      response.message = snapshot(message);
    } else if (type === 8) {
      const choices = data?.choices;
      if (!Array.isArray(choices)) return invalidFormBody('data.choices', 'BASE_TYPE_REQUIRED', 'This field is required');
      if (choices.length > 25) return invalidFormBody('data.choices', 'BASE_TYPE_MAX_LENGTH', 'Must be 25 or fewer in length.');
    }
    record.callbackType = type;
    this.#recordResponse(record, response);
    if (query.get('with_response') !== 'true') return { status: 204 };
    return {
      status: 200,
      body: {
        interaction: {
          id: record.id,
          type: record.type,
          ...(message
            ? { response_message_id: message.id, response_message_loading: type === 5, response_message_ephemeral: (message.flags & EPHEMERAL) !== 0 }
            : {}),
        },
        ...(message ? { resource: { type, message: this.#apiMessage(message) } } : type === 8 ? {} : { resource: { type } }),
      },
    };
  }

  #webhookRecord(params: Record<string, string>): InteractionRecord | undefined {
    if (params.app !== this.applicationId) return undefined;
    for (const record of this.#interactions.values()) {
      if (record.token !== params.token) continue;
      // An expired interaction token no longer names a webhook.
      return this.#options.clock.now() - record.createdAt > this.#options.interactionTokenLifetimeMs ? undefined : record;
    }
    return undefined;
  }

  #followUp(ctx: RequestContext): RouteResult {
    const record = this.#webhookRecord(ctx.params);
    // Follow-ups need an acknowledged interaction; before that the webhook does not exist.
    if (!record || record.callbackType === undefined) return API_ERRORS.unknownWebhook;
    const payload = (ctx.json ?? {}) as Record<string, unknown>;
    const valid = validateMessageBody(payload, ctx.files, true, this.#options.maxUploadBytes);
    if (!valid.ok) return valid.error;
    const original = this.#original(record);
    let message: FakeMessage;
    if (original && original.flags & LOADING) {
      // After a deferred reply the first follow-up replaces the "thinking..." message, keeping its
      // ephemeral flag (https://discord.com/developers/docs/interactions/receiving-and-responding#followup-messages).
      this.#applyEdit(original, payload, ctx.files);
      message = original;
    } else {
      message = this.#createMessage(payload, ctx.files, { source: 'followup', channelId: record.channelId, interactionId: record.id, flags: Number(payload.flags ?? 0) });
    }
    this.#recordResponse(record, { kind: 'followup', data: payload, files: ctx.files, messageId: message.id, message: snapshot(message) });
    return ctx.query.get('wait') === 'true' ? { status: 200, body: this.#apiMessage(message) } : { status: 204 };
  }

  #webhookMessage(ctx: RequestContext, action: 'get' | 'edit' | 'delete'): RouteResult {
    const record = this.#webhookRecord(ctx.params);
    if (!record) return API_ERRORS.unknownWebhook;
    const isOriginal = ctx.params.message === '@original';
    const message = isOriginal
      ? this.#original(record)
      : this.messages.find((m) => m.id === ctx.params.message && m.interactionId === record.id);
    if (!message || message.deleted) return API_ERRORS.unknownMessage;
    if (action === 'get') return { status: 200, body: this.#apiMessage(message) };
    if (action === 'delete') {
      message.deleted = true;
      this.deletions.push({ channelId: message.channelId, messageId: message.id });
      this.#recordResponse(record, { kind: isOriginal ? 'deleteOriginal' : 'deleteFollowup', data: null, files: [], messageId: message.id });
      if (!(message.flags & EPHEMERAL)) this.#dispatchBotEvent('MESSAGE_DELETE', { id: message.id, channel_id: message.channelId, ...guildIdOf(this.guilds, message.channelId) }, message.channelId);
      this.#touch(message);
      return { status: 204 };
    }
    const payload = (ctx.json ?? {}) as Record<string, unknown>;
    const valid = validateMessageBody(payload, ctx.files, false, this.#options.maxUploadBytes);
    if (!valid.ok) return valid.error;
    this.#applyEdit(message, payload, ctx.files);
    this.#recordResponse(record, { kind: isOriginal ? 'editOriginal' : 'editFollowup', data: payload, files: ctx.files, messageId: message.id, message: snapshot(message) });
    return { status: 200, body: this.#apiMessage(message) };
  }

  #original(record: InteractionRecord): FakeMessage | undefined {
    return record.originalMessageId ? this.messages.find((m) => m.id === record.originalMessageId) : undefined;
  }

  #recordResponse(record: InteractionRecord, response: InteractionResponse): void {
    record.responses.push(response);
    this.#events.emit(`interaction:${record.id}`);
  }

  #interactionHandle(record: InteractionRecord): FakeInteraction {
    return {
      id: record.id,
      token: record.token,
      responses: () => [...record.responses],
      waitForResponse: (predicate = () => true, timeoutMs = this.#options.waitTimeoutMs) =>
        this.#waitFor(`interaction:${record.id}`, () => record.responses.find(predicate), timeoutMs, `a matching response to interaction /${record.name}`, () =>
          record.responses.map((r) => `${r.kind}${r.type !== undefined ? `(${r.type})` : ''}`).join(', '),
        ),
      original: () => this.#original(record),
    };
  }

  #resolveOptions(guild: FakeGuild, options: readonly APIApplicationCommandInteractionDataOption[]): Record<string, Record<string, unknown>> | undefined {
    const resolved: Record<string, Record<string, unknown>> = {};
    const add = (kind: string, id: string, value: unknown) => ((resolved[kind] ??= {})[id] = value);
    const walk = (list: readonly APIApplicationCommandInteractionDataOption[]) => {
      for (const option of list) {
        if ('options' in option && option.options) walk(option.options as APIApplicationCommandInteractionDataOption[]);
        if (!('value' in option)) continue;
        const id = String(option.value);
        // 6 user, 7 channel, 8 role, 9 mentionable
        if (option.type === 6 || option.type === 9) {
          const member = guild.members.find((m) => m.user.id === id);
          if (member) {
            add('users', id, toAPIUser(member.user));
            const { user: _user, ...partial } = toAPIMember(member);
            add('members', id, { ...partial, permissions: memberPermissions(guild, id).toString() });
          }
        }
        if (option.type === 7) {
          const channel = guild.channels.find((c) => c.id === id);
          if (channel) add('channels', id, { id, name: channel.name, type: channel.type, permissions: memberPermissions(guild, this.botUser.id).toString() });
        }
        if (option.type === 8 || option.type === 9) {
          const role = guild.roles.find((r) => r.id === id);
          if (role) add('roles', id, toAPIRole(role));
        }
      }
    };
    walk(options);
    return Object.keys(resolved).length > 0 ? resolved : undefined;
  }

  // ---- messages ---------------------------------------------------------------------------------

  #createChannelMessage(ctx: RequestContext): RouteResult {
    const channelId = ctx.params.channel as string;
    if (!this.#channelExists(channelId)) return API_ERRORS.unknownChannel;
    const located = findChannel(this.guilds, channelId);
    if (located) {
      if (located.channel.type === 4) return { status: 400, body: { message: 'Cannot send messages in a non-text channel', code: 50008 } };
      const perms = memberPermissions(located.guild, this.botUser.id);
      const needed = PERMISSIONS.ViewChannel | PERMISSIONS.SendMessages | (ctx.files.length > 0 ? PERMISSIONS.AttachFiles : 0n);
      if ((perms & needed) !== needed) return missingPermissions();
    }
    const payload = (ctx.json ?? {}) as Record<string, unknown>;
    const valid = validateMessageBody(payload, ctx.files, true, this.#options.maxUploadBytes);
    if (!valid.ok) return valid.error;
    const reference = payload.message_reference as FakeMessage['messageReference'] | undefined;
    if (reference?.message_id && !this.#findAnyMessage(reference.message_id) && reference.fail_if_not_exists !== false) {
      return invalidFormBody('message_reference', 'MESSAGE_REFERENCE_UNKNOWN_MESSAGE', 'Unknown message');
    }
    const message = this.#createMessage(payload, ctx.files, { source: 'channel', channelId, flags: Number(payload.flags ?? 0) & ~EPHEMERAL });
    return { status: 200, body: this.#apiMessage(message) };
  }

  #createMessage(payload: Record<string, unknown>, files: UploadedFile[], meta: { source: MessageSource; channelId: string; interactionId?: string; flags: number }): FakeMessage {
    const now = new Date(this.#options.clock.now()).toISOString();
    const reference = payload.message_reference as FakeMessage['messageReference'] | undefined;
    const content = typeof payload.content === 'string' ? payload.content : '';
    const message: FakeMessage = {
      id: snowflake(this.#options.clock.now()),
      channelId: meta.channelId,
      authorId: this.botUser.id,
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
    const guildId = guildIdOf(this.guilds, meta.channelId).guild_id;
    if (guildId) message.guildId = guildId;
    if (meta.interactionId) message.interactionId = meta.interactionId;
    if (reference?.message_id) message.messageReference = reference;
    for (const a of message.attachments) this.#attachments.set(a.id, a);
    this.messages.push(message);
    if (!(message.flags & EPHEMERAL)) this.#dispatchBotEvent('MESSAGE_CREATE', this.#apiMessage(message), message.channelId);
    this.#touch(message);
    return message;
  }

  #editMessage(message: FakeMessage, ctx: RequestContext): RouteResult {
    const payload = (ctx.json ?? {}) as Record<string, unknown>;
    const valid = validateMessageBody(payload, ctx.files, false, this.#options.maxUploadBytes);
    if (!valid.ok) return valid.error;
    this.#applyEdit(message, payload, ctx.files);
    return { status: 200, body: this.#apiMessage(message) };
  }

  #applyEdit(message: FakeMessage, payload: Record<string, unknown>, files: UploadedFile[]): void {
    const wasLoading = (message.flags & LOADING) !== 0;
    if ('content' in payload) message.content = typeof payload.content === 'string' ? payload.content : '';
    if ('embeds' in payload) message.embeds = Array.isArray(payload.embeds) ? payload.embeds : [];
    if ('components' in payload) message.components = Array.isArray(payload.components) ? payload.components : [];
    if ('allowed_mentions' in payload) message.allowedMentions = payload.allowed_mentions;
    if ('attachments' in payload || files.length > 0) {
      message.attachments = resolveAttachments(payload, files, message.attachments, (id, name) => this.#attachmentUrl(message.channelId, id, name));
      for (const a of message.attachments) this.#attachments.set(a.id, a);
    }
    // Only SUPPRESS_EMBEDS (4) is editable; the loading flag clears on the first edit.
    if (typeof payload.flags === 'number') message.flags = (message.flags & ~4) | (payload.flags & 4);
    message.flags &= ~LOADING;
    message.pings = computePings(message.content, message.allowedMentions, !!message.messageReference);
    if (!wasLoading) {
      message.editedAt = new Date(this.#options.clock.now()).toISOString();
      message.edits += 1;
    }
    if (!(message.flags & EPHEMERAL)) this.#dispatchBotEvent('MESSAGE_UPDATE', this.#apiMessage(message), message.channelId);
    this.#touch(message);
  }

  #apiMessage(message: FakeMessage): APIMessage {
    const record = message.interactionId ? this.#interactions.get(message.interactionId) : undefined;
    return toAPIMessage(message, {
      author: this.botUser,
      applicationId: this.applicationId,
      user: (id) => this.#findUser(id),
      ...(record ? { interaction: { id: record.id, name: record.name, user: record.user, type: record.type } } : {}),
    });
  }

  #dispatchBotEvent(t: string, d: unknown, channelId: string): void {
    if (this.gateway.sessions.size === 0) return;
    const inGuild = !!findChannel(this.guilds, channelId);
    void this.gateway.dispatch(t, d, { intent: inGuild ? INTENTS.GuildMessages : INTENTS.DirectMessages }).catch(() => {});
  }

  #attachmentUrl(channelId: string, id: string, filename: string): string {
    return `${this.baseUrl}/attachments/${channelId}/${id}/${encodeURIComponent(filename)}`;
  }

  #channelExists(channelId: string): boolean {
    return !!findChannel(this.guilds, channelId) || this.#dmChannels.has(channelId);
  }

  #findAnyMessage(id: string): APIMessage | undefined {
    const own = this.messages.find((m) => m.id === id && !m.deleted);
    return own ? this.#apiMessage(own) : this.#userMessages.get(id);
  }

  #findUser(id: string): FakeUser | undefined {
    if (id === this.botUser.id) return this.botUser;
    for (const guild of this.guilds) {
      const member = guild.members.find((m) => m.user.id === id);
      if (member) return member.user;
    }
    return undefined;
  }

  #mentionedUsers(content: string, guild: FakeGuild | undefined): FakeUser[] {
    const ids = [...new Set([...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1] as string))];
    return ids.map((id) => guild?.members.find((m) => m.user.id === id)?.user ?? this.#findUser(id)).filter((u): u is FakeUser => u !== undefined);
  }

  // ---- waiting ----------------------------------------------------------------------------------

  #waitFor<T>(event: string, find: () => T | undefined, timeoutMs: number, what: string, describe?: () => string): Promise<T> {
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
        reject(new FakeDiscordError('FAKE_DISCORD_TIMEOUT', `timed out after ${timeoutMs} ms waiting for ${what}${seen}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.#events.off(event, onEvent);
      };
      this.#events.on(event, onEvent);
    });
  }
}

function reply(res: ServerResponse, result: { status: number; body?: unknown }): void {
  if (result.status === 204 || result.body === undefined) {
    res.writeHead(result.status);
    res.end();
    return;
  }
  const text = JSON.stringify(result.body);
  res.writeHead(result.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function missingPermissions(): ApiError {
  return { status: 403, body: { message: 'Missing Permissions', code: 50013 } };
}

function maskAuthorization(value: string): string {
  const space = value.indexOf(' ');
  return space > 0 ? `${value.slice(0, space)} ***` : '***';
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function guildIdOf(guilds: readonly FakeGuild[], channelId: string): { guild_id?: string } {
  const located = findChannel(guilds, channelId);
  return located ? { guild_id: located.guild.id } : {};
}

function snapshot(message: FakeMessage): FakeMessage {
  return { ...message, attachments: [...message.attachments], pings: { ...message.pings, users: [...message.pings.users], roles: [...message.pings.roles] } };
}
