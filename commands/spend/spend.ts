import { ApplicationCommandOptionType, MessageFlags, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { adminCommand, described, named, subcommand, type Command } from '../../src/discord/interactions/command.ts';
import { commandActor, requireExistingRole, requireManageGuild } from '../../src/discord/interactions/guards.ts';
import {
  removeRoleAllowance,
  ROLE_ALLOWANCE_RANGE,
  setRoleAllowance,
  changeControls,
  NARRATE_CONFIRM_RANGE,
} from '../../src/usecases/limits.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { listReply } from '../../src/discord/interactions/list-reply.ts';
import type { RoleAllowance } from '../../src/domain/controls.ts';
import { runSubcommand } from '../../src/discord/interactions/command-args.ts';

// Spend, shown before it is spent: role allowances and the /narrate confirmation threshold.

const MAX_CHARS = ROLE_ALLOWANCE_RANGE.max;
const roleOption = {
  type: ApplicationCommandOptionType.Role,
  ...named('role', 'ロール'),
  ...described('The role', '対象のロール'),
  required: true,
} as const;

const data = {
  ...adminCommand(
    'spend',
    '利用枠',
    'Character allowances of roles, and when /narrate asks first (admins)',
    'ロールごとの文字数枠と /ナレーション の確認（管理者）',
  ),
  options: [
    subcommand(
      'role-limit',
      'ロール枠',
      'Give a role a larger monthly limit per member (several roles: the largest)',
      'ロールのメンバーに大きい月間上限を付与（複数ロールは最大のもの）',
      [
        roleOption,
        {
          type: ApplicationCommandOptionType.Integer,
          ...named('chars', '文字数'),
          ...described('Monthly characters per member', 'メンバーごとの月間文字数'),
          required: true,
          min_value: ROLE_ALLOWANCE_RANGE.min,
          max_value: MAX_CHARS,
        },
      ],
    ),
    subcommand('role-remove', 'ロール枠削除', "Remove a role's allowance", 'ロールの枠を削除', [roleOption]),
    subcommand('roles', 'ロール枠一覧', 'List role allowances', 'ロールの枠の一覧'),
    subcommand(
      'narrate-confirm',
      'ナレーション確認',
      '/narrate longer than this shows its cost and asks to confirm (default 200)',
      'これより長い /ナレーション は文字数を表示して確認（既定 200）',
      [
        {
          type: ApplicationCommandOptionType.Integer,
          ...named('chars', '文字数'),
          ...described('Characters (0: always ask)', '文字数（0 で常に確認）'),
          required: true,
          min_value: NARRATE_CONFIRM_RANGE.min,
          max_value: NARRATE_CONFIRM_RANGE.max,
        },
      ],
    ),
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireManageGuild(interaction);
    const lang = langOf(interaction.locale);
    const reply = (content: string) => interaction.reply({ content, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
    await runSubcommand(interaction, data, {
      async 'narrate-confirm'({ chars }) {
        await changeControls(ctx, guildId, commandActor(interaction), { narrateConfirmChars: chars }, () => false);
        await reply(t(lang, 'spend.confirm_set', { chars }));
      },
      async roles() {
        const base = ctx.budget.limitsFor(guildId).userMonthlyLimit;
        const allowances = ctx.repos.roleAllowances.list(guildId);
        if (allowances.length === 0) return void (await reply(t(lang, 'spend.roles_empty', { base })));
        const roles = interaction.guild?.roles.cache;
        const gone = (id: string) => (roles && !roles.has(id) ? t(lang, 'spend.role_gone') : '');
        const capped = (chars: number) => {
          const applied = ctx.budget.appliedRoleAllowance(chars);
          return applied.capped ? t(lang, 'spend.role_capped', { max: applied.value }) : '';
        };
        const line = (a: RoleAllowance, role: string) => `${role} ${a.monthlyLimit}${capped(a.monthlyLimit)}${gone(a.roleId)}`;
        const list = listReply(lang, {
          text: (shown) => t(lang, 'spend.roles', { base, list: shown }),
          lines: allowances.map((a) => line(a, `<@&${a.roleId}>`)),
          fileName: 'role-allowances.txt',
          fileLines: allowances.map((a) => line(a, `@${roles?.get(a.roleId)?.name ?? a.roleId} (${a.roleId})`)),
        });
        await interaction.reply({ ...list, flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
      },
      async 'role-remove'({ role: roleId }) {
        // By id: a deleted role's allowance can still be removed.
        await removeRoleAllowance(ctx, guildId, commandActor(interaction), roleId);
        await reply(t(lang, 'spend.role_removed', { role: `<@&${roleId}>` }));
      },
      async 'role-limit'({ role, chars }) {
        const roleId = await requireExistingRole(interaction, role);
        const { base } = await setRoleAllowance(ctx, guildId, commandActor(interaction), roleId, chars);
        await reply(t(lang, chars > base ? 'spend.role_set' : 'spend.role_set_not_larger', { role: `<@&${roleId}>`, chars, base }));
      },
    });
  },
} satisfies Command;
