import { AttachmentBuilder } from 'discord.js';
import { t, type Lang } from '../../i18n/texts.ts';

// Every reply that lists things (auto-read channels, role allowances, muted members, dictionary
// entries) goes through here: a list longer than one Discord message (2,000 characters) would make
// Discord refuse the whole reply. The reply keeps its text and as many lines as fit, says how many
// more there are, and attaches the whole list as a text file (the reply's flags apply to it too).

/** Discord's limit on a message's content. */
const REPLY_MAX_CHARS = 2_000;

interface ListReplyOptions {
  /** The reply's text around the list (usually `t(lang, key, { ..., list })`). */
  text: (list: string) => string;
  /** One item per entry, as shown in the message. */
  lines: readonly string[];
  /** Between items in the message: a new line (default) or ", ". */
  separator?: string;
  /** The attachment's name, e.g. `autoread-channels.txt`. */
  fileName: string;
  /** The items as written in the file, one a line (mentions do not render there); default `lines`. */
  fileLines?: readonly string[];
  /** Characters allowed in the message (tests use a smaller one); default REPLY_MAX_CHARS. */
  maxChars?: number;
}

/** The reply's content, and the whole list as a file when it does not fit in the message. */
export function listReply(lang: Lang, options: ListReplyOptions): { content: string; files: AttachmentBuilder[] } {
  const separator = options.separator ?? '\n';
  const max = options.maxChars ?? REPLY_MAX_CHARS;
  const whole = options.text(options.lines.join(separator));
  if (whole.length <= max) return { content: whole, files: [] };
  const withFirst = (n: number) => {
    const more = t(lang, 'list.more_in_file', { count: options.lines.length - n });
    return options.text(n > 0 ? `${options.lines.slice(0, n).join(separator)}\n${more}` : more);
  };
  let shown = 0;
  while (shown < options.lines.length && withFirst(shown + 1).length <= max) shown += 1;
  const body = `${(options.fileLines ?? options.lines).join('\n')}\n`;
  const file = new AttachmentBuilder(Buffer.from(body, 'utf8'), { name: options.fileName });
  // Even the text alone may be too long (a long header): cut it rather than have Discord refuse the reply.
  return { content: withFirst(shown).slice(0, max), files: [file] };
}
