import { MessageReferenceType, MessageType, type Embed, type Message } from 'discord.js';
import { FILTERED, normaliseFiltered, type EmbedKind, type PollResult } from '../../speech/text/text.ts';
import type { FilterEntry } from '../../domain/filters.ts';
import { type Dictionary } from '../../speech/text/dictionary.ts';
import { type ReadLang, WORDS } from '../../speech/text/words.ts';
import { toPlainMessage } from '../audience/mentions.ts';
import type { Audience } from '../audience/visibility.ts';

/** How a message's text is read in its guild. */
interface MessageTextOptions {
  lang: ReadLang;
  maxLength: number;
  dictionary: Dictionary;
  /** Unicode emoji by name (a per-server switch). */
  readEmoji: boolean;
  /** Forwarded messages are read: their snapshot after a lead-in (a per-server switch). */
  forwards: boolean;
  /** Who will hear it: channels they cannot all view are not named. */
  audience: Audience;
  /** Read before the content: a forum post's title, on its first message. */
  title?: string;
  /** The server's filters: a message one of them skips (its own text or what it forwards) is FILTERED. */
  filters?: readonly FilterEntry[];
}

/**
 * The speakable text of a message, or null when nothing is left: its own content, attachments and
 * stickers; for a forward (Discord's message snapshot, https://discord.com/developers/docs/resources/message#message-snapshot-object)
 * the forwarded content after "転送、" / "Forwarded: ". With forwards off a forward is not read.
 * A poll is read as its question and options, and Discord's message when it ends (its result) as
 * the question, the winner or a tie, and the votes; an attachment by its alt text when it has one;
 * embeds by kind, except link previews.
 */
export function messageText(
  message: Message<true>,
  author: { id: string; name: string },
  o: MessageTextOptions,
): string | null | typeof FILTERED {
  const result = pollResultOf(message);
  const read = (m: Pick<Message, 'content' | 'attachments' | 'stickers' | 'embeds'> & { poll?: Message['poll'] }) =>
    normaliseFiltered(
      {
        ...toPlainMessage({
          content: m.content,
          author,
          guild: message.guild,
          users: message.client.users,
          audience: o.audience,
          attachments: [...m.attachments.values()].map((a) => ({ name: a.name, contentType: a.contentType, description: a.description })),
          stickers: [...m.stickers.values()].map((s) => ({ name: s.name })),
        }),
        // A member (not a bot or a webhook) cannot send an embed: theirs are link previews, never read.
        embeds: message.author.bot || message.webhookId ? embedKinds(m.embeds, m.content) : [],
        ...(m.poll?.question.text ? { poll: { question: m.poll.question.text, answers: m.poll.answers.map((a) => a.text ?? '') } } : {}),
        ...(result ? { pollResult: result } : {}),
      },
      { lang: o.lang, maxLength: o.maxLength, dictionary: o.dictionary, readEmoji: o.readEmoji, filters: o.filters ?? [] },
    );
  const own = read(o.title ? { ...pick(message), content: `${o.title}\n${message.content}` } : message);
  if (own === FILTERED || message.reference?.type !== MessageReferenceType.Forward) return own;
  if (!o.forwards) return null;
  const snapshots = [...message.messageSnapshots.values()].map(read);
  if (snapshots.includes(FILTERED)) return FILTERED;
  const forwarded = snapshots.filter((s): s is string => typeof s === 'string');
  if (forwarded.length === 0) return own;
  const lead = WORDS[o.lang].forwarded + forwarded.join(WORDS[o.lang].pause);
  return own ? own + WORDS[o.lang].pause + lead : lead;
}

const pick = (m: Message) => ({ content: m.content, attachments: m.attachments, stickers: m.stickers, embeds: m.embeds, poll: m.poll });

/**
 * The kinds of a message's embeds that are read: an image or video embed as one, another embed as
 * "埋め込み" / "an embed" (their text is not read). A link preview (an embed of a URL written in
 * the content, https://discord.com/developers/docs/resources/message#embed-object-embed-types) is
 * not read: the URL already is ("URL省略").
 */
function embedKinds(embeds: readonly Embed[], content: string): EmbedKind[] {
  const preview = (url: string | null) => url !== null && (content.includes(url) || content.includes(url.replace(/\/$/, '')));
  return embeds
    .filter((e) => !preview(e.url) && e.data.type !== 'poll_result') // a poll's result is read as one (pollResultOf)
    .map((e) => (e.data.type === 'image' ? 'image' : e.data.type === 'video' || e.data.type === 'gifv' ? 'video' : 'embed'));
}

/**
 * Everything members wrote that a message is read from, one piece a line: its content, its
 * attachments' alt text, a poll's question and answers, a poll result's question and winner (what
 * Apps > Fix reading offers words from).
 */
export function writtenText(message: Pick<Message, 'content' | 'attachments' | 'poll' | 'type' | 'embeds'>): string {
  const result = pollResultOf(message);
  return [
    message.content,
    ...[...message.attachments.values()].map((a) => a.description ?? ''),
    message.poll?.question.text ?? '',
    ...(message.poll?.answers.map((a) => a.text ?? '') ?? []),
    result?.question ?? '',
    result?.winner?.text ?? '',
  ]
    .filter((piece) => piece !== '')
    .join('\n');
}

/**
 * What Discord's poll result message (type 46, sent in the channel when a poll ends) says, from its
 * `poll_result` embed (https://discord.com/developers/docs/resources/message#embed-fields-by-embed-type-poll-result-embed-fields);
 * null for any other message, or one whose embed did not arrive (no message content).
 * Its winner fields are absent on a tie and when nobody voted.
 */
function pollResultOf(message: Pick<Message, 'type' | 'embeds'>): PollResult | null {
  if (message.type !== MessageType.PollResult) return null;
  const embed = message.embeds.find((e) => e.data.type === 'poll_result');
  const fields = new Map((embed?.fields ?? []).map((f) => [f.name, f.value]));
  const question = fields.get('poll_question_text');
  if (question === undefined) return null;
  const count = (name: string) => {
    const n = Number(fields.get(name));
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  };
  // An answer of only an emoji has no text: its emoji's name stands in (a custom one's is a word).
  const text = fields.get('victor_answer_text') ?? fields.get('victor_answer_emoji_name') ?? '';
  const answerId = fields.has('victor_answer_id') ? count('victor_answer_id') || null : null;
  const won = answerId !== null || text !== '';
  return { question, ...(won ? { winner: { text, answerId } } : {}), votes: count('victor_answer_votes'), total: count('total_votes') };
}
