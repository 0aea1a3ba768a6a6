import type { Guild, UserManager } from 'discord.js';
import type { PlainMessage } from '../../speech/text/text.ts';
import { audienceCanView, type Audience } from './visibility.ts';

/** A text to be read (a message, or a command's text option) and what is known around it. */
interface TextSource {
  content: string;
  author: { id: string; name: string };
  guild: Guild | null;
  /** The client's users: someone mentioned who is not a cached member still has a name. */
  users: UserManager;
  /** Who will hear it: a channel is named only when all of them can view it (visibility.ts). */
  audience: Audience;
  attachments?: PlainMessage['attachments'];
  stickers?: PlainMessage['stickers'];
}

/**
 * The one mention resolver: a message or a command's text as the speech core reads it, with every
 * raw mention (`<@id>`, `<@!id>`, `<@&id>`, `<#id>`) named from what discord.js knows. A message's
 * own mentions are in these caches too (discord.js adds the users and members it carries). A
 * channel the audience cannot all view is left unnamed, so it is read as a neutral word.
 */
export function toPlainMessage(source: TextSource): PlainMessage {
  const { content, guild } = source;
  const users: Record<string, string> = {};
  const roles: Record<string, string> = {};
  const channels: Record<string, string> = {};
  for (const [, id] of content.matchAll(/<@!?(\d+)>/g)) {
    const member = guild?.members.cache.get(id!);
    const user = member?.user ?? source.users.cache.get(id!);
    if (user) users[id!] = member?.displayName ?? user.displayName;
  }
  for (const [, id] of content.matchAll(/<@&(\d+)>/g)) {
    const role = guild?.roles.cache.get(id!);
    if (role) roles[id!] = role.name;
  }
  for (const [, id] of content.matchAll(/<#(\d+)>/g)) {
    const channel = guild?.channels.cache.get(id!);
    if (guild && channel && audienceCanView(guild, channel, source.audience)) channels[id!] = channel.name;
  }
  return {
    content,
    authorId: source.author.id,
    authorName: source.author.name,
    users,
    roles,
    channels,
    attachments: source.attachments ?? [],
    stickers: source.stickers ?? [],
  };
}
