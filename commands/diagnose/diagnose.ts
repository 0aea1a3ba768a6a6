import {
  GuildMember,
  InteractionContextType,
  MessageFlags,
  PermissionFlagsBits,
  type BaseInteraction,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord.js';
import { described, named, shownNames, slashCommands, type Command } from '../../src/discord/interactions/command.ts';
import { isManager, requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf, type Lang } from '../../src/i18n/texts.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { loadCommands } from '../../src/discord/interactions/loader.ts';
import type { FateWording } from './fate-text.ts';
import { diagnosisText } from './diagnose-text.ts';

// /diagnose (診断): why the bot is silent, checked where the member asks (src/discord/diagnosis/):
// its permissions here and in the voice channel, whether message content arrives, the voice
// connection and its encryption, what waits, the member's characters and their recent messages;
// for Manage Server the whole server too. Private, in the member's language.

const data = {
  ...named('diagnose', '診断'),
  ...described(
    'Why the bot is silent: its permissions, connection, queue and your messages',
    '読み上げないときの原因を調べます（権限・接続・待ち・あなたの発言）',
  ),
  contexts: [InteractionContextType.Guild],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const guild = interaction.guild ?? interaction.client.guilds.cache.get(guildId);
    if (!guild) throw new UserError('error.guild_only');
    const lang = langOf(interaction.locale);
    await interaction.deferReply({ flags: MessageFlags.Ephemeral });
    const channel = interaction.channel;
    const report = await ctx.diagnosis.report({
      guild,
      channelId: interaction.channelId,
      parentId: channel?.isThread() ? channel.parentId : null,
      userId: interaction.user.id,
      admin: isManager(interaction),
      appPermissions: interaction.appPermissions ?? null,
    });
    const content = diagnosisText(report, guildId, await wording(interaction, lang, true));
    await interaction.editReply({ content, allowedMentions: { parse: [] } });
  },
} satisfies Command;

/** How fates are worded for the member who asks: their language, commands as their client shows them, the channels they may view. */
export async function wording(interaction: BaseInteraction, lang: Lang, own: boolean): Promise<FateWording> {
  const names = shownNames(
    slashCommands((await loadCommands()).values()).map((c) => c.data),
    lang,
  );
  const member = interaction.member instanceof GuildMember ? interaction.member : null;
  const canView = (channelId: string) => {
    const channel = interaction.guild?.channels.cache.get(channelId);
    return !!channel && !!member && channel.permissionsFor(member).has(PermissionFlagsBits.ViewChannel);
  };
  return { lang, names, canView, own };
}
