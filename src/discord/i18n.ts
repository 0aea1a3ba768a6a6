/**
 * Every user-facing string, in Japanese and English, keyed by a stable identifier (STYLE.md #5).
 * Replies use the interaction's locale: `ja` -> Japanese, anything else -> English.
 */
export type Lang = 'ja' | 'en';

const messages = {
  // generic
  'error.generic': { ja: '予期しないエラーが発生しました。しばらくしてからもう一度お試しください。', en: 'Something went wrong on our side. Please try again in a moment.' },
  'error.guild_only': { ja: 'このコマンドはサーバー内でのみ使えます。', en: 'This command only works inside a server.' },
  'error.admin_only': { ja: 'このコマンドには「サーバー管理」権限が必要です。', en: 'You need the Manage Server permission to use this command.' },
  'error.invalid_option': { ja: '{option} の値が正しくありません: {reason}', en: 'The value of {option} is not valid: {reason}' },
  // service outcomes (codes from src/tts/errors.ts)
  'tts.invalid_input': { ja: '入力が正しくありません: {details}', en: 'The request is not valid: {details}' },
  'tts.allowance_exhausted': { ja: '今月の読み上げ文字数（サービス全体）が残っていません。リセットまでお待ちください。', en: "The service account's characters for this month are used up. Please wait for the monthly reset." },
  'tts.quota_exceeded': { ja: 'サービスの残り文字数が足りません（残り {available} 文字）。', en: 'The service account does not have enough characters left ({available} remaining).' },
  'tts.rate_limited': { ja: '混み合っています。順番待ちです（約 {seconds} 秒後）。', en: 'The speech service is busy; your request is waiting (about {seconds} s).' },
  'tts.content_policy_violation': { ja: 'この文章はサービスの規約により読み上げられません。', en: "This text can't be read aloud under the service's content policy." },
  'tts.unsupported_voice': { ja: '声「{voice}」はサービスで使えません。/voice で別の声を選んでください。', en: 'The voice "{voice}" is not offered by the service. Pick another one.' },
  'tts.text_too_long': { ja: '文章が長すぎます（最大 {max} 文字）。', en: 'The text is too long (at most {max} characters).' },
  'tts.validation_error': { ja: '文章が短すぎるか、絵文字だけか、同じ文字が続きすぎています。', en: 'The text is too short, only emoji, or repeats one character too many times.' },
  'tts.auth': { ja: 'ボットの音声サービス設定に問題があります。サーバー管理者に連絡してください。', en: "The bot's speech service credentials are not working. Please tell the bot's operator." },
  'tts.transient': { ja: '音声サービスが一時的に使えません。しばらくしてからもう一度お試しください。', en: 'The speech service is temporarily unavailable. Please try again later.' },
  'tts.failed': { ja: '音声を作れませんでした（{code}）。', en: 'The speech could not be generated ({code}).' },
  'tts.misconfigured': { ja: 'ボットの音声サービスの接続先設定に問題があります。ボットの管理者に連絡してください。', en: "The bot's speech service address is misconfigured. Please tell the bot's operator." },
  'tts.download_refused': { ja: '音声ファイルを取得できませんでした。', en: 'The audio file could not be downloaded.' },
  // budgets
  'budget.user': { ja: '今月のあなたの読み上げ上限に達しました（{used} / {limit} 文字、{resets} にリセット）。', en: 'You have reached your monthly limit ({used} / {limit} characters; resets {resets}).' },
  'budget.guild': { ja: 'このサーバーの今月の読み上げ上限に達しました（{used} / {limit} 文字、{resets} にリセット）。', en: "This server has reached its monthly limit ({used} / {limit} characters; resets {resets})." },
  'budget.account': { ja: 'ボット全体の今月の文字数上限に達しました（{used} / {limit} 文字、{resets} にリセット）。', en: "The bot's monthly character allowance is used up ({used} / {limit}; resets {resets})." },
  // queue
  'queue.member_full': { ja: '読み上げ待ちが多すぎます（1人 {limit} 件まで）。少し待ってからもう一度どうぞ。', en: 'You already have {limit} messages waiting to be read. Please wait a little.' },
  'queue.closed': { ja: 'ボットは停止処理中です。', en: 'The bot is shutting down.' },
  'queue.dropped': { ja: '混雑のため {count} 件のメッセージを読み上げずに飛ばしました。', en: 'Skipped {count} messages because the queue was too far behind.' },
  // /say and /narrate
  'say.queued': { ja: '読み上げ待ち: {position} 番目', en: 'Queued: position {position}' },
  'say.playing': { ja: '🔊 ボイスチャンネルで読み上げます。', en: '🔊 Speaking in the voice channel.' },
  'say.attached': { ja: '🔊 音声ファイルです。', en: '🔊 Here is the audio.' },
  'say.substituted': { ja: '（速さ・高さが範囲外のため標準値を使いました）', en: '(speed or pitch was out of range, so the defaults were used)' },
  'narrate.queued': { ja: '⏳ 順番待ち（{position} 番目）…', en: '⏳ Queued (position {position})…' },
  'narrate.pending': { ja: '⏳ 生成を待っています…', en: '⏳ Waiting for generation…' },
  'narrate.running': { ja: '🎙️ 生成中…', en: '🎙️ Generating…' },
  'narrate.done': { ja: '✅ できました。声: {voice} / シード: {seed}（同じシードで同じ声質を再現できます）', en: '✅ Done. Voice: {voice} / seed: {seed} (use the same seed to repeat this timbre)' },
  'narrate.failed': { ja: '❌ 生成に失敗しました: {reason}', en: '❌ Generation failed: {reason}' },
  // voice
  'voice.join_first': { ja: '先にボイスチャンネルに入ってください。', en: 'Join a voice channel first.' },
  'voice.joined': { ja: '{voice} に参加しました。このチャンネル（{text}）を読み上げます。', en: 'Joined {voice}. Reading this channel ({text}) aloud.' },
  'voice.join_failed': { ja: 'ボイスチャンネルに接続できませんでした。', en: 'Could not connect to the voice channel.' },
  'voice.left': { ja: 'ボイスチャンネルから退出しました。', en: 'Left the voice channel.' },
  'voice.not_connected': { ja: 'ボイスチャンネルに接続していません。', en: 'I am not in a voice channel.' },
  'voice.skipped': { ja: '読み上げを1件スキップしました。', en: 'Skipped the current message.' },
  'voice.nothing_to_skip': { ja: 'スキップするものがありません。', en: 'Nothing is being read right now.' },
  'voice.cleared': { ja: '読み上げ待ちを {count} 件削除しました。', en: 'Cleared {count} waiting messages.' },
  // /autoread
  'autoread.added': { ja: '{channel} を自動読み上げに追加しました。', en: '{channel} will now be read aloud automatically.' },
  'autoread.removed': { ja: '{channel} を自動読み上げから外しました。', en: '{channel} is no longer read aloud automatically.' },
  'autoread.not_listed': { ja: '{channel} は自動読み上げに入っていません。', en: '{channel} is not an auto-read channel.' },
  'autoread.list': { ja: '自動読み上げチャンネル: {channels}', en: 'Auto-read channels: {channels}' },
  'autoread.none': { ja: '自動読み上げチャンネルはありません。', en: 'No auto-read channels.' },
  'autoread.not_text': { ja: 'テキストチャンネルを選んでください。', en: 'Choose a text channel.' },
  // /config
  'config.saved': { ja: '設定しました: {setting} = {value}', en: 'Saved: {setting} = {value}' },
  'config.show': {
    ja: '声: {voice} / 速さ: {speed} / 高さ: {pitch} / 名前を読む: {readNames} / 入退室アナウンス: {announce} / 最大文字数: {maxLength} / 1人あたり月間上限: {userLimit} / 自動参加: {autoJoin} / 無視する接頭辞: {prefix}',
    en: 'Voice: {voice} / speed: {speed} / pitch: {pitch} / read names: {readNames} / join-leave announcements: {announce} / max length: {maxLength} / per-member monthly limit: {userLimit} / auto-join: {autoJoin} / ignore prefix: {prefix}',
  },
  'config.on': { ja: 'オン', en: 'on' },
  'config.off': { ja: 'オフ', en: 'off' },
  'config.none': { ja: 'なし', en: 'none' },
  // /voice
  'uservoice.saved': { ja: 'あなたの声を設定しました: {voice} / 速さ {speed} / 高さ {pitch}', en: 'Your voice is now {voice} / speed {speed} / pitch {pitch}' },
  'uservoice.show': { ja: 'あなたの声: {voice} / 速さ {speed} / 高さ {pitch}{defaults}', en: 'Your voice: {voice} / speed {speed} / pitch {pitch}{defaults}' },
  'uservoice.server_default': { ja: '（サーバーの標準設定）', en: " (the server's defaults)" },
  'uservoice.reset': { ja: 'あなたの声をサーバーの標準に戻しました。', en: "Your voice is back to the server's default." },
  // /dictionary
  'dictionary.added': { ja: '辞書に登録しました: {word} → {reading}', en: 'Added to the dictionary: {word} → {reading}' },
  'dictionary.removed': { ja: '辞書から削除しました: {word}', en: 'Removed from the dictionary: {word}' },
  'dictionary.not_found': { ja: '辞書に「{word}」はありません。', en: '"{word}" is not in the dictionary.' },
  'dictionary.list': { ja: '辞書（{count} 件）:\n{entries}', en: 'Dictionary ({count} entries):\n{entries}' },
  'dictionary.empty': { ja: '辞書は空です。', en: 'The dictionary is empty.' },
  'dictionary.invalid': { ja: '登録できません: {reason}', en: 'Cannot add this entry: {reason}' },
  // /usage
  'usage.member': { ja: '{name} の今月の利用: {used} / {limit} 文字（{resets} にリセット）', en: '{name} this period: {used} / {limit} characters (resets {resets})' },
  'usage.guild': { ja: 'サーバー合計: {used} / {limit} 文字。飛ばしたメッセージ: {dropped} 件', en: 'Server total: {used} / {limit} characters. Messages skipped: {dropped}' },
  'usage.top': { ja: '上位: {list}', en: 'Top spenders: {list}' },
  // /help
  'help.text': {
    ja: '**読み上げボットの使い方**\n/join — ボイスチャンネルに参加してこのチャンネルを読み上げ\n/leave — 退出\n/say — 文章を読み上げ\n/narrate — 高度な音声合成（声・トーン・モデル・シード）\n/skip・/clear — 1件スキップ・待ちを全削除\n/voice — 自分の声\n/dictionary — 読み方の辞書\n/usage — 文字数の利用状況\n/autoread・/config — 管理者向け設定\n「;」で始まるメッセージは読み上げません。',
    en: '**How to use the read-aloud bot**\n/join — join your voice channel and read this channel aloud\n/leave — leave\n/say — speak a text\n/narrate — advanced speech (voice, tone, model, seed)\n/skip, /clear — skip one message, clear the queue\n/voice — your own voice\n/dictionary — pronunciation dictionary\n/usage — character usage\n/autoread, /config — admin settings\nMessages starting with ";" are not read.',
  },
} as const satisfies Record<string, Record<Lang, string>>;

export type MessageKey = keyof typeof messages;
export type Vars = Record<string, string | number>;

/** Maps a Discord locale (e.g. `ja`, `en-US`) to the language we reply in. */
export function langOf(locale: string | null | undefined): Lang {
  return locale?.startsWith('ja') ? 'ja' : 'en';
}

/** The message for `key` in `lang`, with `{name}` placeholders filled from `vars`. */
export function t(lang: Lang, key: MessageKey, vars: Vars = {}): string {
  return messages[key][lang].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole));
}

/** A date as users read it, in their language (UTC, date only). */
export function formatDate(lang: Lang, ms: number): string {
  return new Intl.DateTimeFormat(lang === 'ja' ? 'ja-JP' : 'en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(ms);
}

/** Every key, for the test that checks both languages exist and placeholders match. */
export const MESSAGE_KEYS = Object.keys(messages) as MessageKey[];
export const MESSAGES: Readonly<Record<MessageKey, Record<Lang, string>>> = messages;
