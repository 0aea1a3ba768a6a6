import { MessageReferenceType, type Message } from 'discord.js';
import { normaliseMessage, type DictionaryEntry, type ReadLang } from '../../speech/text.ts';
import { WORDS } from '../../speech/words.ts';
import { toPlainMessage } from './mentions.ts';
import type { Audience } from './visibility.ts';

/** How a message's text is read in its guild. */
export interface MessageTextOptions {
  lang: ReadLang;
  maxLength: number;
  dictionary: readonly DictionaryEntry[];
  /** Unicode emoji by name (a per-server switch). */
  readEmoji: boolean;
  /** Forwarded messages are read: their snapshot after a lead-in (a per-server switch). */
  forwards: boolean;
  /** Who will hear it: channels they cannot all view are not named. */
  audience: Audience;
}

/**
 * The speakable text of a message, or null when nothing is left: its own content, attachments and
 * stickers; for a forward (Discord's message snapshot, https://discord.com/developers/docs/resources/message#message-snapshot-object)
 * the forwarded content after "転送、" / "Forwarded: ". With forwards off a forward is not read.
 */
export function messageText(message: Message<true>, author: { id: string; name: string }, o: MessageTextOptions): string | null {
  const read = (m: Pick<Message, 'content' | 'attachments' | 'stickers'>) =>
    normaliseMessage(
      toPlainMessage({
        content: m.content,
        author,
        guild: message.guild,
        users: message.client.users,
        audience: o.audience,
        attachments: [...m.attachments.values()].map((a) => ({ name: a.name, contentType: a.contentType })),
        stickers: [...m.stickers.values()].map((s) => ({ name: s.name })),
      }),
      { lang: o.lang, maxLength: o.maxLength, dictionary: o.dictionary, readEmoji: o.readEmoji },
    );
  const own = read(message);
  if (message.reference?.type !== MessageReferenceType.Forward) return own;
  if (!o.forwards) return null;
  const forwarded = [...message.messageSnapshots.values()].map(read).filter((s): s is string => s !== null);
  if (forwarded.length === 0) return own;
  const lead = WORDS[o.lang].forwarded + forwarded.join(WORDS[o.lang].pause);
  return own ? own + WORDS[o.lang].pause + lead : lead;
}
