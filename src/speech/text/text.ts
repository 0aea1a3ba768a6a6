/**
 * Message text normalisation: Discord markdown in, speakable text out (the normalisation the
 * read-aloud bots people use today apply). Pure and free of discord.js: the Discord layer flattens a
 * message into a `PlainMessage` and calls `normaliseMessage`.
 *
 * Pipeline, in order (each step's reason is next to its code):
 *  1. NFKC but "～" (spelling.ts: one spelling for the dictionary and the cache), line endings, terminal escape
 *     sequences (whole), control characters.
 *  2. Line prefixes: "# " headings, "-# " subtext, "> " / ">>> " quotes, "- " bullets.
 *  3. One left-to-right scan, as Discord parses: escapes, code blocks -> "コードブロック省略",
 *     spoilers -> "ネタバレ" (the hidden text is never read), inline code -> its content.
 *  4. Masked links [text](url) -> text; URLs and invites -> "URL省略" / "招待リンク".
 *  5. Mentions -> names (unknown -> "ユーザー"), @everyone/@here -> words, custom emoji -> name,
 *     timestamps -> "日時"; then bold/italic/strike/underline markers are stripped.
 *  6. A poll ("投票、…、選択肢、…") or a poll's result ("投票結果、…"), attachments by their alt
 *     text ("画像: 夕焼けの海") or with embeds by kind ("画像3枚"), and stickers appended, each after a pause.
 *  7. The server's filters (filter.ts: a message one matches is not read, or a match is read as
 *     another word), laughter "wwww" -> "ワラ" (ja), then the dictionary (after markup, so it reaches
 *     names), then the filters again on what the dictionary made (a reading cannot bring a filtered
 *     word back).
 *  8. Unicode emoji dropped (or read by name: emoji.ts), newlines -> "、" / ", ", safety net (no
 *     "<@", URL or ping), runs of one character capped, nothing speakable -> null, cut at
 *     maxLength + "以下略" / "and so on".
 * The words themselves live in words.ts.
 */
import { countChars, truncateChars } from '../../tts/chars.ts';
import { applyDictionary, type Dictionary } from './dictionary.ts';
import { applyFilters } from './filter.ts';
import type { FilterEntry } from '../../domain/filters.ts';
import { readEmoji } from './emoji.ts';
import { normaliseSpelling } from './spelling.ts';
import { WORDS, type AttachmentKind, type PollOutcome, type ReadLang, type SpokenWords } from './words.ts';

export interface PlainMessage {
  /** Raw Discord markdown content. */
  content: string;
  authorId: string;
  /** Display name, nickname override already applied by the caller. */
  authorName: string;
  /** User id -> display name, for `<@id>` / `<@!id>`. */
  users: Record<string, string>;
  /** Role id -> name, for `<@&id>`. */
  roles: Record<string, string>;
  /** Channel id -> name, for `<#id>`. */
  channels: Record<string, string>;
  /**
   * `description` is the alt text a member wrote for it (https://discord.com/developers/docs/resources/message#attachment-object):
   * read instead of the kind alone, as members' text (markup resolved, dictionary, length cap).
   */
  attachments: { name: string; contentType?: string | null; description?: string | null }[];
  stickers: { name: string }[];
  /** Embeds read by kind, counted with attachments of the same kind (link previews are left out by the caller). */
  embeds?: EmbedKind[];
  /** A poll: its question and its options' texts (https://discord.com/developers/docs/resources/poll). */
  poll?: { question: string; answers: string[] };
  /** A poll that ended, as Discord's poll result message reports it. */
  pollResult?: PollResult;
}

/**
 * What Discord's poll result message says of a poll that ended (its `poll_result` embed,
 * https://discord.com/developers/docs/resources/message#embed-fields-by-embed-type-poll-result-embed-fields).
 */
export interface PollResult {
  question: string;
  /** The answer that won; absent on a tie or when nobody voted. `text` is '' for an answer of only an emoji. */
  winner?: { text: string; answerId: number | null };
  /** Votes of the most-voted answer (each of them, on a tie). */
  votes: number;
  total: number;
}

/** What an embed is read as: an image or video embed, or any other embed. */
export type EmbedKind = Extract<AttachmentKind, 'image' | 'video' | 'embed'>;

export interface NormaliseOptions {
  lang: ReadLang;
  /**
   * Cut the text at this many characters (code points, see src/tts/chars.ts) and append "以下略".
   * Chat passes the max length times the server's fast-reading ceiling (fast-reading.ts `readLimit`).
   */
  maxLength: number;
  /** Applied after markup is resolved, before the length cap. Treat it as immutable. */
  dictionary?: Dictionary;
  /** Read Unicode emoji by their names (emoji.ts) instead of dropping them (off by default). */
  readEmoji?: boolean;
  /** The server's filters (src/domain/filters.ts). Treat it as immutable. */
  filters?: readonly FilterEntry[];
}

/** What normaliseFiltered answers for a message a 'skip' filter matches: it is not read at all. */
export const FILTERED: unique symbol = Symbol('filtered');

/** Longest name read for a mention (and by names.ts for the author prefix). */
export const NAME_MAX_CHARS = 20;
/** A run of one character longer than this is shortened to it (digits: see `capRuns`). */
const RUN_MAX = 4;
const DIGIT_RUN_MAX = 12;

// Private-use characters stand in for already-final pieces of text ("literals": names, URL words)
// while markdown is stripped from the rest, so a user named "__x__" or a URL with "_" survives.
const PLACEHOLDER_BASE = 0xe000;
const PLACEHOLDER_MAX = 0xf8ff - PLACEHOLDER_BASE;
const PRIVATE_USE = /[\uE000-\uF8FF]/g;
const PLACEHOLDER = /[\uE000-\uF8FF]/g;
// With the u flag this matches only unpaired surrogates, which cannot be sent as UTF-8.
const LONE_SURROGATE = /[\uD800-\uDFFF]/gu;

// Bare and <suppressed> URLs as Discord links them; stops at whitespace, placeholders and Japanese
// punctuation so "https://a.example/x。すごい" keeps "すごい".
// A domain typed without a scheme counts when a path or query follows it ("youtu.be/xyz?t=4",
// "discord.gg/abc?event=1"): read aloud, the ids and query strings are noise. A bare "node.js" or
// "example.com" without a path is read as written, and so are file names with a path ("src/a.ts").
const URL_TAIL = '[^\\s<>\\uE000-\\uF8FF、。「」『』【】]';
const BARE_DOMAIN = `(?<![\\w.@/:-])(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\\.)+(?!(?:js|ts|jsx|tsx|mjs|cjs|json|txt|html?|css|exe|zip|png|jpe?g|gif|mp[34])[/?])[a-z]{2,24}(?::\\d{1,5})?[/?]${URL_TAIL}*`;
const URL_PATTERN = new RegExp(
  [
    '<(?:[a-z][\\w+.-]{1,15}:\\/\\/)[^\\s<>\\uE000-\\uF8FF]*>', // <suppressed>
    `[a-z][\\w+.-]{1,15}:\\/\\/${URL_TAIL}*`, // any scheme: https, ftp, steam...
    `(?<![\\w.@])www\\.${URL_TAIL}+`,
    `(?:discord\\.gg|discord(?:app)?\\.com\\/invite)\\/${URL_TAIL}*`,
    BARE_DOMAIN,
  ].join('|'),
  'gi',
);
const INVITE_PATTERN = /^<?(?:https?:\/\/)?(?:www\.)?(?:discord\.gg|discord(?:app)?\.com\/invite)\//i;

const MASKED_LINK = /\[([^[\]\n]+)\]\(\s*<?https?:\/\/[^\s<>()\uE000-\uF8FF]*(?:\([^\s<>()]*\)[^\s<>()\uE000-\uF8FF]*)*>?\s*\)/gi;

// Discord message-content entities (discord.com/developers/docs/reference#message-formatting).
const ENTITY_PATTERN =
  /<@!?(\d{1,25})>|<@&(\d{1,25})>|<#(\d{1,25})>|<a?:([\w~-]{1,64}):\d{1,25}>|<t:-?\d{1,20}(?::[tTdDfFrRsS])?>|<\/([^:<>\n]{1,100}):\d{1,25}>|@(everyone|here)/g; // Discord pings even when a word follows

// Block tokens scanned left to right in one pass, as Discord's parser does: whichever starts first
// wins, so a spoiler that contains a code block is hidden whole, and a code span shows its pipes.
const BLOCK_TOKENS = /\\([^\p{L}\p{N}\s])|```[\s\S]*?```|\|\|[\s\S]+?\|\||``([\s\S]+?)``|`([^`]+?)`/gu;
const MARKDOWN_ESCAPABLE = new Set(['*', '_', '~', '|', '`', '>', '#', '-', '[', ']', '(', ')', '\\']);

// Line prefixes: quote, subtext, heading, bullet. Numbered lists keep their number (it is read).
const LINE_PREFIX = /^[ \t]*(?:>>>[ \t]?|>[ \t]|-#[ \t]|#{1,3}[ \t]|[-*+][ \t])/gm;

// Unicode emoji: pictographs, keycaps, flags (regional indicators, tag sequences), skin tones, ZWJ
// and variation selectors. Text-presentation symbols such as ♪ and ♡ are not pictographic and stay.
const EMOJI =
  // eslint-disable-next-line no-misleading-character-class -- single code points, each matched alone
  /[0-9#*]\uFE0F?\u20E3|\p{Extended_Pictographic}|\p{Regional_Indicator}|[\u{1F3FB}-\u{1F3FF}\u{E0020}-\u{E007F}\uFE0E\uFE0F\u200D\u20E3]/gu;
// eslint-disable-next-line no-misleading-character-class -- EMOJI's own classes, single code points each
const HAS_EMOJI = new RegExp(EMOJI.source, 'u');
// Format characters (zero-width space, bidi marks...) except the ZWJ and tags emoji are built from.
const INVISIBLE = /(?![\u200D\u{E0020}-\u{E007F}])\p{Cf}/gu;
const CONTROL = /(?![\n\t])\p{Cc}/gu;
// Terminal escape sequences, removed whole before control characters ("\x1b[31m" was
// read as "[31m"): CSI (ESC [ or 0x9B) parameters and final byte, OSC strings up to BEL or ST, and
// the two-byte escapes.
// eslint-disable-next-line no-control-regex -- matching terminal escape sequences is the point
const ANSI_ESCAPE = /(?:\u001b\[|\u009b)[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
const JA_CHAR = '[\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Han}ー]';
const LAUGH_RUN = /(?<![A-Za-z])[wW]{2,}(?![A-Za-z])/g;
// A single "w" only where it ends a phrase: "それなw" laughs, "W杯" (World Cup) does not.
const LAUGH_ONE = new RegExp(`(?<=${JA_CHAR}|[!?。、…])[wW](?![\\p{L}\\p{N}])`, 'gu');
const ENDS_WITH_PAUSE = /[、。,.!?…:;]$/u;
const SPEAKABLE = /[\p{L}\p{N}]/u;

/**
 * Turns a Discord message into the text to speak, or `null` when nothing speakable is left (only
 * emoji, punctuation or whitespace). The result never contains a mention (`<@`), a URL, or one
 * character 20+ times in a row (the advanced endpoint refuses that, spec: job creation request).
 * A message one of `opts.filters` skips is null here too; normaliseFiltered tells it apart.
 */
export function normaliseMessage(msg: PlainMessage, opts: NormaliseOptions): string | null {
  const text = normaliseFiltered(msg, opts);
  return text === FILTERED ? null : text;
}

/** normaliseMessage, answering FILTERED for a message one of the server's 'skip' filters matches. */
export function normaliseFiltered(msg: PlainMessage, opts: NormaliseOptions): string | null | typeof FILTERED {
  const words = WORDS[opts.lang];
  const content = resolveMarkup(msg, opts.lang, words);
  const poll = msg.poll ? [pollWords(msg, msg.poll, opts.lang, words)] : [];
  const result = msg.pollResult ? [pollResultWords(msg, msg.pollResult, opts, words)] : [];
  const extras = [...poll, ...result, ...attachmentWords(msg, opts, words), ...msg.stickers.map((s) => words.sticker(cleanName(s.name)))];
  const text = [content, ...extras].filter((s) => s.length > 0).join('\n');
  return finish(text, opts.lang, opts.dictionary ?? [], opts.maxLength, opts.readEmoji ?? false, opts.filters ?? []);
}

// The tail of the pipeline, on text whose markup is resolved: filters, laughter, dictionary,
// filters, emoji, pauses, safety net, run cap, null check, length cap.
function finish(
  text: string,
  lang: ReadLang,
  dictionary: Dictionary,
  maxLength: number,
  namedEmoji: boolean,
  filters: readonly FilterEntry[],
): string | null | typeof FILTERED {
  const words = WORDS[lang];
  // Invisible characters out first, so a zero-width space inside a word does not hide it from a filter.
  let s = text.replace(INVISIBLE, '').replace(/[^\S\n]+/g, ' ');
  const filtered = (t: string) => {
    const f = applyFilters(t, filters);
    return f.skipped ? FILTERED : f.text;
  };
  const written = filtered(s);
  if (written === FILTERED) return FILTERED;
  s = written;
  if (words.laugh !== null) s = s.replace(LAUGH_RUN, words.laugh).replace(LAUGH_ONE, words.laugh);
  s = applyDictionary(s, dictionary).replace(LONE_SURROGATE, '').replace(PRIVATE_USE, ''); // unvalidated readings
  const read = filtered(s);
  if (read === FILTERED) return FILTERED;
  s = read;
  // After the dictionary, so a server can give an emoji a reading ("🍣" -> "すし").
  if (namedEmoji) s = readEmoji(s, lang);
  s = s.replace(EMOJI, '').replace(/(\p{M}{3})\p{M}+/gu, '$1'); // and tame "Zalgo" stacks of marks
  s = joinLines(s, lang);
  s = sanitise(s, lang);
  s = capRuns(s);
  if (!SPEAKABLE.test(s)) return null;
  return capLength(s, lang, maxLength);
}

function resolveMarkup(msg: PlainMessage, lang: ReadLang, words: SpokenWords): string {
  const pad = lang === 'en' ? ' ' : ''; // English needs spaces around an inserted word; Japanese does not
  const literals: string[] = [];
  const lit = (text: string): string => {
    if (literals.length > PLACEHOLDER_MAX) return text;
    literals.push(text);
    return String.fromCharCode(PLACEHOLDER_BASE + literals.length - 1);
  };

  let s = normaliseSpelling(msg.content) // full-width ASCII, half-width kana: one spelling for the dictionary and cache
    .replace(PRIVATE_USE, '')
    .replace(LONE_SURROGATE, '')
    .replace(/\r\n?/g, '\n')
    .replace(ANSI_ESCAPE, '')
    .replace(CONTROL, ' ');
  for (let i = 0; i < 3; i++) {
    const next = s.replace(LINE_PREFIX, ''); // nested prefixes: "> # heading", "> - item"
    if (next === s) break;
    s = next;
  }

  s = s.replace(BLOCK_TOKENS, (whole: string, escaped?: string, code2?: string, code1?: string) => {
    if (escaped !== undefined) return MARKDOWN_ESCAPABLE.has(escaped) ? lit(escaped) : escaped;
    if (whole.startsWith('```')) return lit(pad + words.codeBlock + pad);
    if (whole.startsWith('||')) return lit(pad + words.spoiler + pad); // never read what is hidden
    // Inline code is read as its content (usually a short command or word), minus its markup. A
    // space at either end of the span keeps it apart from the word beside it ("`npm test `して").
    const raw = code2 ?? code1 ?? '';
    const code = raw.replace(/[`|]+/g, ' ');
    const [before, after] = [/^\s/.test(raw) ? ' ' : '', /\s$/.test(raw) ? ' ' : ''];
    return (
      before +
      lit(
        resolveEntities(
          replaceUrls(code, (w) => pad + w + pad, words),
          (w) => w,
          msg,
          words,
        )
          .replace(/\s+/g, ' ')
          .trim(),
      ) +
      after
    );
  });

  s = s.replace(MASKED_LINK, '$1');
  s = replaceUrls(s, (w) => lit(pad + w + pad), words);
  s = resolveEntities(s, (w) => lit(pad + w + pad), msg, words);
  s = stripInlineMarkdown(s);
  // Literals may hold placeholders of their own only if PLACEHOLDER_MAX overflowed; one pass suffices.
  return s.replace(PLACEHOLDER, (p) => literals[p.charCodeAt(0) - PLACEHOLDER_BASE] ?? '');
}

function replaceUrls(s: string, wrap: (word: string) => string, words: SpokenWords): string {
  return s.replace(URL_PATTERN, (url: string) => {
    let tail = '';
    if (!url.startsWith('<')) {
      // Trailing punctuation belongs to the sentence, not the URL (Discord's linkifier does the same).
      const m = /[.,:;!?'"\]]+$|\)+$/.exec(url);
      if (m && !(m[0].startsWith(')') && url.includes('('))) {
        tail = m[0];
        url = url.slice(0, -tail.length);
      }
    }
    return wrap(INVITE_PATTERN.test(url) ? words.invite : words.url) + tail;
  });
}

// The same custom emoji several times in a row, spaces between or not, is read once (as a run of
// one Unicode emoji is, emoji.ts); different ones side by side are read as separate words.
const CUSTOM_EMOJI_RUN = /(<a?:([\w~-]{1,64}):\d{1,25}>)(?:\s*<a?:\2:\d{1,25}>)+/g;
const CUSTOM_EMOJI_SIDE_BY_SIDE = /(<a?:[\w~-]{1,64}:\d{1,25}>)(?=<a?:[\w~-]{1,64}:\d{1,25}>)/g;
// Guild navigation (<id:customize>, <id:linked-roles:123>) and soundboard sounds: nothing to say.
const SILENT_ENTITY = /<id:[\w-]{1,32}(?::\d{1,25})?>|<sound:\d{1,25}:\d{1,25}>/g;

function resolveEntities(s: string, wrap: (word: string) => string, msg: PlainMessage, words: SpokenWords): string {
  s = s.replace(SILENT_ENTITY, '').replace(CUSTOM_EMOJI_RUN, '$1').replace(CUSTOM_EMOJI_SIDE_BY_SIDE, '$1 ');
  return s.replace(
    ENTITY_PATTERN,
    (_whole: string, user?: string, role?: string, channel?: string, emoji?: string, command?: string, mass?: string) => {
      if (user !== undefined) {
        const name = msg.users[user] ?? (user === msg.authorId ? msg.authorName : undefined);
        return wrap(cleanName(name ?? '') || words.someone);
      }
      if (role !== undefined) return wrap(cleanName(msg.roles[role] ?? '') || words.role);
      if (channel !== undefined) return wrap(cleanName((msg.channels[channel] ?? '').replace(/[-_]+/g, ' ')) || words.channel);
      if (emoji !== undefined) return wrap(emoji.replace(/[_~-]+/g, ' ').trim());
      if (command !== undefined) return wrap(cleanName(command));
      if (mass !== undefined) return wrap(mass.toLowerCase() === 'here' ? words.here : words.everyone);
      return wrap(words.timestamp);
    },
  );
}

function stripInlineMarkdown(s: string): string {
  // A few passes unwrap nesting ("***x***", "~~**x**~~"); bounded so odd input cannot loop long.
  for (let pass = 0; pass < 4; pass++) {
    const prev = s;
    s = s
      .replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, '$1')
      .replace(/__(?=\S)([\s\S]*?\S)__/g, '$1')
      .replace(/~~([\s\S]+?)~~/g, '$1')
      .replace(/\*(?=[^\s*])([^*]*?[^\s*])?\*/g, '$1')
      .replace(/(?<![\p{L}\p{N}])_(?=[^\s_])([^_]*?[^\s_])?_(?![\p{L}\p{N}])/gu, '$1');
    if (s === prev) break;
  }
  // Unpaired leftovers: "**", "~~", "||", backticks and backslashes are not read aloud; a lone "_"
  // (snake_case) becomes a space so the words around it stay apart. A lone "*" is kept ("2*3").
  return s.replace(/\*{2,}|~{2,}|\|{2,}|[`\\]+/g, '').replace(/_+/g, ' ');
}

/** A display name made safe and short for reading: no emoji, markup or invisible characters. */
export function cleanName(name: string, maxChars = NAME_MAX_CHARS): string {
  const s = normaliseSpelling(name)
    .replace(PRIVATE_USE, '')
    .replace(LONE_SURROGATE, '')
    .replace(ANSI_ESCAPE, '')
    .replace(CONTROL, ' ')
    .replace(INVISIBLE, '')
    .replace(EMOJI, '')
    .replace(/[*_~`|\\<>]+/g, ' ')
    .replace(/@+(?=everyone|here)/gi, '')
    .replace(/\s+/g, ' ')
    .trim();
  return truncateChars(s, maxChars).trim();
}

function attachmentKind(a: { name: string; contentType?: string | null }): AttachmentKind {
  const type = (a.contentType ?? '').toLowerCase();
  const ext = /\.([a-z0-9]{1,5})$/i.exec(a.name)?.[1]?.toLowerCase() ?? '';
  // Discord names voice messages "voice-message.ogg" (audio/ogg with a waveform).
  if (a.name === 'voice-message.ogg') return 'voiceMessage';
  if (type.startsWith('image/') || /^(png|jpe?g|gif|webp|avif|heic|heif|bmp|svg|tiff?)$/.test(ext)) return 'image';
  if (type.startsWith('video/') || /^(mp4|mov|webm|mkv|avi|m4v|wmv)$/.test(ext)) return 'video';
  if (type.startsWith('audio/') || /^(mp3|wav|ogg|oga|opus|m4a|flac|aac|wma)$/.test(ext)) return 'audio';
  return 'file';
}

// An attachment with alt text is read as its kind and that text, in its place; the others as one
// word per kind with a count ("画像3枚", "3 images"), where their kind first appears. File names are
// not read: they are mostly camera names like IMG_1234.jpg.
function attachmentWords(msg: PlainMessage, opts: NormaliseOptions, words: SpokenWords): string[] {
  type Counted = { kind: AttachmentKind; count: number };
  const said: Array<string | Counted> = [];
  const counted = new Map<AttachmentKind, Counted>();
  const count = (kind: AttachmentKind) => {
    const entry = counted.get(kind);
    if (entry) return void (entry.count += 1);
    const first: Counted = { kind, count: 1 };
    counted.set(kind, first);
    said.push(first);
  };
  for (const a of msg.attachments) {
    const alt = a.description ? memberLine(msg, a.description, opts.lang, words) : '';
    // Alt text of only emoji says nothing once they are dropped: the kind is read as if it had none.
    if (speakable(alt, opts)) said.push(words.described(attachmentKind(a), alt));
    else count(attachmentKind(a));
  }
  for (const kind of msg.embeds ?? []) count(kind);
  return said.map((s) => (typeof s === 'string' ? s : words.attachment(s.kind, s.count)));
}

// Whether anything of `text` is left to read once emoji are dropped (or read by name).
function speakable(text: string, opts: NormaliseOptions): boolean {
  return SPEAKABLE.test(text) || (opts.readEmoji === true && HAS_EMOJI.test(text));
}

// Members' text beside the content (a poll's question and options, alt text): markup resolved as in
// the content (a URL is "URL省略", a mention a name), on one line so it is not split by pauses of its own.
function memberLine(msg: PlainMessage, text: string, lang: ReadLang, words: SpokenWords): string {
  return resolveMarkup({ ...msg, content: text }, lang, words)
    .replace(/\s+/g, ' ')
    .trim();
}

function pollWords(msg: PlainMessage, poll: NonNullable<PlainMessage['poll']>, lang: ReadLang, words: SpokenWords): string {
  const line = (text: string) => memberLine(msg, text, lang, words);
  return words.poll(
    line(poll.question),
    poll.answers.map(line).filter((a) => a.length > 0),
  );
}

// A poll's end: its question, and the winner (by its number when its text has nothing to read), a
// tie, or no votes. The texts are members' as in the poll itself.
function pollResultWords(msg: PlainMessage, result: PollResult, opts: NormaliseOptions, words: SpokenWords): string {
  const line = (text: string) => memberLine(msg, text, opts.lang, words);
  const votes = Math.max(0, Math.floor(result.votes));
  const total = Math.max(votes, Math.floor(result.total));
  let outcome: PollOutcome;
  if (total === 0) outcome = { kind: 'none' };
  else if (result.winner) {
    const answer = line(result.winner.text);
    outcome = { kind: 'winner', answer: speakable(answer, opts) ? answer : words.unnamedAnswer(result.winner.answerId), votes, total };
  } else outcome = { kind: 'tie', votes, total };
  return words.pollResult(line(result.question), outcome);
}

// A newline becomes a pause the TTS observes ("、" / ", "), unless the line already ends in one.
function joinLines(s: string, lang: ReadLang): string {
  const lines = s
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter((l) => l.length > 0);
  let out = '';
  for (const line of lines) {
    if (out.length === 0) out = line;
    else if (ENDS_WITH_PAUSE.test(out)) out += (lang === 'en' ? ' ' : '') + line;
    else out += WORDS[lang].pause + line;
  }
  return out
    .replace(/ +(?=[,.!?;:、。])/g, '') // "Taro !" after an inserted word
    .replace(/(?:、\s*){2,}/g, '、')
    .replace(/(?:,\s*){2,}/g, ', ')
    .replace(/^[\s、,]+|[\s、,]+$/g, '');
}

// Last line of defence for names, dictionary readings and escapes: the output must never ping,
// look like a mention, or carry a URL (@everyone/@here are not read as pings).
/** Replaces URLs with the URL word, unwraps mention-like "<@" and reads @everyone/@here as words. */
export function sanitise(s: string, lang: ReadLang): string {
  const words = WORDS[lang];
  return s
    .replace(URL_PATTERN, words.url)
    .replace(/<+(?=[@#])/g, '')
    .replace(/@+(everyone|here)/gi, (_m, w: string) => (w.toLowerCase() === 'here' ? words.here : words.everyone));
}

/**
 * Shortens every run of one character to `RUN_MAX` (digits to 12, so "1000000" keeps its value);
 * the advanced endpoint refuses 20+ in a row (spec: job creation request, text).
 */
export function capRuns(s: string): string {
  return s.replace(/(.)\1{4,}/gsu, (run: string, ch: string) => {
    const max = /\p{Nd}/u.test(ch) ? DIGIT_RUN_MAX : RUN_MAX;
    const chars = countChars(run);
    return chars > max ? ch.repeat(max) : run;
  });
}

function capLength(s: string, lang: ReadLang, maxLength: number): string {
  const max = Math.max(1, Math.floor(maxLength));
  if (countChars(s) <= max) return s;
  // truncateChars counts code points, so a surrogate pair is never split (src/tts/chars.ts).
  const cut = truncateChars(s, max).replace(/[\s、,。.]+$/u, '');
  const rest = WORDS[lang].rest;
  return lang === 'ja' ? `${cut}、${rest}` : `${cut}, ${rest}`;
}
