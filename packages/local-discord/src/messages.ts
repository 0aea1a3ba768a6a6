/**
 * Messages the bot creates (channel messages, interaction responses, follow-ups): validation of the
 * request body, attachments from multipart uploads, who would be pinged under `allowed_mentions`,
 * and the API message object returned and dispatched
 * (https://discord.com/developers/docs/resources/message).
 */
import type { APIMessage } from 'discord.js';
import { API_ERRORS, invalidFormBody, type ApiError } from './errors.ts';
import { snowflake, toAPIUser, type FakeUser } from './fixtures.ts';
import type { UploadedFile } from './rest/body.ts';

export interface FakeAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  data: Buffer;
  description?: string;
  url: string;
}

/** Who a message notifies, after `allowed_mentions` is applied. */
interface Pings {
  users: string[];
  roles: string[];
  everyone: boolean;
  repliedUser: boolean;
}

export type MessageSource = 'channel' | 'interaction' | 'followup';

export interface FakeMessage {
  id: string;
  channelId: string;
  guildId?: string;
  authorId: string;
  source: MessageSource;
  interactionId?: string;
  content: string;
  embeds: unknown[];
  components: unknown[];
  flags: number;
  tts: boolean;
  attachments: FakeAttachment[];
  /** `allowed_mentions` exactly as the bot sent it (undefined = Discord's default: ping everything). */
  allowedMentions: unknown;
  pings: Pings;
  messageReference?: { message_id: string; channel_id?: string; guild_id?: string; fail_if_not_exists?: boolean };
  createdAt: string;
  editedAt: string | null;
  edits: number;
  deleted: boolean;
}

export const EPHEMERAL = 64;
export const LOADING = 128;
const MAX_CONTENT = 2000;
const MAX_EMBEDS = 10;
const MAX_FILES = 10;

type BodyResult = { ok: true } | { ok: false; error: ApiError };

/** Checks a create/edit body the way Discord does for the limits a bot can trip over. */
export function validateMessageBody(
  body: Record<string, unknown>,
  files: readonly UploadedFile[],
  creating: boolean,
  maxUploadBytes: number,
): BodyResult {
  if (body.content !== undefined && body.content !== null) {
    if (typeof body.content !== 'string') return { ok: false, error: invalidFormBody('content', 'BASE_TYPE_STRING', 'Must be a string.') };
    if ([...body.content].length > MAX_CONTENT)
      return { ok: false, error: invalidFormBody('content', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_CONTENT} or fewer in length.`) };
  }
  if (Array.isArray(body.embeds) && body.embeds.length > MAX_EMBEDS)
    return { ok: false, error: invalidFormBody('embeds', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_EMBEDS} or fewer in length.`) };
  if (files.length > MAX_FILES)
    return { ok: false, error: invalidFormBody('files', 'BASE_TYPE_MAX_LENGTH', `Must be ${MAX_FILES} or fewer in length.`) };
  if (files.some((f) => f.data.length > maxUploadBytes)) return { ok: false, error: API_ERRORS.entityTooLarge };
  if (creating) {
    const hasContent = typeof body.content === 'string' && body.content.length > 0;
    const hasEmbeds = Array.isArray(body.embeds) && body.embeds.length > 0;
    const hasComponents = Array.isArray(body.components) && body.components.length > 0;
    const hasStickers = Array.isArray(body.sticker_ids) && body.sticker_ids.length > 0;
    if (!hasContent && !hasEmbeds && !hasComponents && !hasStickers && files.length === 0 && !body.poll)
      return { ok: false, error: API_ERRORS.emptyMessage };
  }
  return { ok: true };
}

/** Index of an upload field `files[N]` (or any field ending in a number), else the position. */
function uploadIndex(file: UploadedFile, position: number): string {
  const match = /(\d+)\]?$/.exec(file.field);
  return match?.[1] ?? String(position);
}

/**
 * The attachments after a create or edit: kept existing ones (listed by id in `attachments`) plus
 * uploads (matched to `attachments[].id` = upload index). Without an `attachments` list, an edit
 * keeps every existing attachment and adds the uploads.
 */
export function resolveAttachments(
  body: Record<string, unknown>,
  files: readonly UploadedFile[],
  existing: readonly FakeAttachment[],
  urlFor: (id: string, filename: string) => string,
): FakeAttachment[] {
  const listed = Array.isArray(body.attachments) ? (body.attachments as Array<Record<string, unknown>>) : undefined;
  const uploads = files.map((file, position) => {
    const index = uploadIndex(file, position);
    const meta = listed?.find((a) => String(a.id) === index);
    const id = snowflake();
    const filename = typeof meta?.filename === 'string' ? meta.filename : file.name;
    const attachment: FakeAttachment = {
      id,
      filename,
      contentType: file.contentType,
      size: file.data.length,
      data: file.data,
      url: urlFor(id, filename),
    };
    if (typeof meta?.description === 'string') attachment.description = meta.description;
    return attachment;
  });
  if (!listed) return [...existing, ...uploads];
  const kept = existing.filter((a) => listed.some((l) => String(l.id) === a.id));
  return [...kept, ...uploads];
}

/** Who is pinged by `content` under `allowedMentions` (https://discord.com/developers/docs/resources/message#allowed-mentions-object). */
export function computePings(content: string, allowedMentions: unknown, isReply: boolean): Pings {
  const users = [...new Set([...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1] as string))];
  const roles = [...new Set([...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1] as string))];
  const everyoneText = /@(everyone|here)\b/.test(content);
  if (allowedMentions === undefined || allowedMentions === null) {
    return { users, roles, everyone: everyoneText, repliedUser: isReply };
  }
  const am = allowedMentions as { parse?: string[]; users?: string[]; roles?: string[]; replied_user?: boolean };
  const parse = am.parse ?? [];
  return {
    users: parse.includes('users') ? users : users.filter((u) => am.users?.includes(u)),
    roles: parse.includes('roles') ? roles : roles.filter((r) => am.roles?.includes(r)),
    everyone: everyoneText && parse.includes('everyone'),
    repliedUser: isReply && am.replied_user === true,
  };
}

interface ApiMessageContext {
  author: FakeUser;
  applicationId: string;
  /** Resolves user ids (for `mentions`). */
  user: (id: string) => FakeUser | undefined;
  interaction?: { id: string; name: string; user: FakeUser; type: number };
}

/** The API message object for a bot-created message. */
export function toAPIMessage(message: FakeMessage, context: ApiMessageContext): APIMessage {
  const isResponse = message.source !== 'channel';
  const type = message.source === 'interaction' ? 20 : message.messageReference ? 19 : 0;
  const api: Record<string, unknown> = {
    id: message.id,
    type,
    channel_id: message.channelId,
    ...(message.guildId ? { guild_id: message.guildId } : {}),
    author: { ...toAPIUser(context.author), bot: true },
    content: message.content,
    timestamp: message.createdAt,
    edited_timestamp: message.editedAt,
    tts: message.tts,
    mention_everyone: message.pings.everyone,
    mentions: message.pings.users
      .map((id) => context.user(id))
      .filter((u) => u !== undefined)
      .map(toAPIUser),
    mention_roles: message.pings.roles,
    attachments: message.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      url: a.url,
      proxy_url: a.url,
      content_type: a.contentType,
      ...(a.description !== undefined ? { description: a.description } : {}),
    })),
    embeds: message.embeds,
    components: message.components,
    pinned: false,
    flags: message.flags,
  };
  if (message.messageReference) {
    api.message_reference = {
      type: 0,
      channel_id: message.channelId,
      ...(message.guildId ? { guild_id: message.guildId } : {}),
      ...message.messageReference,
    };
  }
  if (isResponse) {
    api.webhook_id = context.applicationId;
    api.application_id = context.applicationId;
    if (context.interaction) {
      api.interaction_metadata = {
        id: context.interaction.id,
        type: context.interaction.type,
        user: toAPIUser(context.interaction.user),
        authorizing_integration_owners: message.guildId ? { '0': message.guildId } : { '1': context.interaction.user.id },
      };
      api.interaction = {
        id: context.interaction.id,
        type: context.interaction.type,
        name: context.interaction.name,
        user: toAPIUser(context.interaction.user),
      };
    }
  }
  return api as unknown as APIMessage;
}
