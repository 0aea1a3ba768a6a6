/**
 * What members do, as the local Discord tells the bot about it: write a message (MESSAGE_CREATE),
 * run a slash command (INTERACTION_CREATE), move between voice channels (VOICE_STATE_UPDATE).
 * Payloads follow https://discord.com/developers/docs/events/gateway-events.
 */
import type { APIApplicationCommandInteractionDataOption, APIApplicationCommandOption, APIMessage } from 'discord.js';
import { LocalDiscordError } from './errors.ts';
import {
  findChannel,
  memberPermissions,
  PERMISSIONS,
  randomToken,
  snowflake,
  toAPIChannel,
  toAPIMember,
  toAPIRole,
  toAPIUser,
  voiceStateUpdate,
  type FakeChannel,
  type FakeGuild,
  type FakeMember,
  type FakeUser,
} from './fixtures.ts';
import { channelPermissions } from './permissions.ts';
import { toAPIPoll } from './polls.ts';
import { INTENTS } from './gateway.ts';
import type { DiscordState, InteractionRecord } from './state.ts';
import type { FakeInteraction, MemberUpload, SendInteractionInput, SendMessageInput } from './types.ts';
import { messageCommandData, modalSubmitData } from './modals.ts';

/** The channel's guild (none for a DM), the acting member as stored there, and the user merged over it. */
function locate(state: DiscordState, channelId: string, guildId: string | undefined, acting: FakeUser) {
  const located = findChannel(state.guilds, channelId);
  if (guildId && located?.guild.id !== guildId) {
    throw new LocalDiscordError('unknown_channel', { message: `channel ${channelId} is not in guild ${guildId}` });
  }
  const guild = located?.guild;
  const stored = guild?.members.find((m) => m.user.id === acting.id);
  const user: FakeUser = { ...stored?.user, ...acting };
  return { located, guild, stored, user };
}

/** Discord's limit on an attachment's alt text. */
const ALT_TEXT_MAX = 1024;

export async function sendMessage(state: DiscordState, input: SendMessageInput): Promise<{ id: string }> {
  const alts = [...(input.attachments ?? []), ...(input.forward?.attachments ?? [])].map((a) => a.description ?? '');
  if (alts.some((alt) => [...alt].length > ALT_TEXT_MAX))
    throw new LocalDiscordError('bad_option', { message: `an attachment's description (alt text) is at most ${ALT_TEXT_MAX} characters` });
  const { guild, stored, user: author } = locate(state, input.channelId, input.guildId, input.author);
  const id = input.id ?? snowflake(state.now());
  const mentions = input.mentions ?? mentionedUsers(state, input.content, guild);
  const message: Record<string, unknown> = {
    id,
    type: input.referenceMessageId ? 19 : 0,
    channel_id: input.channelId,
    author: toAPIUser(author),
    content: input.content,
    timestamp: new Date(state.now()).toISOString(),
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
      url: a.url ?? `${state.baseUrl}/attachments/${input.channelId}/${a.id ?? 'x'}/${encodeURIComponent(a.filename)}`,
      proxy_url: a.url ?? `${state.baseUrl}/attachments/${input.channelId}/${a.id ?? 'x'}/${encodeURIComponent(a.filename)}`,
      ...(a.content_type ? { content_type: a.content_type } : {}),
      ...(a.description !== undefined ? { description: a.description } : {}),
    })),
    embeds: input.embeds ?? [],
    components: [],
    pinned: false,
    flags: 0,
    nonce: null,
  };
  if (input.sticker_items) message.sticker_items = input.sticker_items;
  if (input.poll) message.poll = toAPIPoll(input.poll, state.now());
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
  if (input.forward) Object.assign(message, forwardFields(state, input.forward, id));
  if (input.referenceMessageId) {
    message.message_reference = {
      type: 0,
      message_id: input.referenceMessageId,
      channel_id: input.channelId,
      ...(guild ? { guild_id: guild.id } : {}),
    };
    const referenced = state.findAnyMessage(input.referenceMessageId);
    if (referenced) message.referenced_message = referenced;
  }
  state.userMessages.set(id, message as unknown as APIMessage);
  const mentionsBot = mentions.some((u) => u.id === state.botUser.id);
  await state.gateway.dispatch('MESSAGE_CREATE', message, {
    intent: guild ? INTENTS.GuildMessages : INTENTS.DirectMessages,
    // Without the privileged MESSAGE_CONTENT intent (asked for, and granted to the application)
    // Discord blanks these fields, except in DMs and messages that mention the bot
    // (https://discord.com/developers/docs/events/gateway#message-content-intent).
    transform: (d, session) =>
      (session.intents & INTENTS.MessageContent && state.messageContent) || !guild || mentionsBot
        ? d
        : { ...(d as object), content: '', embeds: [], attachments: [], components: [], poll: undefined, ...blankSnapshots(d) },
  });
  return { id };
}

/** A forward's reference and snapshot (Discord sets the HAS_SNAPSHOT flag, 1 << 14). */
function forwardFields(state: DiscordState, forward: NonNullable<SendMessageInput['forward']>, id: string): Record<string, unknown> {
  const messageId = forward.messageId ?? snowflake(state.now());
  const channelId = forward.channelId ?? snowflake(state.now());
  return {
    flags: 1 << 14,
    message_reference: { type: 1, message_id: messageId, channel_id: channelId, ...(forward.guildId ? { guild_id: forward.guildId } : {}) },
    message_snapshots: [
      {
        message: {
          type: 0,
          content: forward.content,
          embeds: [],
          attachments: (forward.attachments ?? []).map((a, i) => ({
            id: `${id}${i}`,
            filename: a.filename,
            size: a.size ?? 0,
            url: `${state.baseUrl}/attachments/${channelId}/${id}${i}/${encodeURIComponent(a.filename)}`,
            proxy_url: `${state.baseUrl}/attachments/${channelId}/${id}${i}/${encodeURIComponent(a.filename)}`,
            ...(a.content_type ? { content_type: a.content_type } : {}),
            ...(a.description !== undefined ? { description: a.description } : {}),
          })),
          timestamp: new Date(state.now()).toISOString(),
          edited_timestamp: null,
          flags: 0,
          mentions: [],
          mention_roles: [],
          ...(forward.sticker_items ? { sticker_items: forward.sticker_items } : {}),
        },
      },
    ],
  };
}

/** Without MESSAGE_CONTENT a forward's snapshot is blanked like the message's own content. */
function blankSnapshots(d: unknown): Record<string, unknown> {
  const snapshots = (d as { message_snapshots?: Array<{ message: object }> }).message_snapshots;
  return snapshots
    ? { message_snapshots: snapshots.map((s) => ({ message: { ...s.message, content: '', embeds: [], attachments: [] } })) }
    : {};
}

export async function sendInteraction(state: DiscordState, input: SendInteractionInput): Promise<FakeInteraction> {
  const { located, guild, stored, user } = locate(state, input.channelId, input.guildId, input.user);
  const type = input.type ?? 2;
  const component = type === 3 ? componentMessage(state, input) : undefined;
  const record: InteractionRecord = {
    id: snowflake(state.now()),
    token: `aW50ZXJhY3Rpb246${randomToken(48)}`,
    type,
    name: component ? component.customId : input.name,
    user,
    channelId: input.channelId,
    createdAt: state.now(),
    responses: [],
  };
  if (guild) record.guildId = guild.id;
  state.interactions.set(record.id, record);
  const command = [...(guild ? (state.commands.guild[guild.id] ?? []) : []), ...state.commands.global].find((c) => c.name === input.name);
  const data: Record<string, unknown> = component
    ? { custom_id: component.customId, component_type: 2 }
    : type === 5
      ? modalSubmitData(state, input)
      : input.target
        ? messageCommandData(state, input, command)
        : {
            id: command?.id ?? snowflake(),
            name: input.name,
            type: 1,
            ...(input.options ? { options: input.options } : {}),
            ...(guild && command?.guild_id ? { guild_id: guild.id } : {}),
          };
  if (guild && input.options) {
    if (command && !component && type === 2) checkOffered(guild, command.options ?? [], input.options, user.id);
    const resolved = resolveOptions(state, guild, input.options, { channel: located?.channel, userId: user.id });
    if (resolved) data.resolved = resolved;
  }
  const payload: Record<string, unknown> = {
    id: record.id,
    application_id: state.applicationId,
    type,
    token: record.token,
    version: 1,
    data,
    locale: input.locale ?? 'ja',
    entitlements: [],
    attachment_size_limit: state.options.maxUploadBytes,
    ...(component ? { message: state.apiMessage(component.message) } : {}),
  };
  // A component interaction's original response is the message its button is on.
  if (component) record.originalMessageId = component.message.id;
  if (guild && located) {
    // As Discord computes them: in the channel the command was used in, its overwrites applied.
    const permissions = input.memberPermissions ?? channelPermissions(guild, located.channel, user.id).toString();
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
      app_permissions: channelPermissions(guild, located.channel, state.botUser.id).toString(),
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
  // Interactions go to the application whose command (or message) it is: the main one, which registers the commands.
  await state.gateway.dispatch('INTERACTION_CREATE', payload, { botIds: [state.botUser.id] });
  return interactionHandle(state, record);
}

export async function setVoiceState(
  state: DiscordState,
  userId: string,
  guildId: string,
  channelId: string | null,
  options: { selfDeaf?: boolean } = {},
): Promise<void> {
  const guild = state.guilds.find((g) => g.id === guildId);
  if (!guild) throw new LocalDiscordError('unknown_guild', { message: `unknown guild ${guildId}` });
  const previous = guild.voiceStates.find((v) => v.userId === userId);
  guild.voiceStates = guild.voiceStates.filter((v) => v.userId !== userId);
  const sessionId = previous?.sessionId ?? randomToken(16);
  const selfDeaf = options.selfDeaf ?? false;
  if (channelId) guild.voiceStates.push({ userId, channelId, sessionId, selfMute: false, selfDeaf });
  state.emitActivity({ kind: 'voiceStates', guildId });
  if (state.gateway.sessions.size === 0) return; // state only: the next GUILD_CREATE carries it
  const member = guild.members.find((m) => m.user.id === userId);
  const update = voiceStateUpdate(guildId, { userId, channelId, sessionId, selfMute: false, selfDeaf }, member);
  await state.gateway.dispatch('VOICE_STATE_UPDATE', update, { intent: INTENTS.GuildVoiceStates });
}

/** The bot message a button click (type 3) is on: it must exist and carry that custom_id. */
function componentMessage(state: DiscordState, input: SendInteractionInput) {
  const wanted = input.component;
  if (!wanted) throw new LocalDiscordError('unknown_message', { message: 'a component interaction needs `component`' });
  const message = state.messages.find((m) => m.id === wanted.messageId && !m.deleted);
  if (!message) throw new LocalDiscordError('unknown_message', { message: `no bot message ${wanted.messageId}` });
  const buttons = (message.components as Array<{ components?: Array<{ custom_id?: unknown }> }>).flatMap((row) => row.components ?? []);
  if (!buttons.some((b) => b.custom_id === wanted.customId)) {
    throw new LocalDiscordError('unknown_message', { message: `message ${wanted.messageId} has no component ${wanted.customId}` });
  }
  return { message, customId: wanted.customId };
}

/** Keeps a member's upload where attachment options and the CDN route find it. */
export function uploadAttachment(state: DiscordState, upload: MemberUpload): { id: string; url: string } {
  const id = snowflake(state.now());
  const url = `${state.baseUrl}/attachments/uploads/${id}/${encodeURIComponent(upload.filename)}`;
  state.attachments.set(id, {
    id,
    filename: upload.filename,
    contentType: upload.contentType ?? 'application/octet-stream',
    size: upload.data.length,
    data: upload.data,
    url,
  });
  return { id, url };
}

// ---- gateway op 4 -----------------------------------------------------------------------------

function interactionHandle(state: DiscordState, record: InteractionRecord): FakeInteraction {
  return {
    id: record.id,
    token: record.token,
    responses: () => [...record.responses],
    waitForResponse: (predicate = () => true, timeoutMs = state.options.waitTimeoutMs) =>
      state.waitFor(
        `interaction:${record.id}`,
        () => record.responses.find(predicate),
        timeoutMs,
        `a matching response to interaction /${record.name}`,
        () => record.responses.map((r) => `${r.kind}${r.type !== undefined ? `(${r.type})` : ''}`).join(', '),
      ),
    original: () => state.original(record),
  };
}

/**
 * A registered command's channel options take only what a member's client offers in its picker: a
 * channel of the option's `channel_types` (when it names some) that the member can view (a private
 * thread: as its member, or with Manage Threads in its parent). Anything else is a test's mistake,
 * thrown before Discord would send it.
 */
function checkOffered(
  guild: FakeGuild,
  declared: readonly APIApplicationCommandOption[],
  given: readonly APIApplicationCommandInteractionDataOption[],
  userId: string,
): void {
  for (const option of given) {
    const spec = declared.find((d) => d.name === option.name);
    if (!spec) continue;
    if ('options' in option && option.options && 'options' in spec)
      checkOffered(guild, (spec.options ?? []) as APIApplicationCommandOption[], option.options, userId);
    if (option.type !== 7 || !('value' in option)) continue;
    const channel = guild.channels.find((c) => c.id === String(option.value));
    const types = 'channel_types' in spec ? (spec.channel_types as readonly number[] | undefined) : undefined;
    const why = !channel
      ? 'no channel of this guild'
      : types?.length && !types.includes(channel.type)
        ? `a channel of type ${channel.type}, not one of ${types.join(', ')}`
        : !memberViews(guild, channel, userId)
          ? 'a channel the member cannot view'
          : undefined;
    if (why) throw new LocalDiscordError('not_offered', { message: `option ${option.name}: ${String(option.value)} is ${why}` });
  }
}

/** View Channel (a thread: in its parent), and a private thread only to its members or with Manage Threads there. */
function memberViews(guild: FakeGuild, channel: FakeChannel, userId: string): boolean {
  const parent = channel.thread ? guild.channels.find((c) => c.id === channel.parentId) : undefined;
  const decides = parent ?? channel;
  if ((channelPermissions(guild, decides, userId) & PERMISSIONS.ViewChannel) === 0n) return false;
  if (channel.type !== 12) return true;
  return channel.thread!.memberIds.includes(userId) || (channelPermissions(guild, decides, userId) & PERMISSIONS.ManageThreads) !== 0n;
}

/**
 * The `resolved` objects of the options. A member's `permissions` are theirs in the channel the
 * command was used in; a channel's are the invoking member's in that channel (both with overwrites).
 */
function resolveOptions(
  state: DiscordState,
  guild: FakeGuild,
  options: readonly APIApplicationCommandInteractionDataOption[],
  invoked: { channel: FakeChannel | undefined; userId: string },
): Record<string, Record<string, unknown>> | undefined {
  const permissionsIn = (channel: FakeChannel | undefined, userId: string) =>
    (channel ? channelPermissions(guild, channel, userId) : memberPermissions(guild, userId)).toString();
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
          add('members', id, { ...partial, permissions: permissionsIn(invoked.channel, id) });
        }
      }
      if (option.type === 7) {
        const channel = guild.channels.find((c) => c.id === id);
        const permissions = channel && permissionsIn(channel, invoked.userId);
        if (channel) add('channels', id, { id, name: channel.name, type: channel.type, permissions });
      }
      if (option.type === 11) {
        const file = state.attachments.get(id);
        if (file)
          add('attachments', id, {
            id,
            filename: file.filename,
            size: file.size,
            url: file.url,
            proxy_url: file.url,
            content_type: file.contentType,
          });
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

function mentionedUsers(state: DiscordState, content: string, guild: FakeGuild | undefined): FakeUser[] {
  const ids = [...new Set([...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1] as string))];
  return ids
    .map((id) => guild?.members.find((m) => m.user.id === id)?.user ?? state.findUser(id))
    .filter((u): u is FakeUser => u !== undefined);
}

// ---- waiting ----------------------------------------------------------------------------------
