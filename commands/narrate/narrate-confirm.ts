import { MessageFlags, type ButtonInteraction, type ChatInputCommandInteraction } from 'discord.js';
import type { CharacterBudget } from '../../src/billing/budget.ts';
import type { ButtonQuestions } from '../../src/discord/interactions/buttons.ts';
import { formatDate, t, type Lang } from '../../src/i18n/texts.ts';
import { describeFailure } from '../../src/discord/delivery/outcomes.ts';

// Spend, shown before it is spent: a long /narrate shows what it will cost and what the
// member and the server have left, and waits for Confirm. Nothing is held or sent before the click;
// Confirm checks the budgets again (others may have spent meanwhile); Cancel or no click in time
// leaves everything as it was, and the question says so.

interface CostQuestion {
  guildId: string;
  userId: string;
  chars: number;
  lang: Lang;
}

/**
 * Asks the member to confirm the cost; on Confirm runs `recheck` (throws what to tell the member
 * when the budget now refuses) and then `proceed` with the click, which answers it.
 */
export async function askNarrateCost(
  deps: { budget: CharacterBudget; buttons: ButtonQuestions },
  interaction: ChatInputCommandInteraction,
  question: CostQuestion,
  steps: { recheck(): Promise<void>; proceed(click: ButtonInteraction): Promise<void> },
): Promise<void> {
  const { lang, chars } = question;
  const [member, guild] = await Promise.all([
    deps.budget.usage({ guildId: question.guildId, userId: question.userId }),
    deps.budget.usage({ guildId: question.guildId }),
  ]);
  const closeQuestion = (content: string) => interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
  const row = deps.buttons.ask(
    {
      userId: question.userId,
      choices: ['confirm', 'cancel'] as const,
      async answer(choice, click) {
        if (choice === 'cancel') {
          await click.update({ content: t(lang, 'narrate.cost_cancelled', { chars }), components: [] });
          return;
        }
        try {
          await steps.recheck();
        } catch (error) {
          const known = describeFailure(lang, error);
          if (!known) throw error;
          await click.update({ content: t(lang, 'narrate.cost_refused', { reason: known }), components: [] });
          return;
        }
        // Together: the click must be answered within Discord's 3 s, whatever the edit takes.
        await Promise.all([closeQuestion(t(lang, 'narrate.cost_confirmed', { chars })), steps.proceed(click)]);
      },
      expire: async () => void (await closeQuestion(t(lang, 'narrate.cost_expired', { chars }))),
    },
    { confirm: { label: t(lang, 'narrate.cost_confirm'), primary: true }, cancel: { label: t(lang, 'narrate.cost_cancel') } },
  );
  await interaction.reply({
    content: t(lang, 'narrate.cost_question', {
      chars,
      memberLeft: member.remaining,
      memberLimit: member.limit,
      guildLeft: guild.remaining,
      guildLimit: guild.limit,
      resets: formatDate(lang, member.resetsAt),
      seconds: Math.round(deps.buttons.timeoutMs / 1000),
    }),
    components: [row],
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
}
