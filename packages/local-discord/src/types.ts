/**
 * The public shapes of the local Discord's REST + gateway server: its options, the handle tests and
 * the playground drive it through (`FakeDiscord`), and the records it keeps of what the bot did.
 */
import type { APIApplicationCommand, APIApplicationCommandInteractionDataOption } from 'discord.js';
import type { FakeGuild, FakeOverwrite, FakeUser } from './fixtures.ts';
import type { FakeGateway, IdentifyRecord } from './gateway.ts';
import type { FakeMessage } from './messages.ts';
import type { UploadedFile } from './rest/body.ts';
import type { PollInput } from './polls.ts';

/** Time as the local Discord reads it; a test passes a fast clock (anything with `now()`). */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

/** One bot application: its id, its bot user and the token it logs in with. */
export interface FakeBot {
  applicationId: string;
  user: FakeUser;
  token: string;
  /** The application's OAuth2 client secret (token endpoint, client_secret or Basic auth). */
  clientSecret: string;
  /** Registered OAuth2 redirect URIs (exact match, as Discord checks); a test may push more. */
  redirectUris: string[];
}

/** Another bot application the local Discord serves next to the main one (see FakeDiscordOptions.extraBots). */
export interface ExtraBotInput {
  /** Default: the bot user's id, as for applications made in the developer portal. */
  applicationId?: string;
  user: { id: string; username: string };
  /** Default: a random token. */
  token?: string;
  /** Default: a random secret. */
  clientSecret?: string;
  redirectUris?: string[];
  /**
   * The guilds it is a member of (with a managed role of the main bot's role's permissions). Default:
   * every guild. Others it joins through the bot authorize URL or `addBotToGuild`.
   */
  guildIds?: string[];
}

export interface FakeDiscordOptions {
  applicationId?: string;
  botUser?: { id: string; username: string };
  /** The main application's OAuth2 client secret (default: random; read it from `bots[0].clientSecret`). */
  clientSecret?: string;
  /** The main application's registered OAuth2 redirect URIs (default none; `bots[0].redirectUris` can grow). */
  redirectUris?: string[];
  /** How long OAuth2 access tokens live (`expires_in`), by `clock`. Discord: 7 days. */
  accessTokenLifetimeMs?: number;
  /**
   * More bot applications, each with its own token, gateway sessions, voice state per guild and
   * REST identity (`users/@me`, `applications/@me`, its member and permissions). Interactions go to
   * the main application, which registers the commands.
   */
  extraBots?: ExtraBotInput[];
  /**
   * The voice server the bots' calls go to: VOICE_SERVER_UPDATE names its endpoint, and it is told
   * which voice channel each voice session is in, so that bots in different voice channels of one
   * guild are separate calls there. Instead of `voiceEndpoint`.
   */
  voiceServer?: VoiceServerLink;
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
  /**
   * The shard count GET /gateway/bot recommends (default 1). The gateway accepts any Identify
   * `shard: [id, count]` with id < count and routes every guild to the shard Discord's formula
   * names, (guild_id >> 22) % count: READY's guild list, GUILD_CREATE, events and voice.
   */
  shardCount?: number;
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
  /**
   * Whether the bot applications may read message content: on Discord, the Message Content intent
   * switched on in the Developer Portal (and approved, for a verified app). false blanks what that
   * intent guards (content, embeds, attachments, components, polls, forwarded snapshots) in
   * MESSAGE_CREATE and MESSAGE_UPDATE whatever intents a session identified with, as the bot then
   * sees it (https://discord.com/developers/docs/events/gateway#message-content-intent); messages
   * that mention the bot, DMs and a message command's target keep theirs. Default true;
   * `setMessageContent` changes it while running.
   */
  messageContent?: boolean;
  clock?: Clock;
  /** Default timeout of the waitFor* helpers. */
  waitTimeoutMs?: number;
}

/** What the local Discord needs of the voice server (FakeVoiceServer has all three). */
export interface VoiceServerLink {
  readonly endpoint: string;
  /** A bot was handed these credentials for a call in `channelId`. */
  announceCall(call: { guildId: string; channelId: string; userId: string; sessionId: string }): void;
  /** Closes a bot's open voice websocket in the guild with `code` (4014 when it is disconnected from the channel). */
  closeConnection?(guildId: string, code: number, userId?: string): void;
}

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
  /** The bot that sent it (omitted for the main bot). */
  botId?: string;
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
  /** `description`: the alt text the member wrote for it (at most 1,024 characters, as Discord's). */
  attachments?: Array<{ id?: string; filename: string; size?: number; url?: string; content_type?: string; description?: string }>;
  sticker_items?: Array<{ id: string; name: string; format_type: number }>;
  embeds?: unknown[];
  webhookId?: string;
  /** Reply to this message id. */
  referenceMessageId?: string;
  /** The message's id (default: a fresh one); a forum post's first message has its thread's id (threads.ts). */
  id?: string;
  /** A poll (polls.ts; https://discord.com/developers/docs/resources/poll#poll-create-request-object). */
  poll?: PollInput;
  /**
   * A forward: the message carries a snapshot of another one (message_reference type 1 and
   * message_snapshots; https://discord.com/developers/docs/resources/message#message-snapshot-object).
   * The forwarding message's own `content` is usually ''.
   */
  forward?: {
    /** The forwarded message (default: a fresh id in another channel). */
    messageId?: string;
    channelId?: string;
    guildId?: string;
    content: string;
    attachments?: Array<{ filename: string; content_type?: string; size?: number; description?: string }>;
    sticker_items?: Array<{ id: string; name: string; format_type: number }>;
  };
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
  /** 2 = application command (default), 3 = message component (a button click: see `component`), 4 = autocomplete, 5 = modal submit (see `modal`). */
  type?: 2 | 3 | 4 | 5;
  /** For type 3: the bot message the clicked button is on, and the button's custom_id. */
  component?: { messageId: string; customId: string };
  /** For a message command (type 2 naming one): the message whose Apps menu it was run from. */
  target?: { messageId: string };
  /** For type 5: the interaction the bot answered with a modal, and the member's values by text input custom_id. */
  modal?: { interactionId: string; values: Record<string, string> };
}

/** A poll ends (endPoll): Discord closes it with the votes counted. */
export interface EndPollInput {
  channelId: string;
  /** The member's message carrying the poll. */
  messageId: string;
  /** Votes per answer, in the poll's order (missing answers: none); default: nobody voted. */
  votes?: number[];
}

/** A member starts a thread (createThread). */
export interface CreateThreadInput {
  /** A text (0) or announcement (5) channel. */
  parentId: string;
  name: string;
  /** Who starts it; always one of its members. */
  owner: FakeUser;
  /** 11 public (default), 12 private. */
  type?: 11 | 12;
  /** Other members added to it (a private thread's invitees). */
  memberIds?: string[];
}

/** A member posts in a forum (createForumPost). */
export interface ForumPostInput {
  forumId: string;
  /** The post's title: the thread's name. */
  name: string;
  author: SendMessageInput['author'];
  content: string;
  attachments?: SendMessageInput['attachments'];
}

/** A member edits a message they sent (editMessage). */
export interface EditMessageInput {
  channelId: string;
  messageId: string;
  content: string;
  /** Send MESSAGE_UPDATE with ids and the edit time only (no content), as Discord may: the bot must fetch. */
  partial?: boolean;
}

/** A moderator bans a member (banMember). */
export interface BanInput {
  guildId: string;
  userId: string;
  /** Their messages in the guild are deleted too (without MESSAGE_DELETE events, as Discord does not reliably send them). */
  deleteMessages?: boolean;
}

/** A file a member attaches to a slash command's attachment option (type 11), by its id. */
export interface MemberUpload {
  filename: string;
  data: Buffer;
  contentType?: string;
}

/** A change in the local Discord's world, as onActivity reports it. */
export type LocalDiscordActivity =
  /** A bot message was created, edited or deleted (`message.deleted`); ephemeral ones too. */
  | { kind: 'message'; message: FakeMessage }
  /** The bot deleted a member's message. */
  | { kind: 'deletion'; channelId: string; messageId: string }
  /** The bot reacted to a message. */
  | { kind: 'reaction'; channelId: string; messageId: string; emoji: string }
  /** Someone (a member or the bot) joined, moved or left a voice channel: read `guilds[].voiceStates`. */
  | { kind: 'voiceStates'; guildId: string };

export interface FakeDiscord {
  readonly apiUrl: string;
  /** ws:// URL of the gateway. */
  readonly gatewayUrl: string;
  readonly token: string;
  readonly applicationId: string;
  readonly botUser: FakeUser;
  /** Every bot application it serves: the main one first, then `extraBots`. */
  readonly bots: readonly FakeBot[];
  readonly guilds: FakeGuild[];
  close(): Promise<void>;
  /**
   * Adds a bot to a guild, as a member authorising the bot URL would: a member with a managed role
   * of `permissions` (default: the main bot role's), GUILD_CREATE to the bot's sessions and
   * GUILD_MEMBER_ADD to the others'.
   */
  addBotToGuild(applicationId: string, guildId: string, permissions?: bigint): Promise<void>;
  /** Kicks a bot from a guild: it leaves voice, its sessions get GUILD_DELETE, the others GUILD_MEMBER_REMOVE. */
  removeBotFromGuild(applicationId: string, guildId: string): Promise<void>;
  /** Resolves when a client (of the bot with user id `botUserId`, when given) is ready. */
  waitForReady(timeoutMs?: number, botUserId?: string): Promise<void>;
  sendMessage(m: SendMessageInput): Promise<{ id: string }>;
  sendInteraction(i: SendInteractionInput): Promise<FakeInteraction>;
  /** Keeps a file a member uploads for an attachment option; pass the returned id as the option's value. */
  uploadAttachment(upload: MemberUpload): { id: string; url: string };
  /** A member edits their message: MESSAGE_UPDATE. */
  editMessage(input: EditMessageInput): Promise<void>;
  /**
   * A poll ends (its time is up, or its author ends it early) with `votes`: MESSAGE_UPDATE of the
   * poll with its final counts, then Discord's poll result message (type 46). Resolves its id.
   */
  endPoll(input: EndPollInput): Promise<{ id: string }>;
  /** A member or moderator deletes a message: MESSAGE_DELETE. */
  deleteMessage(channelId: string, messageId: string): Promise<void>;
  /** A moderator deletes messages of one channel at once: MESSAGE_DELETE_BULK. */
  bulkDelete(channelId: string, messageIds: readonly string[]): Promise<void>;
  /** A member starts a thread in a text channel: THREAD_CREATE, then THREAD_MEMBERS_UPDATE for its members. */
  createThread(input: CreateThreadInput): Promise<{ id: string }>;
  /** A member posts in a forum channel: a thread (THREAD_CREATE) and its first message, whose id is the thread's (MESSAGE_CREATE). */
  createForumPost(input: ForumPostInput): Promise<{ id: string }>;
  /** A moderator deletes a guild channel: CHANNEL_DELETE; whoever was in it (a voice channel) is disconnected, as `disconnectMember`. */
  deleteChannel(channelId: string): Promise<void>;
  /** A moderator disconnects someone from voice: VOICE_STATE_UPDATE with no channel; a bot's voice websocket is closed with 4014. */
  disconnectMember(guildId: string, userId: string): Promise<void>;
  /** A moderator sets a channel's permission overwrites: CHANNEL_UPDATE (whoever is connected stays). */
  setChannelOverwrites(channelId: string, overwrites: FakeOverwrite[]): Promise<void>;
  /** Discord moves the guild's calls to another voice server: VOICE_SERVER_UPDATE (fresh token, its endpoint) to each bot in voice there, or to `botIds`; later joins go there too. Resolves how many bots were told. */
  moveVoiceServer(guildId: string, to: VoiceServerLink, botIds?: readonly string[]): Promise<number>;
  /** A moderator bans a member: GUILD_BAN_ADD and GUILD_MEMBER_REMOVE. */
  banMember(input: BanInput): Promise<void>;
  /** A moderator gives or takes roles: the member has exactly `roleIds` (besides @everyone), told in GUILD_MEMBER_UPDATE. */
  setMemberRoles(guildId: string, userId: string, roleIds: readonly string[]): Promise<void>;
  /** Moves a member (or the bot, as a moderator would) into a voice channel, or out with null. */
  setVoiceState(userId: string, guildId: string, channelId: string | null, options?: { selfDeaf?: boolean }): Promise<void>;
  /** A stage moderator invites a member (or the bot) to speak, or moves them back to the audience (stages.ts). */
  setStageSpeaker(guildId: string, userId: string, speaker: boolean): void;
  /** Grants or withdraws the applications' access to message content (`messageContent`) from the next event on. */
  setMessageContent(granted: boolean): void;
  closeGateway(code: number): void;
  /**
   * The bot's token is reset in the Developer Portal: its gateway connections close with 4004
   * (Authentication failed, not resumable), and REST and Identify with that token are refused
   * (401, 4004) until `reinstateToken`.
   */
  revokeToken(botUserId: string): void;
  /** The token of `revokeToken` is accepted again (a bot that retries logs in). */
  reinstateToken(botUserId: string): void;
  /** op 9 Invalid Session; `resumable: false` makes the client identify again. */
  invalidateSession(resumable: boolean): void;
  /** op 7 Reconnect. */
  requestReconnect(): void;
  /** Makes the next matching REST request(s) fail (the request is still logged, with that status). */
  injectFault(fault: RestFault): void;
  readonly requests: RestLogEntry[];
  readonly commands: { global: APIApplicationCommand[]; guild: Record<string, APIApplicationCommand[]> };
  readonly messages: FakeMessage[];
  readonly botVoiceStates: BotVoiceStateRequest[];
  readonly identifies: IdentifyRecord[];
  readonly reactions: Array<{ channelId: string; messageId: string; emoji: string }>;
  readonly deletions: Array<{ channelId: string; messageId: string }>;
  /** What the voice server should expect from a bot (default: the main one) in `guildId`'s call. */
  voiceCredentials(guildId: string, botUserId?: string): VoiceCredentials | undefined;
  checkVoiceIdentify(identify: { server_id: string; user_id: string; session_id: string; token: string }): boolean;
  /** The first bot message created, edited or deleted AFTER this call that matches (check `messages` for earlier ones). */
  waitForMessage(predicate?: (m: FakeMessage) => boolean, timeoutMs?: number): Promise<FakeMessage>;
  /** The first REST request received after this call that matches. */
  waitForRequest(predicate: (r: RestLogEntry) => boolean, timeoutMs?: number): Promise<RestLogEntry>;
  /** The first op 4 a bot sends after this call that matches. */
  waitForBotVoiceState(predicate?: (s: BotVoiceStateRequest) => boolean, timeoutMs?: number): Promise<BotVoiceStateRequest>;
  /** Calls `listener` on every change of the world (see LocalDiscordActivity); returns the unsubscribe. */
  onActivity(listener: (activity: LocalDiscordActivity) => void): () => void;
  /** Raw dispatches (all sessions), for protocol-level tests. */
  readonly gateway: FakeGateway;
}
