import {
  AttachmentBuilder,
  MessageFlags,
  PermissionFlagsBits,
  type Attachment,
  type BaseInteraction,
  type ChatInputCommandInteraction,
} from 'discord.js';
import type { Repositories } from '../../src/db/repositories.ts';
import type { DictionaryStore } from './dictionary-store.ts';
import type { DictionaryEntry } from '../../src/speech/text/dictionary.ts';
import { DICTIONARY_FILE_LIMITS, parseDictionaryFile, serialiseDictionary } from '../../src/speech/text/dictionary-file.ts';
import type { ButtonQuestions } from '../../src/discord/interactions/buttons.ts';
import { describeDictionaryFileProblem } from './dictionary-problems.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';

// The dictionary: who may edit, and import/export as a file. An import is read whole and
// checked first; nothing changes until the member picks Merge or Replace on the summary.

const SHOWN_PROBLEMS = 15;

/**
 * Whether a member may edit the server's dictionary: Manage Server, or the role the admins allowed
 * (/dictionary editors). The one rule for the command and the web dashboard.
 */
export function mayEditDictionary(
  repos: Repositories,
  guildId: string,
  member: { manageGuild: boolean; hasRole(roleId: string): boolean },
): boolean {
  if (member.manageGuild) return true;
  const roleId = repos.controls.get(guildId).dictionaryRoleId;
  return roleId !== null && member.hasRole(roleId);
}

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
          : t(lang, 'dictionary.import_over_total', { count: result.total, max: result.max });
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

/** What an import would do: the summary /dictionary import shows before Merge or Replace (nothing changed yet). */
export interface ImportSummary {
  count: number;
  added: number;
  changed: number;
  unchanged: number;
  removed: number;
  total: number;
}

/**
 * A dictionary file read and checked whole, as /dictionary import and the dashboard read it: its
 * entries and what merging or replacing would do, or the problems as the member reads them.
 */
export function checkImport(
  lang: Lang,
  store: DictionaryStore,
  fileName: string,
  bytes: Uint8Array,
): { ok: true; entries: DictionaryEntry[]; summary: ImportSummary } | { ok: false; problems: string[] } {
  const parsed = parseDictionaryFile(fileName, bytes);
  if (!parsed.ok) {
    const problems = parsed.file ? [parsed.file] : parsed.rows;
    const lines = problems.slice(0, SHOWN_PROBLEMS).map((p) => describeDictionaryFileProblem(lang, parsed.format, p));
    if (problems.length > SHOWN_PROBLEMS) lines.push(t(lang, 'dictionary.import_more', { count: problems.length - SHOWN_PROBLEMS }));
    return { ok: false, problems: lines };
  }
  const entries = parsed.entries;
  const own = new Map(store.own().map((e) => [e.word, e.reading]));
  const added = entries.filter((e) => !own.has(e.word)).length;
  const changed = entries.filter((e) => own.has(e.word) && own.get(e.word) !== e.reading).length;
  const inFile = new Set(entries.map((e) => e.word));
  const removed = [...own.keys()].filter((w) => !inFile.has(w)).length;
  return {
    ok: true,
    entries: [...entries],
    summary: { count: entries.length, added, changed, unchanged: entries.length - added - changed, removed, total: own.size },
  };
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
