import { ApplicationCommandOptionType, MessageFlags, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { adminCommand, choice, described, named, subcommand, type Command } from '../../src/discord/interactions/command.ts';
import { commandActor, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import { langOf, t, type Lang } from '../../src/i18n/texts.ts';
import { FILTER_LIMITS, FLOOD_LIMITS } from '../../src/domain/filters.ts';
import { PATTERN_LIMITS } from '../../src/speech/text/pattern-syntax.ts';
import { addFilter, filtersOf, removeFilter, setFloodLimit } from '../../src/usecases/filters.ts';

// /filter: words and patterns never read, or read as another word, and the flood limit (admins:
// Manage Server, checked again on every use). The rules are the dashboard's (src/usecases/filters.ts).
// Every answer is private: a filter's word is what the server does not want to hear.

/** A word, or a pattern with its r/ and / (PATTERN_LIMITS). */
const WORD_MAX = PATTERN_LIMITS.maxChars + 3;

const data = {
  ...adminCommand('filter', 'フィルター', 'Words never read aloud, and the flood limit (admins)', '読み上げない語句と連投の上限（管理者）'),
  options: [
    subcommand('add', '追加', 'Add a word or pattern (r/…/) that is never read', '読み上げない語句・パターン（r/…/）を追加', [
      {
        type: ApplicationCommandOptionType.String,
        ...named('word', '語句'),
        ...described('Word as written, or a pattern written r/…/', '書かれている語句、または r/…/ で書くパターン'),
        required: true,
        max_length: WORD_MAX,
      },
      {
        type: ApplicationCommandOptionType.String,
        ...named('action', '動作'),
        ...described(
          'Replace each match with a word (default), or skip the whole message',
          '一致した部分を別の語で読む（標準）か、メッセージごと読まない',
        ),
        choices: [
          choice('Replace the word (default)', '語句を置き換える（標準）', 'replace'),
          choice('Skip the message', 'メッセージを読まない', 'skip'),
        ],
      },
      {
        type: ApplicationCommandOptionType.String,
        ...named('replacement', '置き換え'),
        ...described('What a match is read as (default: beep / ピー)', '一致した部分の読み方（標準: ピー）'),
        max_length: FILTER_LIMITS.replacementMaxChars,
      },
    ]),
    subcommand('remove', '削除', 'Remove a filter', 'フィルターを削除', [
      {
        type: ApplicationCommandOptionType.String,
        ...named('word', '語句'),
        ...described('The word or pattern to remove', '削除する語句・パターン'),
        required: true,
        autocomplete: true,
        max_length: WORD_MAX,
      },
    ]),
    subcommand('list', '一覧', 'Show the filters and the flood limit', 'フィルターと連投の上限を表示'),
    subcommand(
      'flood',
      '連投',
      'Read at most this many messages per member per 10 s; the rest are summarised (0: no limit)',
      '1人が10秒に読む最大件数。超えた分はまとめて件数だけ読む（0で上限なし）',
      [
        {
          type: ApplicationCommandOptionType.Integer,
          ...named('messages', '件数'),
          ...described(
            `${FLOOD_LIMITS.min} to ${FLOOD_LIMITS.max}, or 0 for no limit`,
            `${FLOOD_LIMITS.min}〜${FLOOD_LIMITS.max}、0で上限なし`,
          ),
          required: true,
          min_value: 0,
          max_value: FLOOD_LIMITS.max,
        },
      ],
    ),
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

/** The flood limit as the list says it. */
function floodText(lang: Lang, floodMax: number | null): string {
  return floodMax === null ? t(lang, 'filter.flood_off') : t(lang, 'filter.flood_value', { max: floodMax });
}

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const actor = commandActor(interaction);
    const answer = (content: string) => interaction.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
    await runSubcommand(interaction, data, {
      async add({ word, action, replacement }) {
        const added = await addFilter(ctx, guildId, actor, lang, { word, action, reading: replacement });
        await answer(
          added.action === 'skip'
            ? t(lang, 'filter.added_skip', { word: added.word })
            : t(lang, 'filter.added_replace', { word: added.word, reading: added.reading }),
        );
      },
      async remove({ word }) {
        await answer(t(lang, 'filter.removed', { word: await removeFilter(ctx, guildId, actor, word) }));
      },
      async list() {
        const { entries, floodMax } = filtersOf(ctx, guildId);
        const flood = floodText(lang, floodMax);
        if (entries.length === 0) return void (await answer(t(lang, 'filter.empty', { flood })));
        const list = listReply(lang, {
          text: (shown) => t(lang, 'filter.list', { count: entries.length, entries: shown, flood }),
          lines: entries.map((e) =>
            e.action === 'skip'
              ? t(lang, 'filter.line_skip', { word: e.word })
              : t(lang, 'filter.line_replace', { word: e.word, reading: e.reading }),
          ),
          fileName: 'filters.txt',
        });
        await interaction.reply({ ...list, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      },
      async flood({ messages }) {
        const floodMax = await setFloodLimit(ctx, guildId, actor, messages);
        await answer(floodMax === null ? t(lang, 'filter.flood_cleared') : t(lang, 'filter.flood_set', { max: floodMax }));
      },
    });
  },
  async autocomplete(interaction, ctx) {
    // Only admins see the server's filters (the words it does not want read).
    if (!interaction.inGuild() || !interaction.memberPermissions.has('ManageGuild')) return interaction.respond([]);
    const typed = interaction.options.getFocused().toLowerCase();
    const words = ctx.repos.filters
      .own(interaction.guildId)
      .map((e) => e.word)
      .filter((w) => w.toLowerCase().includes(typed));
    await interaction.respond(words.slice(0, 25).map((w) => ({ name: w.slice(0, 100), value: w })));
  },
} satisfies Command;
