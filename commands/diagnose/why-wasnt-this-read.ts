import {
  ApplicationCommandType,
  InteractionContextType,
  MessageFlags,
  PermissionFlagsBits,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
} from 'discord.js';
import type { MessageCommand } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, t } from '../../src/i18n/texts.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { FATE_DEFAULTS } from '../../src/discord/diagnosis/fates.ts';
import { describeFate } from './fate-text.ts';
import { wording } from './diagnose.ts';

// Apps > なぜ読まれない？ / Why wasn't this read? on a message: what became of it, from what the bot
// recorded as it decided (src/discord/diagnosis/fates.ts): read when and where, merged with which,
// dropped as too old, deleted, refused for a limit, not read and why; or, with no record, why the
// bot never had it (it cannot view the channel, the channel is not read). Only about a message
// the member can view, and naming nothing of a channel they cannot.

const data = {
  type: ApplicationCommandType.Message,
  name: "Why wasn't this read?",
  name_localizations: { ja: 'なぜ読まれない？', 'en-US': "Why wasn't this read?" },
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIContextMenuApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const lang = langOf(interaction.locale);
    // Discord sends the member's permissions in the message's channel with the interaction.
    if (!interaction.memberPermissions?.has(PermissionFlagsBits.ViewChannel)) throw new UserError('whynot.cannot_view');
    const message = interaction.targetMessage;
    const record = ctx.diagnosis.fates.get(guildId, message.id);
    const w = await wording(interaction, lang, message.author.id === interaction.user.id || isManagerOf(interaction));
    const lines: string[] = [];
    if (record) {
      lines.push(t(lang, 'whynot.answer', { fate: describeFate(record, w) }));
      // Discord sends a message command's target whole: text here that arrived blank proves the content is withheld.
      if (record.blank && (message.content !== '' || message.attachments.size > 0)) {
        ctx.diagnosis.confirmBlank();
        lines.push(t(lang, 'whynot.blank_confirmed'));
      }
    } else if (message.author.id === interaction.client.user.id) lines.push(t(lang, 'whynot.own_message'));
    else if (interaction.appPermissions && !interaction.appPermissions.has(PermissionFlagsBits.ViewChannel))
      lines.push(t(lang, 'whynot.not_sent'));
    else if (message.createdTimestamp < Date.now() - FATE_DEFAULTS.keepMs)
      lines.push(t(lang, 'whynot.too_old_record', { hours: FATE_DEFAULTS.keepMs / 3_600_000 }));
    else {
      const channel = interaction.channel;
      const reading = ctx.diagnosis.reading(guildId, interaction.channelId, channel?.isThread() ? channel.parentId : null);
      lines.push(
        reading.read === 'no' ? t(lang, 'whynot.not_read_channel', { join: w.names.join ?? '/join' }) : t(lang, 'whynot.no_record'),
      );
    }
    await interaction.reply({ content: lines.join('\n'), flags: MessageFlags.Ephemeral, allowedMentions: { parse: [] } });
  },
} satisfies MessageCommand;

/** Manage Server, as Discord sends the member's permissions with the interaction. */
function isManagerOf(interaction: { memberPermissions: { has(p: bigint): boolean } | null }): boolean {
  return interaction.memberPermissions?.has(PermissionFlagsBits.ManageGuild) ?? false;
}
