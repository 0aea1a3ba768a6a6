import {
  ApplicationCommandOptionType,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import {
  described,
  isMessageCommand,
  named,
  shownNames,
  slashCommands,
  type AnyCommand,
  type Command,
} from '../../src/discord/interactions/command.ts';
import { langOf, t, type Lang, type MessageKey } from '../../src/i18n/texts.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';

const data = {
  ...named('help', 'ヘルプ'),
  ...described('How to use the read-aloud bot', '読み上げボットの使い方'),
  // Like every other command: servers only (the bot reads voice channels; a DM has none).
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

// What each command is for, in the order a member meets them (members' commands first). A command
// missing here is still listed, by its own description, after these.
const LINES = {
  join: 'help.join',
  leave: 'help.leave',
  say: 'help.say',
  narrate: 'help.narrate',
  skip: 'help.skip',
  clear: 'help.clear',
  voice: 'help.voice',
  dictionary: 'help.dictionary',
  diagnose: 'help.diagnose',
  usage: 'help.usage',
  autoread: 'help.autoread',
  config: 'help.config',
  reading: 'help.reading',
  filter: 'help.filter',
  spend: 'help.spend',
} as const satisfies Record<string, MessageKey>;

/** `name` or `description` in `lang` as the member's client shows it. */
function localized(
  o: { name?: string; name_localizations?: unknown; description?: string; description_localizations?: unknown },
  field: 'name' | 'description',
  lang: Lang,
): string {
  const localizations = o[`${field}_localizations`] as Partial<Record<string, string | null>> | null | undefined;
  return (lang === 'ja' ? localizations?.ja : localizations?.['en-US']) ?? o[field] ?? '';
}

/**
 * The help reply: one line per slash command with its subcommands, then the Apps on a message, all
 * named from the commands' own data, so a command or subcommand added later is listed too.
 */
function helpReply(commands: AnyCommand[], lang: Lang, ignorePrefix: string) {
  const slash = slashCommands(commands)
    .map((c) => c.data)
    .filter((c) => c.name !== data.name);
  const names = shownNames(slash, lang);
  const order = (name: string) => {
    const at = Object.keys(LINES).indexOf(name);
    return at === -1 ? Object.keys(LINES).length : at;
  };
  // Punctuation as each language lists things: "：表示・声" in Japanese, ": show, voice" in English.
  const [lead, separator] = lang === 'ja' ? ['：', '・'] : [': ', ', '];
  const lines: string[] = [];
  for (const command of slash.toSorted((a, b) => order(a.name) - order(b.name))) {
    const key = (LINES as Record<string, MessageKey | undefined>)[command.name];
    const what = key ? t(lang, key, names) : localized(command, 'description', lang);
    const subs = (command.options ?? []).flatMap((o) =>
      o.type === ApplicationCommandOptionType.Subcommand
        ? [localized(o, 'name', lang)]
        : o.type === ApplicationCommandOptionType.SubcommandGroup
          ? (o.options ?? []).map((s) => `${localized(o, 'name', lang)} ${localized(s, 'name', lang)}`)
          : [],
    );
    lines.push(`${names[command.name.replaceAll('-', '_')]} — ${what}${subs.length > 0 ? `${lead}${subs.join(separator)}` : ''}`);
  }
  const apps = commands.filter(isMessageCommand).map((c) => localized(c.data, 'name', lang));
  if (apps.length > 0) lines.push(t(lang, 'help.apps', { list: apps.join(separator) }));
  if (ignorePrefix !== '') lines.push(t(lang, 'help.ignore_prefix', { prefix: ignorePrefix }));
  // Should the list outgrow one message, what does not fit goes in a file rather than Discord refusing it all.
  return listReply(lang, { text: (list) => `${t(lang, 'help.title')}\n${list}`, lines, fileName: 'help.txt' });
}

export default {
  data,
  async execute(interaction, ctx) {
    // Commands named as the member's client shows them (/参加 in Japanese), from their registered data.
    const lang = langOf(interaction.locale);
    const prefix = interaction.guildId ? ctx.repos.guildSettings.get(interaction.guildId).ignorePrefix : '';
    const reply = helpReply([...(await loadCommands()).values()], lang, prefix);
    await interaction.reply({ ...reply, flags: MessageFlags.Ephemeral });
  },
} satisfies Command;
