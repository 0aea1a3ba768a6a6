/**
 * What the page shows, as plain JSON: the server (channels, members, who is in voice), the channel's
 * timeline (members' messages, commands they ran, the bot's messages and replies), and the service
 * side (requests, rate windows, characters). Built from the local Discord's and the emulator's own
 * records; nothing here holds a token (the emulator's log masks them, and headers are not shown).
 */
import type { APIApplicationCommandInteractionDataOption } from 'discord.js';
import type { Emulator } from '@yomiage/tts-emulator';
import { PERMISSIONS, type FakeGuild, type FakeMessage } from '@yomiage/local-discord';

interface MemberView {
  id: string;
  username: string;
  displayName: string;
  bot: boolean;
  /** Has Manage Server (owner, Administrator or a role with it). */
  admin: boolean;
  roles: string[];
}

interface GuildView {
  id: string;
  name: string;
  locale: string;
  /** `status`: a voice channel's status, shown under its name as Discord shows it (null: none). */
  channels: Array<{ id: string; name: string; type: number; status?: string | null }>;
  roles: Array<{ id: string; name: string }>;
  members: MemberView[];
  voiceStates: Array<{ userId: string; channelId: string }>;
}

export interface MemberItem {
  type: 'member';
  id: string;
  channelId: string;
  authorId: string;
  content: string;
  at: number;
  reactions: string[];
  deleted: boolean;
  /** Files the member attached, served by the playground; `description` is the alt text they wrote. */
  attachments?: MemberAttachment[];
  /** The poll the message is (its votes as members cast them on the page). */
  poll?: PollView;
  /** Discord's poll result message (type 46), posted when the poll ended, in the poll author's name. */
  pollResult?: PollResultView;
}

export interface MemberAttachment {
  id: string;
  filename: string;
  contentType: string;
  size: number;
  url: string;
  description?: string;
}

export interface PollView {
  question: string;
  /** Numbered from 1, as Discord numbers a poll's answers; `voters` are member ids. */
  answers: Array<{ id: number; text: string; voters: string[] }>;
  allowMultiselect: boolean;
  /** When its time is up (ms since the epoch). */
  expiresAt: number;
  ended: boolean;
}

export interface PollResultView {
  /** The poll's message. */
  pollId: string;
  question: string;
  /** The one answer with the most votes; none on a tie or without votes. */
  winner?: string;
  winnerVotes: number;
  totalVotes: number;
}

/** Who ran what, for the bot's replies: a slash command, a message command (Apps), or a button click. */
export interface Invoked {
  kind: 'slash' | 'message' | 'button';
  /** The command's name (a button's custom_id). */
  name: string;
  userId: string;
  /** The timeline item of the command a modal's submit answers (its reply is headed as that command). */
  itemId?: string;
  /** For a click: the message that had the button (its reply is shown as a reply to it). */
  messageId?: string;
}

export interface CommandItem {
  type: 'command';
  id: string;
  channelId: string;
  userId: string;
  name: string;
  /** A slash command, or a message command run from a message's Apps menu. */
  kind: 'slash' | 'message';
  /** `/config voice value: x` as Discord shows it. */
  summary: string;
  /** The options as sent, for the page to name them in the Discord language chosen. */
  options: readonly APIApplicationCommandInteractionDataOption[];
  locale: string;
  at: number;
  /** The bot answered: its reply (or the modal it opened) stands for the command in the timeline. */
  replied: boolean;
  /** Discord says "The application did not respond" after 3 s without an answer. */
  noResponse: boolean;
}

interface BotItem {
  type: 'bot';
  id: string;
  channelId: string;
  at: number;
  content: string;
  embeds: unknown[];
  attachments: Array<{ id: string; filename: string; size: number; contentType: string; url: string }>;
  /** The message's buttons (a question answered by a click), with Discord's style (1 blurple, 2 grey, 3 green, 4 red). */
  buttons: Array<{ customId: string; label: string; style: number }>;
  /** Only the member who ran the command sees it (flag 64). */
  ephemeral: boolean;
  /** A deferred reply not answered yet ("yomiage is thinking..."). */
  loading: boolean;
  /** What it answers; `id` is the timeline item of the command (the modal's opener for a submit). */
  interaction?: { id: string } & Invoked;
  replyTo?: string;
  edited: boolean;
  deleted: boolean;
}

export type TimelineItem = MemberItem | CommandItem | BotItem;

export function guildView(guild: FakeGuild): GuildView {
  const manage = PERMISSIONS.ManageGuild | PERMISSIONS.Administrator;
  const rolePermissions = new Map(guild.roles.map((r) => [r.id, BigInt(r.permissions)]));
  return {
    id: guild.id,
    name: guild.name,
    locale: guild.preferredLocale ?? 'en-US',
    channels: guild.channels.map((c) => ({ id: c.id, name: c.name, type: c.type, ...(c.type === 2 ? { status: c.status ?? null } : {}) })),
    roles: guild.roles.filter((r) => r.id !== guild.id && !r.managed).map((r) => ({ id: r.id, name: r.name })),
    members: guild.members.map((m) => {
      const bits = [guild.id, ...m.roles].reduce((acc, id) => acc | (rolePermissions.get(id) ?? 0n), 0n);
      return {
        id: m.user.id,
        username: m.user.username,
        displayName: m.nick ?? m.user.globalName ?? m.user.username,
        bot: !!m.user.bot,
        admin: guild.ownerId === m.user.id || (bits & manage) !== 0n,
        roles: m.roles.filter((r) => guild.roles.some((role) => role.id === r && !role.managed)),
      };
    }),
    voiceStates: guild.voiceStates.map((v) => ({ userId: v.userId, channelId: v.channelId })),
  };
}

/** A bot message as the page shows it; attachments are served by the playground itself. */
export function botItem(message: FakeMessage, interactions: ReadonlyMap<string, Invoked>): BotItem {
  const invoked = message.interactionId ? interactions.get(message.interactionId) : undefined;
  return {
    type: 'bot',
    id: message.id,
    channelId: message.channelId,
    at: Date.parse(message.createdAt),
    content: message.content,
    embeds: message.embeds,
    attachments: message.attachments.map((a) => ({
      id: a.id,
      filename: a.filename,
      size: a.size,
      contentType: a.contentType,
      url: `/api/attachments/${a.id}`,
    })),
    buttons: (message.components as Array<{ components?: Array<{ type?: number; custom_id?: string; label?: string; style?: number }> }>)
      .flatMap((row) => row.components ?? [])
      .filter((c) => c.type === 2 && typeof c.custom_id === 'string')
      .map((c) => ({ customId: c.custom_id!, label: c.label ?? c.custom_id!, style: c.style ?? 2 })),
    ephemeral: (message.flags & 64) !== 0,
    loading: (message.flags & 128) !== 0,
    ...(message.interactionId && invoked
      ? {
          interaction: {
            id: invoked.itemId ?? message.interactionId,
            kind: invoked.kind,
            name: invoked.name,
            userId: invoked.userId,
            ...(invoked.messageId ? { messageId: invoked.messageId } : {}),
          },
        }
      : {}),
    ...(message.messageReference?.message_id ? { replyTo: message.messageReference.message_id } : {}),
    edited: message.edits > 0,
    deleted: message.deleted,
  };
}

interface ServiceView {
  baseUrl: string;
  speech: string;
  rate: ReturnType<Emulator['stats']>['rate'];
  charactersCharged: number;
  notices: number;
  jobsCreated: number;
  requestsByTarget: Record<string, number>;
  accounts: Array<{ plan: string; charged: number; remaining: number }>;
  /** The latest requests, newest first. */
  requests: Array<{
    at: number;
    target: string;
    method: string;
    path: string;
    status: number;
    code?: string;
    voice?: string;
    text?: string;
    chars?: number;
    /** The speed asked for, when not 1 (a long message read faster, keeping up). */
    speed?: number;
  }>;
}

const SHOWN_REQUESTS = 60;

export function serviceView(emulator: Emulator): ServiceView {
  const stats = emulator.stats();
  const requests = emulator
    .requests()
    .slice(-SHOWN_REQUESTS)
    .reverse()
    .map((r) => {
      const body = (typeof r.body === 'object' && r.body !== null ? r.body : {}) as { text?: unknown; voice?: unknown; speed?: unknown };
      const text = typeof body.text === 'string' ? body.text : undefined;
      return {
        at: r.at,
        target: r.target,
        method: r.method,
        // Signed audio URLs carry their signature in the query, which the log already leaves out.
        path: r.path,
        status: r.status,
        ...(r.code !== undefined ? { code: r.code } : {}),
        ...(typeof body.voice === 'string' ? { voice: body.voice } : {}),
        ...(text !== undefined ? { text, chars: [...text].length } : {}),
        ...(typeof body.speed === 'number' && body.speed !== 1 ? { speed: body.speed } : {}),
      };
    });
  return {
    baseUrl: emulator.baseUrl,
    speech: emulator.speech,
    rate: stats.rate,
    charactersCharged: stats.charactersCharged,
    notices: stats.notices,
    jobsCreated: stats.jobsCreated,
    requestsByTarget: stats.requests,
    accounts: emulator.accounts().map((a) => ({ plan: a.plan, charged: a.charged, remaining: a.remaining })),
    requests,
  };
}
