/**
 * The local Discord's REST v10 + gateway v10 server, on 127.0.0.1: a real discord.js Client logs
 * in with `new Client({ rest: { api: fake.apiUrl } })` and talks to it as it would to Discord.
 * Protocol facts: Discord's API and gateway documentation; what it does and does not
 * implement: README.md next to this file.
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
 *
 * The routes live in rest/ by Discord resource; what members do in member-actions.ts (edits,
 * deletions and bans in moderation-actions.ts); the bot's
 * own voice state in voice-states.ts; the shared world in state.ts.
 */
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { API_ERRORS, LocalDiscordError, type ApiError } from './errors.ts';
import type { FakeGuild, FakeOverwrite, FakeUser } from './fixtures.ts';
import type { FakeGateway, IdentifyRecord } from './gateway.ts';
import { LOOPBACK_HOST, listenOnLoopback } from './loopback.ts';
import { sendInteraction, sendMessage, setVoiceState, uploadAttachment } from './member-actions.ts';
import { createForumPost, createThread } from './threads.ts';
import { addBotToGuild, removeBotFromGuild } from './bot-membership.ts';
import {
  banMember,
  deleteChannel,
  deleteMessages,
  disconnectMember,
  editMessage,
  setChannelOverwrites,
  setMemberRoles,
} from './moderation-actions.ts';
import type { FakeMessage } from './messages.ts';
import { applicationRoutes } from './rest/applications.ts';
import { maskSecretFields, parseBody } from './rest/body.ts';
import { channelRoutes } from './rest/channels.ts';
import { guildRoutes } from './rest/guilds.ts';
import { interactionRoutes } from './rest/interactions.ts';
import { ok, Router, type RouteResult } from './rest/router.ts';
import { userRoutes } from './rest/users.ts';
import { AUTHORIZE_PATHS, authorizePage, pageLang, submitAuthorize, type PageResult } from './oauth2/authorize.ts';
import { OAuth2Grants } from './oauth2/grants.ts';
import { endPoll } from './polls.ts';
import { setStageSpeaker, stageRoutes } from './stages.ts';
import { DiscordState } from './state.ts';
import type {
  BanInput,
  BotVoiceStateRequest,
  CreateThreadInput,
  EditMessageInput,
  EndPollInput,
  FakeDiscord,
  FakeBot,
  FakeDiscordOptions,
  FakeInteraction,
  ForumPostInput,
  LocalDiscordActivity,
  MemberUpload,
  RestFault,
  RestLogEntry,
  SendInteractionInput,
  SendMessageInput,
  VoiceCredentials,
  VoiceServerLink,
} from './types.ts';
import { BotVoiceStates } from './voice-states.ts';

export type { FakeGuild, FakeMember, FakeUser } from './fixtures.ts';
export { DEFAULT_BOT_USER, DEFAULT_IDS, defaultGuild, guildOnShard, PERMISSIONS, worldRoles } from './fixtures.ts';
export type { FakeAttachment, FakeMessage } from './messages.ts';
export type { UploadedFile } from './rest/body.ts';
export type { PollInput } from './polls.ts';
export type * from './types.ts';

/** Starts the local Discord on 127.0.0.1 (an ephemeral port). */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const server = new FakeDiscordServer(options);
  await server.start();
  return server;
}

const API_PREFIX = '/api/v10';
const MAX_BODY_BYTES = 100 * 1024 * 1024;

class FakeDiscordServer implements FakeDiscord {
  readonly #state: DiscordState;
  readonly #voice: BotVoiceStates;
  readonly #http: Server;
  readonly #router: Router;
  readonly #grants: OAuth2Grants;
  #faults: Array<Required<Omit<RestFault, 'method'>> & { method: string | undefined }> = [];

  constructor(options: FakeDiscordOptions) {
    this.#state = new DiscordState(options, (session, request) => this.#voice.onRequest(session, request));
    this.#voice = new BotVoiceStates(this.#state);
    this.#router = new Router((authorization) => this.#state.botByAuthorization(authorization), this.#state.mainBot);
    this.#router.on('GET', '/gateway', () => ok({ url: this.gatewayUrl }), false);
    this.#router.on('GET', '/gateway/bot', () =>
      ok({
        url: this.gatewayUrl,
        shards: this.#state.options.shardCount,
        session_start_limit: { total: 1000, remaining: 999, reset_after: 86_400_000, max_concurrency: 1 },
      }),
    );
    this.#grants = new OAuth2Grants(this.#state);
    // OAuth2's token endpoints authenticate the client themselves (client secret), not with a bot token.
    this.#router.on('POST', '/oauth2/token', ({ form, authorization }) => this.#grants.token(form, authorization), false);
    this.#router.on('POST', '/oauth2/token/revoke', ({ form, authorization }) => this.#grants.revoke(form, authorization), false);
    userRoutes(this.#router, this.#state);
    applicationRoutes(this.#router, this.#state);
    interactionRoutes(this.#router, this.#state);
    channelRoutes(this.#router, this.#state);
    guildRoutes(this.#router, this.#state);
    stageRoutes(this.#router, this.#state);
    this.#http = createServer((req, res) => {
      this.#onRequest(req, res).catch((error: unknown) => {
        // A client that went away before its whole body arrived (a bot killed or restarted as it
        // sent) has nobody to answer. Anything else is this server's own fault: answered as Discord
        // answers one, and shown on stderr rather than ending the process (the playground serves
        // the page from it).
        if (req.socket.destroyed && !req.complete) return void res.destroy();
        process.emitWarning(
          `a request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
          'LocalDiscordWarning',
        );
        if (res.headersSent) return void res.destroy();
        reply(res, API_ERRORS.internal);
      });
    });
    this.#http.on('upgrade', (req, socket, head) => {
      if ((req.url ?? '').startsWith('/gateway')) this.gateway.handleUpgrade(req, socket, head);
      else socket.destroy();
    });
  }

  // ---- what the bot and the tests see -----------------------------------------------------------

  get apiUrl(): string {
    return this.#state.apiUrl;
  }
  get gatewayUrl(): string {
    return this.#state.gatewayUrl;
  }
  get token(): string {
    return this.#state.token;
  }
  get applicationId(): string {
    return this.#state.applicationId;
  }
  get botUser(): FakeUser {
    return this.#state.botUser;
  }
  get bots(): readonly FakeBot[] {
    return this.#state.bots;
  }
  get guilds(): FakeGuild[] {
    return this.#state.guilds;
  }
  get gateway(): FakeGateway {
    return this.#state.gateway;
  }
  get identifies(): IdentifyRecord[] {
    return this.#state.gateway.identifies;
  }
  get requests(): RestLogEntry[] {
    return this.#state.requests;
  }
  get commands(): DiscordState['commands'] {
    return this.#state.commands;
  }
  get messages(): FakeMessage[] {
    return this.#state.messages;
  }
  get botVoiceStates(): BotVoiceStateRequest[] {
    return this.#state.botVoiceStates;
  }
  get reactions(): DiscordState['reactions'] {
    return this.#state.reactions;
  }
  get deletions(): DiscordState['deletions'] {
    return this.#state.deletions;
  }

  async start(): Promise<void> {
    const port = await listenOnLoopback(this.#http);
    const state = this.#state;
    state.baseUrl = `http://${LOOPBACK_HOST}:${port}`;
    state.apiUrl = `${state.baseUrl}/api`;
    state.gatewayUrl = `ws://${LOOPBACK_HOST}:${port}/gateway`;
  }

  async close(): Promise<void> {
    await this.gateway.close();
    this.#http.closeAllConnections();
    await new Promise<void>((resolve) => this.#http.close(() => resolve()));
  }

  // ---- driving it -------------------------------------------------------------------------------

  sendMessage(input: SendMessageInput): Promise<{ id: string }> {
    return sendMessage(this.#state, input);
  }

  sendInteraction(input: SendInteractionInput): Promise<FakeInteraction> {
    return sendInteraction(this.#state, input);
  }

  uploadAttachment(upload: MemberUpload): { id: string; url: string } {
    return uploadAttachment(this.#state, upload);
  }

  editMessage(input: EditMessageInput): Promise<void> {
    return editMessage(this.#state, input);
  }

  endPoll(input: EndPollInput): Promise<{ id: string }> {
    return endPoll(this.#state, input);
  }

  deleteMessage(channelId: string, messageId: string): Promise<void> {
    return deleteMessages(this.#state, channelId, [messageId], false);
  }

  bulkDelete(channelId: string, messageIds: readonly string[]): Promise<void> {
    return deleteMessages(this.#state, channelId, messageIds, true);
  }

  createThread(input: CreateThreadInput): Promise<{ id: string }> {
    return createThread(this.#state, input);
  }

  createForumPost(input: ForumPostInput): Promise<{ id: string }> {
    return createForumPost(this.#state, input);
  }

  deleteChannel(channelId: string): Promise<void> {
    return deleteChannel(this.#state, this.#voice, channelId);
  }

  /** A moderator disconnects `userId` from voice (a bot's voice websocket is closed with 4014). */
  disconnectMember(guildId: string, userId: string): Promise<void> {
    return disconnectMember(this.#state, this.#voice, guildId, userId);
  }

  /** A moderator sets a channel's permission overwrites (CHANNEL_UPDATE). */
  setChannelOverwrites(channelId: string, overwrites: FakeOverwrite[]): Promise<void> {
    return setChannelOverwrites(this.#state, channelId, overwrites);
  }

  /** Discord moves the guild's calls to the voice server `to` (VOICE_SERVER_UPDATE to each bot in voice there, or to `botIds`). */
  moveVoiceServer(guildId: string, to: VoiceServerLink, botIds?: readonly string[]): Promise<number> {
    return this.#voice.moveServer(guildId, to, botIds);
  }

  banMember(input: BanInput): Promise<void> {
    return banMember(this.#state, input);
  }

  setVoiceState(userId: string, guildId: string, channelId: string | null, options: { selfDeaf?: boolean } = {}): Promise<void> {
    return setVoiceState(this.#state, userId, guildId, channelId, options);
  }

  setStageSpeaker(guildId: string, userId: string, speaker: boolean): void {
    setStageSpeaker(this.#state, guildId, userId, speaker);
  }

  setMessageContent(granted: boolean): void {
    this.#state.messageContent = granted;
  }

  closeGateway(code: number): void {
    this.gateway.closeConnections(code);
  }

  revokeToken(botUserId: string): void {
    const bot = this.#botOfUser(botUserId);
    this.#state.revokedTokens.add(bot.token);
    this.gateway.closeConnections(4004, 'Authentication failed', botUserId);
  }

  reinstateToken(botUserId: string): void {
    this.#state.revokedTokens.delete(this.#botOfUser(botUserId).token);
  }

  setMemberRoles(guildId: string, userId: string, roleIds: readonly string[]): Promise<void> {
    return setMemberRoles(this.#state, guildId, userId, roleIds);
  }

  #botOfUser(botUserId: string): FakeBot {
    const bot = this.#state.botByUser(botUserId);
    if (!bot) throw new LocalDiscordError('unknown_application', { message: `no bot with user id ${botUserId}` });
    return bot;
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

  onActivity(listener: (activity: LocalDiscordActivity) => void): () => void {
    this.#state.events.on('activity', listener);
    return () => this.#state.events.off('activity', listener);
  }

  voiceCredentials(guildId: string, botUserId = this.#state.botUser.id): VoiceCredentials | undefined {
    return this.#voice.credentials(guildId, botUserId);
  }

  addBotToGuild(applicationId: string, guildId: string, permissions?: bigint): Promise<void> {
    return addBotToGuild(this.#state, applicationId, guildId, permissions);
  }

  removeBotFromGuild(applicationId: string, guildId: string): Promise<void> {
    return removeBotFromGuild(this.#state, this.#voice, applicationId, guildId);
  }

  checkVoiceIdentify(identify: { server_id: string; user_id: string; session_id: string; token: string }): boolean {
    return this.#voice.checkIdentify(identify);
  }

  // ---- waiting ----------------------------------------------------------------------------------
  // The global waits match only what happens after the call (create the promise before the action),
  // so an entry left by an earlier test step never satisfies them.

  waitForReady(timeoutMs = this.#state.options.waitTimeoutMs, botUserId?: string): Promise<void> {
    return this.gateway.waitForReady(timeoutMs, botUserId);
  }

  waitForMessage(predicate: (m: FakeMessage) => boolean = () => true, timeoutMs = this.#state.options.waitTimeoutMs): Promise<FakeMessage> {
    const state = this.#state;
    const since = state.changeMark();
    return state.waitFor(
      'message',
      () => state.messages.find((m) => state.changedSince(m, since) && predicate(m)),
      timeoutMs,
      'a matching bot message',
    );
  }

  waitForRequest(predicate: (r: RestLogEntry) => boolean, timeoutMs = this.#state.options.waitTimeoutMs): Promise<RestLogEntry> {
    const from = this.requests.length;
    return this.#state.waitFor('request', () => this.requests.slice(from).find(predicate), timeoutMs, 'a matching REST request');
  }

  waitForBotVoiceState(
    predicate: (s: BotVoiceStateRequest) => boolean = () => true,
    timeoutMs = this.#state.options.waitTimeoutMs,
  ): Promise<BotVoiceStateRequest> {
    const from = this.botVoiceStates.length;
    return this.#state.waitFor(
      'botVoiceState',
      () => this.botVoiceStates.slice(from).find(predicate),
      timeoutMs,
      'a matching bot voice state update (op 4)',
    );
  }

  // ---- HTTP -------------------------------------------------------------------------------------

  async #onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.#state.baseUrl);
    const raw = await readBody(req);
    if (raw === undefined) return reply(res, API_ERRORS.entityTooLarge);
    if (url.pathname.startsWith('/attachments/')) return this.#serveAttachment(req, res, url);
    if (AUTHORIZE_PATHS.has(url.pathname)) return this.#authorizePage(req, res, url, raw);
    // `/api/v10/...`, or `/api/...` without a version, which Discord also serves (OAuth2 libraries use it).
    const prefix = url.pathname.startsWith(`${API_PREFIX}/`) ? API_PREFIX : /^\/api\/(?!v\d+\/)./.test(url.pathname) ? '/api' : undefined;
    const routePath = prefix ? url.pathname.slice(prefix.length) : url.pathname;
    const segments = routePath
      .split('/')
      .slice(1)
      .map((s) => safeDecode(s));
    const entry: RestLogEntry = {
      method: req.method ?? 'GET',
      path: '/' + segments.join('/'),
      query: Object.fromEntries(url.searchParams),
      headers: logHeaders(req),
      body: undefined,
      status: 0,
    };
    const parsed = await parseBody(raw, req.headers['content-type']);
    entry.body = parsed.ok ? parsed.logged : raw.toString('utf8');
    // OAuth2 requests carry client secrets, codes and tokens: never in the log, even as a refused body.
    if (entry.path.startsWith('/oauth2/')) entry.body = typeof entry.body === 'string' ? '***' : maskSecretFields(entry.body);
    this.requests.push(entry);
    let result: RouteResult;
    const fault = this.#takeFault(entry.method, entry.path);
    if (fault) {
      result = fault;
    } else if (prefix === undefined) {
      result = API_ERRORS.notFound;
    } else if (!parsed.ok) {
      result = parsed.error;
    } else if (req.headers.authorization?.startsWith('Bearer ')) {
      // A user's OAuth2 access token: only the routes a user token may call.
      result = this.#grants.route(entry.method, entry.path, req.headers.authorization, url.searchParams);
    } else {
      result = this.#router.route(entry.method, segments, req.headers.authorization, {
        query: url.searchParams,
        json: parsed.json,
        files: parsed.files,
        ...(parsed.form ? { form: parsed.form } : {}),
      });
    }
    entry.status = result.status;
    this.#state.events.emit('request');
    reply(res, result);
  }

  /** The OAuth2 authorize page (oauth2/authorize.ts): GET shows it, POST is its form. */
  async #authorizePage(req: IncomingMessage, res: ServerResponse, url: URL, raw: Buffer): Promise<void> {
    let result: PageResult;
    try {
      const lang = pageLang(req.headers['accept-language']);
      if (req.method === 'GET') result = authorizePage(this.#state, url.searchParams, lang);
      else if (req.method === 'POST')
        result = await submitAuthorize(this.#state, this.#grants, new URLSearchParams(raw.toString('utf8')), lang);
      else result = { status: 405, html: 'Method Not Allowed' };
    } catch (error) {
      result = { status: 500, html: `Local Discord error: ${String((error as Error).message).replace(/[<&]/g, '')}` };
    }
    const headers: Record<string, string> = { 'cache-control': 'no-store', 'x-frame-options': 'DENY' };
    if (result.location) headers.location = result.location;
    if (result.html !== undefined) headers['content-type'] = 'text/html; charset=utf-8';
    res.writeHead(result.status, headers);
    res.end(result.html ?? '');
  }

  /** The CDN side: attachment URLs the bot's messages carry. */
  #serveAttachment(req: IncomingMessage, res: ServerResponse, url: URL): void {
    const id = decodeURIComponent(url.pathname.split('/')[3] ?? '');
    const attachment = this.#state.attachments.get(id);
    if (!attachment || req.method !== 'GET') return reply(res, API_ERRORS.notFound);
    res.writeHead(200, { 'content-type': attachment.contentType, 'content-length': attachment.data.length });
    res.end(attachment.data);
  }

  #takeFault(method: string, path: string): ApiError | undefined {
    const fault = this.#faults.find((f) => f.count > 0 && (f.method === undefined || f.method === method) && f.path.test(path));
    if (!fault) return undefined;
    fault.count -= 1;
    return { status: fault.status, body: fault.body };
  }
}

/** The whole body, or undefined once it is over MAX_BODY_BYTES. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
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

/** Request headers for the log, the Authorization credential masked. */
function logHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    headers[name] = name === 'authorization' ? maskAuthorization(String(value)) : Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
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
