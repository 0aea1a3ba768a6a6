import {
  ApplicationCommandOptionType,
  AttachmentBuilder,
  InteractionContextType,
  MessageFlags,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, type Command } from '../../src/discord/interactions/command.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { isManager, requireGuild } from '../../src/discord/interactions/guards.ts';
import { formatDate, langOf, t } from '../../src/i18n/texts.ts';
import { renderUsageChart } from './usage-chart.ts';
import { readArgs } from '../../src/discord/interactions/command-args.ts';

const data = {
  ...named('usage', '利用状況'),
  ...described('Characters spent this period against the limits', '今期の文字数の利用状況と上限'),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.User,
      ...named('member', 'メンバー'),
      ...described('Member to show (admins)', '表示するメンバー（管理者）'),
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const lang = langOf(interaction.locale);
    const admin = isManager(interaction);
    const { member } = readArgs(interaction, data.options);
    // The member as Discord resolved it (none resolved: the caller).
    const picked = member === undefined ? null : (interaction.options.resolved?.users?.get(member) ?? null);
    const target = picked ?? interaction.user;
    if (target.id !== interaction.user.id && !admin) throw new UserError('error.admin_only');
    const mine = await ctx.budget.usage({ guildId, userId: target.id });
    const lines = [
      t(lang, 'usage.member', { name: target.displayName, used: mine.used, limit: mine.limit, resets: formatDate(lang, mine.resetsAt) }),
    ];
    // One word for the billing period everywhere (text and chart), and what it is: the days counted.
    const period = ctx.budget.currentPeriod();
    const days = Math.round((period.end - period.start) / 86_400_000);
    lines.push(t(lang, 'usage.period', { start: formatDate(lang, period.start), last: formatDate(lang, period.end - 86_400_000), days }));
    if (admin) {
      const guild = await ctx.budget.usage({ guildId });
      lines.push(t(lang, 'usage.guild', { used: guild.used, limit: guild.limit, dropped: ctx.autoRead.droppedCount(guildId) }));
      const top = await ctx.budget.topSpenders(guildId, 5);
      if (top.length) lines.push(t(lang, 'usage.top', { list: top.map((s) => `<@${s.userId}> ${s.used}`).join(', ') }));
    }
    // The period's spend by day, as a chart and as numbers (the member's; the server's for admins).
    const serverChart = admin && picked === null;
    const spendByDay = ctx.repos.dailySpend.days(period, serverChart ? { guildId } : { guildId, userId: target.id });
    const day = (ms: number) => {
      const d = new Date(ms);
      return `${d.getUTCMonth() + 1}/${d.getUTCDate()}`;
    };
    const spent = spendByDay.filter((d) => d.chars > 0);
    const total = spent.reduce((sum, d) => sum + d.chars, 0);
    lines.push(t(lang, serverChart ? 'usage.days_server' : 'usage.days_member', { name: target.displayName, total }));
    lines.push(spent.length ? spent.map((d) => `${day(d.dayStart)} ${d.chars}`).join(' · ') : t(lang, 'usage.days_none'));
    const png = await renderUsageChart(spendByDay, {
      title: t(lang, serverChart ? 'usage.chart_server' : 'usage.chart_member', { name: target.displayName }),
      day,
    });
    const files = png ? [new AttachmentBuilder(png, { name: 'usage.png' })] : [];
    await interaction.reply({
      content: lines.join('\n').slice(0, 2000),
      files,
      flags: MessageFlags.Ephemeral,
      allowedMentions: { parse: [] },
    });
  },
} satisfies Command;
