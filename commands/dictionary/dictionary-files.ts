import {
  AttachmentBuilder,
  MessageFlags,
  PermissionFlagsBits,
  type Attachment,
  type BaseInteraction,
  type ChatInputCommandInteraction,
} from 'discord.js';
import type { Repositories } from '../../src/db/repositories.ts';
import { checkImport, importRefusal, mayEditDictionary, type DictionaryStore } from '../../src/usecases/dictionaries.ts';
import { DICTIONARY_FILE_LIMITS, serialiseDictionary } from '../../src/speech/text/dictionary-file.ts';
import type { ButtonQuestions } from '../../src/discord/interactions/buttons.ts';
import { describeDictionaryFileProblem } from '../../src/usecases/dictionary-problems.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';

// The dictionary's Discord side: who may edit as the interaction says, and import/export as an
// attachment. An import is read whole and checked first (src/usecases/dictionaries.ts); nothing
// changes until the member picks Merge or Replace on the summary.

/** mayEditDictionary for the member who used a command, as Discord sent them with the interaction. */
export function isDictionaryEditor(interaction: BaseInteraction, repos: Repositories, guildId: string): boolean {
  const roles = interaction.member?.roles;
  return mayEditDictionary(repos, guildId, {
    manageGuild: interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false,
    hasRole: (roleId) => (Array.isArray(roles) ? roles.includes(roleId) : (roles?.cache.has(roleId) ?? false)),
  });
}

/** isDictionaryEditor, or a localised refusal. */
export function requireDictionaryEditor(interaction: BaseInteraction, repos: Repositories, guildId: string): void {
  if (isDictionaryEditor(interaction, repos, guildId)) return;
  const roleId = repos.controls.get(guildId).dictionaryRoleId;
  throw new UserError(roleId ? 'dictionary.editor_only_role' : 'dictionary.editor_only', roleId ? { vars: { role: `<@&${roleId}>` } } : {});
}

/** /dictionary export: the server's own entries (or the member's) as a JSON or CSV attachment. */
export async function exportDictionary(
  interaction: ChatInputCommandInteraction,
  store: DictionaryStore,
  format: 'json' | 'csv',
  lang: Lang,
): Promise<void> {
  const entries = store.own();
  if (entries.length === 0) throw new UserError(store.scope === 'me' ? 'dictionary.mine_empty' : 'dictionary.empty');
  const file = new AttachmentBuilder(Buffer.from(serialiseDictionary(entries, format), 'utf8'), { name: `dictionary.${format}` });
  await interaction.reply({
    content: t(lang, 'dictionary.exported', { count: entries.length }),
    files: [file],
    flags: MessageFlags.Ephemeral,
  });
}

/** /dictionary import: reads and checks the file, shows what Merge and Replace would do, waits for the click. */
export async function importDictionary(
  interaction: ChatInputCommandInteraction,
  deps: { store: DictionaryStore; buttons: ButtonQuestions },
  lang: Lang,
  attachment: Attachment,
): Promise<void> {
  // Refused before anything is downloaded when Discord already says it is too large.
  if (attachment.size > DICTIONARY_FILE_LIMITS.maxBytes) {
    throw new UserError('dictionary.import_refused', {
      vars: {
        problems: describeDictionaryFileProblem(lang, undefined, {
          identifier: 'dictfile.too_large',
          context: { max: DICTIONARY_FILE_LIMITS.maxBytes, found: attachment.size },
        }),
      },
    });
  }
  await interaction.deferReply({ flags: MessageFlags.Ephemeral });
  const bytes = await download(attachment.url, DICTIONARY_FILE_LIMITS.maxBytes);
  const checked = checkImport(lang, deps.store, attachment.name, bytes ?? new Uint8Array(DICTIONARY_FILE_LIMITS.maxBytes + 1));
  if (!checked.ok) {
    await interaction.editReply({
      content: t(lang, 'dictionary.import_refused', { problems: checked.problems.join('\n') }).slice(0, 2000),
      allowedMentions: { parse: [] },
    });
    return;
  }
  const { entries, summary } = checked;
  const close = (content: string) => interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
  const row = deps.buttons.ask(
    {
      userId: interaction.user.id,
      choices: ['merge', 'replace', 'cancel'] as const,
      async answer(choice, click) {
        if (choice === 'cancel') return void (await click.update({ content: t(lang, 'dictionary.import_cancelled'), components: [] }));
        // Counted again where it is written: the dictionary may have changed since the summary.
        const result = await deps.store.import(entries, choice);
        const content = result.ok
          ? t(lang, choice === 'merge' ? 'dictionary.import_merged' : 'dictionary.import_replaced', {
              count: entries.length,
              total: result.total,
            })
          : importRefusal(lang, result);
        await click.update({ content, components: [] });
      },
      expire: async () => void (await close(t(lang, 'dictionary.import_expired'))),
    },
    {
      merge: { label: t(lang, 'dictionary.import_merge'), primary: true },
      replace: { label: t(lang, 'dictionary.import_replace'), danger: true },
      cancel: { label: t(lang, 'dictionary.import_cancel') },
    },
  );
  await interaction.editReply({
    content: t(lang, 'dictionary.import_summary', { ...summary }),
    components: [row],
    allowedMentions: { parse: [] },
  });
}

/** The file's bytes, or undefined once it is larger than `maxBytes` (the download stops there). */
async function download(url: string, maxBytes: number): Promise<Uint8Array | undefined> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(15_000) });
  } catch (error) {
    throw new UserError('dictionary.import_download', { cause: error });
  }
  if (!res.ok || !res.body) throw new UserError('dictionary.import_download', { cause: new Error(`status ${res.status}`) });
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body) {
    size += chunk.length;
    if (size > maxBytes) {
      await res.body.cancel().catch(() => {});
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
