import {
  ApplicationCommandType,
  ComponentType,
  InteractionContextType,
  MessageFlags,
  TextInputStyle,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { MessageCommand } from '../../src/discord/interactions/command.ts';
import { commandActor, requireGuild } from '../../src/discord/interactions/guards.ts';
import { writtenText } from '../../src/discord/events/message-text.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { DICTIONARY_LIMITS, misreadCandidates, type DictionaryEntry } from '../../src/speech/text/dictionary.ts';
import { DICTIONARY_MAX_ENTRIES } from '../../src/db/keyed-dictionary.ts';
import { isDictionaryEditor } from './dictionary-files.ts';
import { checkEntry, dictionaryStore } from '../../src/usecases/dictionaries.ts';

// Apps > 読みを修正 / Fix reading on a message: a modal offers the words of that message most
// likely misread, each with a reading field; what is filled in is checked as /dictionary add checks
// it and saved, all or nothing, to the server's dictionary when the member may edit it (checked
// again at submit, from the interaction itself), else to the member's own dictionary.

const MODAL_ID = 'fixreading';
/** A text input's custom_id is this followed by the word; the word is checked like any typed word at submit. */
const WORD_FIELD = 'w:';
/** Discord: at most 5 text inputs in a modal; a label (here the word) at most 45 characters. */
const MAX_FIELDS = 5;
const MAX_LABEL = 45;

const data = {
  type: ApplicationCommandType.Message,
  name: 'Fix reading',
  name_localizations: { ja: '読みを修正', 'en-US': 'Fix reading' },
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIContextMenuApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const lang = langOf(interaction.locale);
    const message = interaction.targetMessage;
    // Words not yet covered by what reads this message: the server's, its author's own and the operator's entries.
    const words = misreadCandidates(writtenText(message), ctx.repos.dictionary.list(guildId, message.author.id), MAX_FIELDS, MAX_LABEL);
    if (words.length === 0) throw new UserError('fixreading.no_words');
    await interaction.showModal({
      custom_id: MODAL_ID,
      title: t(lang, 'fixreading.title'),
      components: words.map((word) => ({
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.TextInput,
            custom_id: `${WORD_FIELD}${word}`,
            label: word,
            style: TextInputStyle.Short,
            required: false,
            max_length: DICTIONARY_LIMITS.readingMaxChars,
            placeholder: t(lang, 'fixreading.placeholder'),
          },
        ],
      })),
    });
  },
  modal: {
    id: MODAL_ID,
    async submit(interaction, ctx) {
      const guildId = requireGuild(interaction);
      const lang = langOf(interaction.locale);
      const filled = [...interaction.fields.fields.values()].flatMap((f) =>
        f.type === ComponentType.TextInput && f.customId.startsWith(WORD_FIELD) && f.value.trim() !== ''
          ? [{ word: f.customId.slice(WORD_FIELD.length), reading: f.value }]
          : [],
      );
      if (filled.length === 0) throw new UserError('fixreading.nothing_filled');
      const entries: DictionaryEntry[] = [];
      for (const { word, reading } of filled) {
        const entry = checkEntry(lang, word, reading);
        if (!entry.ok) throw new UserError('fixreading.invalid', { vars: { word, reason: entry.reason } });
        entries.push(entry.value);
      }
      // Who may edit the server's dictionary is decided here, from the member as Discord sends them.
      const scope = isDictionaryEditor(interaction, ctx.repos, guildId) ? 'server' : 'me';
      const result = await dictionaryStore(ctx.repos, scope, guildId, interaction.user.id, commandActor(interaction)).import(
        entries,
        'merge',
      );
      if (!result.ok)
        throw new UserError(scope === 'me' ? 'dictionary.mine_full' : 'dictionary.full', { vars: { max: DICTIONARY_MAX_ENTRIES } });
      await interaction.reply({
        content: t(lang, scope === 'me' ? 'fixreading.saved_mine' : 'fixreading.saved_server', {
          entries: entries.map((e) => `${e.word} → ${e.reading}`).join('\n'),
        }),
        flags: MessageFlags.Ephemeral,
        allowedMentions: { parse: [] },
      });
    },
  },
} satisfies MessageCommand;
