import {
  ApplicationCommandOptionType,
  MessageFlags,
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandRoleOption,
  type ChatInputCommandInteraction,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import {
  adminCommand,
  choice,
  described,
  named,
  shownSubcommand,
  subcommand,
  type Command,
} from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { commandActor, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import { changeReading, changeReadingList, type ListChecks, type ReadingChange } from '../../src/usecases/reading.ts';
import { langOf, t, type Lang, type MessageKey } from '../../src/i18n/texts.ts';
import { FRESH_SECONDS, type BotReading, type ReadingSettings } from '../../src/domain/reading.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { runSubcommand, type SubcommandName } from '../../src/discord/interactions/command-args.ts';

// /reading: whose messages and what in them auto-read reads — the switches other
// read-aloud bots have. Admins only (Manage Server), like /config.

// Option lists keep their literal types (`as const` on type and required) so the handlers' arguments are typed from them.
const onOff = (descEn: string, descJa: string) =>
  [
    { type: ApplicationCommandOptionType.Boolean as const, ...named('value', '値'), ...described(descEn, descJa), required: true as const },
  ] satisfies APIApplicationCommandBasicOption[];
const botId = [
  {
    type: ApplicationCommandOptionType.String as const,
    ...named('id', 'ボットid'),
    ...described('Bot mention or id, or webhook id', 'ボットのメンションかID、またはWebhookのID'),
    required: true as const,
    max_length: 30,
  },
] satisfies APIApplicationCommandBasicOption[];
const role = <const R extends boolean>(required: R) =>
  [
    {
      type: ApplicationCommandOptionType.Role as const,
      ...named('role', 'ロール'),
      ...described(required ? 'Role' : 'Role (empty: none)', required ? 'ロール' : 'ロール（空で解除）'),
      required,
    },
  ] satisfies APIApplicationCommandBasicOption[] as Array<APIApplicationCommandRoleOption & { name: 'role'; required: R }>;

const data = {
  ...adminCommand('reading', '読み上げ対象', 'Whose messages and what in them is read (admins)', '誰の何を読み上げるか（管理者）'),
  options: [
    subcommand('show', '表示', 'Show these settings', '設定を表示', []),
    subcommand('bots', 'ボット', 'Read messages from bots and webhooks', 'ボットとWebhookのメッセージを読む', [
      {
        type: ApplicationCommandOptionType.String,
        ...named('value', '値'),
        ...described('Which ones', '対象'),
        required: true,
        choices: [
          choice('None (default)', '読まない（標準）', 'off'),
          choice('Only the allowed ones', '許可したものだけ', 'listed'),
          choice('All', 'すべて', 'all'),
        ],
      },
    ]),
    subcommand('bot-add', 'ボット許可', 'Allow a bot or webhook to be read', 'ボットかWebhookを読み上げ対象にする', botId),
    subcommand('bot-remove', 'ボット許可解除', 'Remove a bot or webhook from the allowed ones', 'ボットかWebhookを許可から外す', botId),
    subcommand('forwards', '転送', 'Read forwarded messages', '転送されたメッセージを読む', onOff('On: read them', 'オンで読む')),
    subcommand('emoji', '絵文字', 'Read emoji by their names', '絵文字を名前で読む', onOff('On: read names', 'オンで読む')),
    subcommand('required-role', '必須ロール', 'Only members with this role are read', 'このロールを持つメンバーだけ読む', role(false)),
    subcommand(
      'never-role-add',
      '読まないロール追加',
      'Members with this role are never read',
      'このロールのメンバーは読まない',
      role(true),
    ),
    subcommand(
      'never-role-remove',
      '読まないロール解除',
      'Read members with this role again',
      'このロールのメンバーを読むに戻す',
      role(true),
    ),
    subcommand(
      'in-voice',
      'vc参加者のみ',
      "Only read members in the bot's voice channel",
      'ボットと同じボイスチャンネルにいるメンバーだけ読む',
      onOff('On: only them', 'オンで限定'),
    ),
    subcommand(
      'stale-notice',
      '省略通知',
      'Say how many messages were skipped when reading falls behind',
      '読み上げが遅れて省略した件数を読み上げる',
      onOff('On: say it', 'オンで読み上げる'),
    ),
    subcommand(
      'freshness',
      '鮮度',
      'When a voice channel falls behind, skip what could not be heard within this many seconds',
      '読み上げが追いつかないとき、書かれてからこの秒数以内に読めないメッセージは省略する',
      [
        {
          type: ApplicationCommandOptionType.Integer,
          ...named('seconds', '秒'),
          ...described(
            `Seconds (${FRESH_SECONDS.min}-${FRESH_SECONDS.max}, default 20)`,
            `秒数（${FRESH_SECONDS.min}〜${FRESH_SECONDS.max}、標準20）`,
          ),
          required: true,
          min_value: FRESH_SECONDS.min,
          max_value: FRESH_SECONDS.max,
        },
      ],
    ),
    subcommand(
      'speed-up',
      '早口',
      'Read faster (up to 1.5x) while a voice channel is behind',
      '読み上げが追いつかないとき速く読む（最大1.5倍）',
      onOff('On: may read faster', 'オンで速く読む'),
    ),
    subcommand(
      'threads',
      'スレッド',
      'Read threads and forum posts of read channels',
      '読み上げるチャンネルのスレッドとフォーラム投稿も読む',
      onOff('On: read them', 'オンで読む'),
    ),
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

const SWITCHES = {
  forwards: 'forwards',
  emoji: 'emoji',
  'in-voice': 'requireInVoice',
  'stale-notice': 'staleNotice',
  'speed-up': 'speedUp',
  threads: 'threads',
} as const satisfies Partial<
  Record<
    SubcommandName<typeof data>,
    keyof Pick<ReadingSettings, 'forwards' | 'emoji' | 'requireInVoice' | 'staleNotice' | 'speedUp' | 'threads'>
  >
>;
const BOT_MODES: Record<BotReading, MessageKey> = { off: 'reading.bots_off', listed: 'reading.bots_listed', all: 'reading.bots_all' };

/** The role option's id, refused when the role no longer exists (deleted after it was picked) or is @everyone. */
async function resolveRole(interaction: ChatInputCommandInteraction, guildId: string, id: string | undefined): Promise<string | null> {
  if (id === undefined) return null;
  const guild = interaction.guild;
  const found = guild?.roles.cache.get(id) ?? (await guild?.roles.fetch(id).catch(() => null));
  if (!found) throw new UserError('reading.role_gone');
  if (id === guildId) throw new UserError('reading.role_everyone');
  return id;
}

/** Items shown per list: a reply holds 2,000 characters and each list may hold READING_LIST_MAX. */
const SHOWN = 15;
const capped = (items: string[]) => items.slice(0, SHOWN).join(', ') + (items.length > SHOWN ? ` …(+${items.length - SHOWN})` : '');

/** The horizon as it applies: AUTO_READ_MAX_AGE_SECONDS is the hard limit above it. */
function freshness(lang: Lang, ctx: BotContext, seconds: number): string {
  const max = Math.round(ctx.config.limits.autoReadMaxAgeMs / 1000);
  return t(lang, 'reading.fresh_seconds', { seconds }) + (seconds > max ? t(lang, 'reading.fresh_capped', { max }) : '');
}

function show(lang: Lang, ctx: BotContext, guildId: string, roleExists: (id: string) => boolean): string {
  const r = ctx.repos.reading.get(guildId);
  const lists = ctx.repos.readingLists;
  const onOff = (b: boolean) => t(lang, b ? 'config.on' : 'config.off');
  const roleName = (id: string) => (roleExists(id) ? `<@&${id}>` : t(lang, 'reading.role_deleted', { id }));
  const bots = lists.list(guildId, 'bot');
  const never = lists.list(guildId, 'never_role');
  return t(lang, 'reading.show', {
    bots: t(lang, BOT_MODES[r.bots]),
    allowed: bots.length ? capped(bots.map((id) => `<@${id}> (${id})`)) : t(lang, 'config.none'),
    forwards: onOff(r.forwards),
    emoji: onOff(r.emoji),
    required: r.requiredRoleId ? roleName(r.requiredRoleId) : t(lang, 'config.none'),
    never: never.length ? capped(never.map(roleName)) : t(lang, 'config.none'),
    inVoice: onOff(r.requireInVoice),
    staleNotice: onOff(r.staleNotice),
    fresh: freshness(lang, ctx, r.freshSeconds),
    speedUp: onOff(r.speedUp),
    threads: onOff(r.threads),
  });
}

/** The reply to a list change. */
function listReply(lang: Lang, ctx: BotContext, guildId: string, kind: 'bot' | 'never_role', id: string, result: string): string {
  if (kind === 'never_role') {
    const key = result === 'removed' ? 'reading.never_removed' : result === 'exists' ? 'reading.never_exists' : 'reading.never_added';
    return t(lang, key, { role: `<@&${id}>` });
  }
  if (result === 'removed') return t(lang, 'reading.bot_removed', { id });
  const hint = ctx.repos.reading.get(guildId).bots === 'listed' ? '' : t(lang, 'reading.bot_hint');
  return t(lang, result === 'exists' ? 'reading.bot_exists' : 'reading.bot_added', { id }) + hint;
}

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const reply = async (content: string, ephemeral = false) =>
      void (await interaction.reply({ content, allowedMentions: { parse: [] }, ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}) }));
    const roleExists = (id: string) => interaction.guild?.roles.cache.has(id) ?? true;
    // The dashboard's rule too (src/usecases/reading.ts): checked, saved, audit-logged.
    const save = (patch: ReadingChange) => changeReading(ctx, guildId, commandActor(interaction), patch, roleExists);
    // Named as the member's client shows the subcommand, not by its English id.
    const setting = (name: string) => shownSubcommand(data, name, lang);
    const saveSwitch = async (name: keyof typeof SWITCHES, value: boolean) => {
      await save({ [SWITCHES[name]]: value });
      await reply(t(lang, 'config.saved', { setting: setting(name), value: t(lang, value ? 'config.on' : 'config.off') }));
    };
    const listChecks: ListChecks = {
      roleExists,
      selfId: interaction.client.user.id,
      isHuman: (id) => {
        const known = interaction.guild?.members.cache.get(id)?.user ?? interaction.client.users.cache.get(id);
        return known !== undefined && !known.bot;
      },
    };
    // The dashboard's rule for the lists too (src/usecases/reading.ts): checked, saved, audit-logged.
    const changeList = async (kind: 'bot' | 'never_role', typed: string, adding: boolean) => {
      const { id, result } = await changeReadingList(ctx, guildId, commandActor(interaction), kind, typed, adding, listChecks);
      await reply(listReply(lang, ctx, guildId, kind, id, result));
    };
    await runSubcommand(interaction, data, {
      forwards: ({ value }) => saveSwitch('forwards', value),
      emoji: ({ value }) => saveSwitch('emoji', value),
      'in-voice': ({ value }) => saveSwitch('in-voice', value),
      'stale-notice': ({ value }) => saveSwitch('stale-notice', value),
      'speed-up': ({ value }) => saveSwitch('speed-up', value),
      async freshness({ seconds }) {
        // Checked again (src/usecases/reading.ts): min_value and max_value bind Discord's client, not a forged request.
        await save({ freshSeconds: seconds });
        await reply(t(lang, 'config.saved', { setting: setting('freshness'), value: freshness(lang, ctx, seconds) }));
      },
      threads: ({ value }) => saveSwitch('threads', value),
      show: () => reply(show(lang, ctx, guildId, roleExists), true),
      async bots(args) {
        // Checked again (src/usecases/reading.ts): the choices bind Discord's client, not a forged request.
        const value: string = args.value;
        await save({ bots: value as BotReading });
        await reply(t(lang, 'config.saved', { setting: setting('bots'), value: t(lang, BOT_MODES[value as BotReading]) }));
      },
      'bot-add': ({ id }) => changeList('bot', id, true),
      'bot-remove': ({ id }) => changeList('bot', id, false),
      async 'required-role'({ role }) {
        const id = await resolveRole(interaction, guildId, role);
        await save({ requiredRoleId: id });
        await reply(id ? t(lang, 'reading.required_set', { role: `<@&${id}>` }) : t(lang, 'reading.required_cleared'));
      },
      'never-role-add': async ({ role }) => changeList('never_role', (await resolveRole(interaction, guildId, role))!, true),
      'never-role-remove': async ({ role }) => changeList('never_role', (await resolveRole(interaction, guildId, role))!, false),
    });
  },
} satisfies Command;
