/**
 * Every word the read-aloud pipeline inserts into spoken text, in Japanese and English, in one place
 * (text.ts, names.ts and dictionary.ts read from here). Words are chosen to sound natural when a TTS
 * voice reads them, not to look nice on screen (as the read-aloud bots people use today read them).
 */
/** The languages the bot reads in (text.ts re-exports this). */
export type ReadLang = 'ja' | 'en';

export type AttachmentKind = 'image' | 'video' | 'audio' | 'voiceMessage' | 'file' | 'embed';

/**
 * How a poll came out: one answer won (`answer` already speakable: its text, else its number), the
 * most-voted answers tied at `votes` each, or nobody voted.
 */
export type PollOutcome =
  { kind: 'winner'; answer: string; votes: number; total: number } | { kind: 'tie'; votes: number; total: number } | { kind: 'none' };

export interface SpokenWords {
  /** A user mention whose id the caller could not resolve. */
  someone: string;
  role: string;
  channel: string;
  everyone: string;
  here: string;
  /** A Discord timestamp `<t:123:R>`: not read as a number. */
  timestamp: string;
  url: string;
  invite: string;
  codeBlock: string;
  spoiler: string;
  /** An attachment of `kind`, `count` (>= 1) of them. */
  attachment: (kind: AttachmentKind, count: number) => string;
  /** An attachment with alt text (already speakable): its kind, then the text, as a screen reader reads it. */
  described: (kind: AttachmentKind, altText: string) => string;
  /** A poll: its question, then its options (each already speakable). */
  poll: (question: string, answers: readonly string[]) => string;
  /** A poll that ended: its question ('' when nothing speakable is left of it), then how it came out. */
  pollResult: (question: string, outcome: PollOutcome) => string;
  /** A winning answer with nothing speakable of its own (only an emoji), by its number when known. */
  unnamedAnswer: (answerId: number | null) => string;
  /** A sticker; `name` may be '' when nothing speakable is left of it. */
  sticker: (name: string) => string;
  /** Inserted for a newline and between content, attachments and stickers; the TTS pauses on it. */
  pause: string;
  /** Appended when the text was cut at the maximum length. */
  rest: string;
  /** What a run of "wwww" becomes (Japanese only; `null` = leave the run alone). */
  laugh: string | null;
  /** The spoken name prefix before a message. */
  namePrefix: (name: string) => string;
  join: (name: string) => string;
  leave: (name: string) => string;
  joinUnknown: string;
  leaveUnknown: string;
  /** Lead-in before a forwarded message's content. */
  forwarded: string;
  /**
   * Spoken when `count` stale auto-read messages were dropped. Counts above
   * STALE_NOTICE_MAX share one text, so the notice is nearly always a cached clip.
   */
  staleDropped: (count: number) => string;
  /**
   * Spoken in place of `count` messages of one member past the server's flood limit (their name as
   * spoken, '' when it has none): "Aliceさんの連投3件を省略しました。".
   */
  floodSummary: (name: string, count: number) => string;
}

const votesEn = (n: number) => (n === 1 ? '1 vote' : `${n} votes`);

// The non-empty parts joined by `separator`, or by `afterStop` after a part that already ends in a
// stop: "Lunch?" is not followed by ". ", nor "何にする？" by "、".
function joinParts(parts: readonly string[], separator: string, afterStop: string): string {
  return parts
    .filter((part) => part.length > 0)
    .reduce((out, part) => (out === '' ? part : out + (/[.!?。！？]$/u.test(out) ? afterStop : separator) + part), '');
}

/** Stale-drop counts above this are read as "10 or more", so a handful of texts cover every case. */
const STALE_NOTICE_MAX = 9;

const JA_COUNTERS: Record<AttachmentKind, string> = {
  image: '枚',
  video: '本',
  audio: '件',
  voiceMessage: '件',
  file: '件',
  embed: '件',
};
const JA_KINDS: Record<AttachmentKind, string> = {
  image: '画像',
  video: '動画',
  audio: '音声ファイル',
  voiceMessage: 'ボイスメッセージ',
  file: '添付ファイル',
  embed: '埋め込み',
};
// Before alt text: "画像: 夕焼けの海" / "image: sunset over the sea".
const EN_LABELS: Record<AttachmentKind, string> = {
  image: 'image',
  video: 'video',
  audio: 'audio file',
  voiceMessage: 'voice message',
  file: 'file',
  embed: 'embed',
};
const EN_KINDS: Record<AttachmentKind, [one: string, many: string]> = {
  image: ['an image', 'images'],
  video: ['a video', 'videos'],
  audio: ['an audio file', 'audio files'],
  voiceMessage: ['a voice message', 'voice messages'],
  file: ['a file', 'files'],
  embed: ['an embed', 'embeds'],
};

export const WORDS = {
  ja: {
    someone: 'ユーザー',
    role: 'ロール',
    channel: 'チャンネル',
    everyone: 'エブリワン',
    here: 'ヒア',
    timestamp: '日時',
    url: 'URL省略',
    invite: '招待リンク',
    codeBlock: 'コードブロック省略',
    spoiler: 'ネタバレ',
    attachment: (kind, count) => (count > 1 ? `${JA_KINDS[kind]}${count}${JA_COUNTERS[kind]}` : JA_KINDS[kind]),
    described: (kind, altText) => `${JA_KINDS[kind]}: ${altText}`,
    poll: (question, answers) => `投票、${question}、選択肢、${answers.join('、')}`,
    pollResult: (question, o) =>
      joinParts(
        [
          '投票結果',
          question,
          ...(o.kind === 'winner'
            ? [`1位は${o.answer}`, `全${o.total}票中${o.votes}票`]
            : o.kind === 'tie'
              ? [`${o.votes}票ずつの同票`, `全${o.total}票`]
              : ['投票はありませんでした']),
        ],
        '、',
        '',
      ),
    unnamedAnswer: (id) => (id ? `${id}番目の選択肢` : '選択肢'),
    sticker: (name) => (name ? `スタンプ「${name}」` : 'スタンプ'),
    pause: '、',
    rest: '以下略',
    laugh: 'ワラ',
    namePrefix: (name) => `${name}、`,
    join: (name) => `${name}さんが入室しました。`,
    leave: (name) => `${name}さんが退出しました。`,
    joinUnknown: '誰かが入室しました。',
    leaveUnknown: '誰かが退出しました。',
    forwarded: '転送、',
    staleDropped: (count) => (count > STALE_NOTICE_MAX ? `${STALE_NOTICE_MAX + 1}件以上省略しました。` : `${count}件省略しました。`),
    floodSummary: (name, count) => (name ? `${name}さんの連投${count}件を省略しました。` : `連投${count}件を省略しました。`),
  },
  en: {
    someone: 'someone',
    role: 'a role',
    channel: 'a channel',
    everyone: 'everyone',
    here: 'here',
    timestamp: 'a time',
    url: 'a link',
    invite: 'an invite link',
    codeBlock: 'a code block',
    spoiler: 'a spoiler',
    attachment: (kind, count) => (count > 1 ? `${count} ${EN_KINDS[kind][1]}` : EN_KINDS[kind][0]),
    described: (kind, altText) => `${EN_LABELS[kind]}: ${altText}`,
    poll: (question, answers) => `Poll: ${question}. Options: ${answers.join(', ')}`,
    pollResult: (question, o) =>
      joinParts(
        [
          question ? `Poll results: ${question}` : 'Poll results',
          o.kind === 'winner'
            ? `Winner: ${o.answer}, ${o.votes} of ${votesEn(o.total)}`
            : o.kind === 'tie'
              ? `A tie at ${votesEn(o.votes)} each, ${votesEn(o.total)} in all`
              : 'No votes',
        ],
        '. ',
        ' ',
      ),
    unnamedAnswer: (id) => (id ? `option ${id}` : 'an option'),
    sticker: (name) => (name ? `a sticker, ${name}` : 'a sticker'),
    pause: ', ',
    rest: 'and so on',
    laugh: null,
    namePrefix: (name) => `${name} said, `,
    join: (name) => `${name} joined.`,
    leave: (name) => `${name} left.`,
    joinUnknown: 'Someone joined.',
    leaveUnknown: 'Someone left.',
    forwarded: 'Forwarded: ',
    staleDropped: (count) =>
      count > STALE_NOTICE_MAX
        ? `Skipped ${STALE_NOTICE_MAX + 1} or more messages.`
        : count === 1
          ? 'Skipped 1 message.'
          : `Skipped ${count} messages.`,
    floodSummary: (name, count) => {
      const messages = count === 1 ? '1 more message' : `${count} more messages`;
      return name ? `Skipped ${messages} from ${name}.` : `Skipped ${messages} in a row.`;
    },
  },
} as const satisfies Record<ReadLang, SpokenWords>;
