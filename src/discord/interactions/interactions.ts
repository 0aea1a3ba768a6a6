import {
  MessageFlags,
  type ChatInputCommandInteraction,
  type Interaction,
  type MessageContextMenuCommandInteraction,
  type RepliableInteraction,
} from 'discord.js';
import { isMessageCommand, type AnyCommand, type Command, type MessageCommand } from './command.ts';
import type { BotContext } from './context.ts';
import { langOf, t } from '../../i18n/texts.ts';
import { describeFailure } from '../delivery/outcomes.ts';

/** Replies ephemerally whether or not the interaction was already answered or deferred. */
async function tell(interaction: RepliableInteraction, content: string): Promise<void> {
  const body = { content, allowedMentions: { parse: [] } };
  if (interaction.deferred && !interaction.replied) await interaction.editReply(body);
  else if (interaction.replied) await interaction.followUp({ ...body, flags: MessageFlags.Ephemeral });
  else await interaction.reply({ ...body, flags: MessageFlags.Ephemeral });
}

/**
 * The one entry point for interactions: finds the command, runs it inside the one
 * try/catch, and makes sure the user always hears back, in their language, without internals.
 */
export async function dispatchInteraction(interaction: Interaction, commands: Map<string, AnyCommand>, ctx: BotContext): Promise<void> {
  if (interaction.isAutocomplete()) {
    const found = commands.get(interaction.commandName);
    const command = found && !isMessageCommand(found) ? found : undefined;
    try {
      await command?.autocomplete?.(interaction, ctx);
    } catch (error) {
      ctx.logger.warn({ err: error, command: interaction.commandName, guildId: interaction.guildId }, 'autocomplete failed');
      if (!interaction.responded) await interaction.respond([]).catch(() => {});
    }
    return;
  }
  if (interaction.isButton()) {
    // Answers to the questions commands ask with buttons (src/discord/interactions/buttons.ts).
    if (!ctx.buttons.owns(interaction.customId)) return;
    const where = {
      button: interaction.customId.split(':')[0],
      guildId: interaction.guildId,
      userId: interaction.user.id,
      interactionId: interaction.id,
    };
    try {
      await ctx.buttons.click(interaction);
    } catch (error) {
      await fail(interaction, error, where, ctx);
    }
    return;
  }
  if (interaction.isModalSubmit()) {
    // A modal a message command opened: found by the id before its first ':'. The submitter's
    // rights are checked by the handler from the interaction, never taken from the custom_id.
    const id = interaction.customId.split(':')[0];
    const owner = [...commands.values()].find((c): c is MessageCommand => isMessageCommand(c) && c.modal?.id === id);
    const where = { modal: id, guildId: interaction.guildId, userId: interaction.user.id, interactionId: interaction.id };
    if (!owner?.modal) {
      ctx.logger.warn(where, 'unknown modal');
      await tell(interaction, t(langOf(interaction.locale), 'error.generic')).catch(() => {});
      return;
    }
    try {
      await owner.modal.submit(interaction, ctx);
    } catch (error) {
      await fail(interaction, error, where, ctx);
    }
    return;
  }
  if (!interaction.isChatInputCommand() && !interaction.isMessageContextMenuCommand()) return;
  const found = commands.get(interaction.commandName);
  const lang = langOf(interaction.locale);
  const where = {
    command: interaction.commandName,
    guildId: interaction.guildId,
    channelId: interaction.channelId,
    userId: interaction.user.id,
    interactionId: interaction.id,
  };
  if (!found || isMessageCommand(found) !== interaction.isMessageContextMenuCommand()) {
    ctx.logger.warn(where, 'unknown command (commands not redeployed?)');
    await tell(interaction, t(lang, 'error.generic')).catch(() => {});
    return;
  }
  try {
    if (isMessageCommand(found)) await found.execute(interaction as MessageContextMenuCommandInteraction, ctx);
    else await (found as Command).execute(interaction as ChatInputCommandInteraction, ctx);
  } catch (error) {
    await fail(interaction, error, where, ctx);
  }
}

/** The one way a failure reaches the user: what went wrong in their language, internals only in the log. */
async function fail(interaction: RepliableInteraction, error: unknown, where: Record<string, unknown>, ctx: BotContext): Promise<void> {
  const lang = langOf(interaction.locale);
  const known = describeFailure(lang, error);
  if (known) {
    ctx.logger.debug({ ...where, code: (error as { code?: string }).code ?? (error as Error).message }, 'command refused');
  } else {
    ctx.logger.error({ ...where, err: error }, 'command failed');
  }
  await tell(interaction, known ?? t(lang, 'error.generic')).catch((replyError: unknown) =>
    ctx.logger.warn({ ...where, err: replyError }, 'could not tell the user about a failure'),
  );
}
