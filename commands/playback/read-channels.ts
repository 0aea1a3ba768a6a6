import { MessageFlags, type ButtonInteraction, type ChatInputCommandInteraction } from 'discord.js';
import { UserError } from '../../src/i18n/errors.ts';
import type { BotContext } from '../../src/discord/interactions/context.ts';
import { requirePlaybackControl } from '../../src/discord/voice-control/playback-rule.ts';
import { audienceCanView } from '../../src/discord/audience/visibility.ts';
import { describeFailure } from '../../src/discord/delivery/outcomes.ts';
import { countedChannels, decideChannelLeave } from '../../src/domain/read-channels.ts';
import { t, type Lang } from '../../src/i18n/texts.ts';
import type { SessionInfo } from '../../src/voice/manager.ts';

// Several text channels per call: /join typed in another text channel while the bot is already in
// the member's call asks whether to read that channel too (up to the server's number, /config
// text-channels); /leave typed in one of several channels a call reads asks whether to stop just
// that one. Only a member in the call, or with Move Members there, may change what it reads (the
// playback rule), checked when asked and again on the click. Each answer is said in the channel
// too, for everyone whose messages are now read (or no longer read).

const mentions = (ids: readonly string[]) => ids.map((id) => `<#${id}>`).join(' ');

/** The playback rule (playback-rule.ts), its refusal worded for what the member tried: changing the channels read. */
function requireChannelControl(interaction: ChatInputCommandInteraction | ButtonInteraction, voiceChannelId: string): void {
  try {
    requirePlaybackControl(interaction, voiceChannelId);
  } catch (error) {
    if (error instanceof UserError && error.code === 'playback.not_in_channel')
      throw new UserError('playback.not_in_channel_reading', { vars: { channel: `<#${voiceChannelId}>` } });
    throw error;
  }
}

/**
 * /join in a call the bot is in already: true when this answered it (a question, or a refusal
 * thrown as a UserError), false when the plain /join applies (the call reads no other text
 * channel yet, or reads this one already).
 */
export async function askToAlsoRead(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  session: SessionInfo,
  lang: Lang,
): Promise<boolean> {
  const textChannelId = interaction.channelId;
  const max = ctx.repos.guildSettings.get(session.guildId).textChannelsPerCall;
  const decision = ctx.voiceControl.channelAdd(session, textChannelId, max);
  if (decision === 'bind' || decision === 'already') return false;
  // What a call reads changes what everyone in it hears.
  requireChannelControl(interaction, session.channelId);
  if (decision === 'full' || decision === 'elsewhere') throw ctx.voiceControl.addRefusal(session, textChannelId, decision, max);
  const vars = { voice: `<#${session.channelId}>`, text: `<#${textChannelId}>` };
  const closeQuestion = (content: string) => interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
  const row = ctx.buttons.ask(
    {
      userId: interaction.user.id,
      choices: ['add', 'cancel'] as const,
      async answer(choice, click) {
        if (choice === 'cancel') return void (await click.update({ content: t(lang, 'voice.also_read_cancelled'), components: [] }));
        const after = await changed(click, lang, () => {
          requireChannelControl(click, session.channelId);
          return ctx.voiceControl.addChannel(session, textChannelId, ctx.repos.guildSettings.get(session.guildId).textChannelsPerCall);
        });
        if (!after) return;
        const channels = mentions(countedChannels(after.channelId, after.textChannelIds));
        // Said in the channel, in the clicking member's language as /join's own answer is.
        await Promise.all([
          closeQuestion(t(lang, 'voice.also_read_done', { ...vars, channels })),
          click.reply({ content: t(lang, 'voice.also_read_added', vars), allowedMentions: { parse: [] } }),
        ]);
      },
      expire: async () => void (await closeQuestion(t(lang, 'voice.question_expired'))),
    },
    { add: { label: t(lang, 'voice.also_read_button'), primary: true }, cancel: { label: t(lang, 'voice.also_read_cancel') } },
  );
  const question = t(lang, 'voice.also_read_question', {
    ...vars,
    channels: mentions(countedChannels(session.channelId, session.textChannelIds)),
    max,
    seconds: Math.round(ctx.buttons.timeoutMs / 1000),
  });
  // Read in that call only while everyone there can view it (auto-read.ts): said before the member chooses.
  const here = interaction.guild?.channels.cache.get(textChannelId);
  const hidden =
    here && interaction.guild && !audienceCanView(interaction.guild, here, { voiceChannelId: session.channelId, postChannelId: null });
  await interaction.reply({
    content: hidden ? `${question}\n${t(lang, 'voice.also_read_hidden_note', vars)}` : question,
    components: [row],
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
  return true;
}

/**
 * /leave typed in one of several text channels a call reads: asks whether to stop just this
 * channel or leave the call. True when it asked; false when /leave leaves as always.
 */
export async function askWhatToLeave(
  interaction: ChatInputCommandInteraction,
  ctx: BotContext,
  session: SessionInfo,
  lang: Lang,
): Promise<boolean> {
  const textChannelId = interaction.channelId;
  const facts = { voiceChannelId: session.channelId, bound: session.textChannelIds, channelId: textChannelId };
  if (decideChannelLeave(facts) === 'leave') return false;
  const vars = { voice: `<#${session.channelId}>`, text: `<#${textChannelId}>` };
  const others = countedChannels(session.channelId, session.textChannelIds).filter((id) => id !== textChannelId);
  const closeQuestion = (content: string) => interaction.editReply({ content, components: [], allowedMentions: { parse: [] } });
  const row = ctx.buttons.ask(
    {
      userId: interaction.user.id,
      choices: ['channel', 'leave'] as const,
      async answer(choice, click) {
        if (choice === 'leave') {
          const left = await changed(click, lang, async () => {
            requirePlaybackControl(click, session.channelId);
            return ctx.voiceControl.leave(session);
          });
          if (left === undefined) return;
          const content = t(lang, left ? 'voice.left' : 'voice.not_connected');
          await Promise.all([closeQuestion(content), click.reply({ content, allowedMentions: { parse: [] } })]);
          return;
        }
        const after = await changed(click, lang, () => {
          requireChannelControl(click, session.channelId);
          return ctx.voiceControl.removeChannel(session, textChannelId);
        });
        if (!after) return;
        // An auto-read channel is still read while the bot is in voice: said, so nobody is surprised.
        const stillRead = ctx.repos.autoRead.isAutoRead(session.guildId, textChannelId);
        const said = t(lang, 'voice.channel_stopped', vars);
        await Promise.all([
          closeQuestion(t(lang, 'voice.channel_stopped_done', vars)),
          click.reply({
            content: stillRead ? `${said}\n${t(lang, 'voice.channel_still_autoread')}` : said,
            allowedMentions: { parse: [] },
          }),
        ]);
      },
      expire: async () => void (await closeQuestion(t(lang, 'voice.question_expired'))),
    },
    {
      channel: { label: t(lang, 'voice.leave_channel_button'), primary: true },
      leave: { label: t(lang, 'voice.leave_all_button'), danger: true },
    },
  );
  await interaction.reply({
    content: t(lang, 'voice.leave_question', { ...vars, channels: mentions(others), seconds: Math.round(ctx.buttons.timeoutMs / 1000) }),
    components: [row],
    flags: MessageFlags.Ephemeral,
    allowedMentions: { parse: [] },
  });
  return true;
}

/**
 * Runs a change the member clicked for; when it is refused now (the call changed, the member left
 * it, the call filled up), the question becomes the refusal and nothing changes: undefined.
 */
async function changed<T>(click: ButtonInteraction, lang: Lang, change: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await change();
  } catch (error) {
    const known = describeFailure(lang, error);
    if (!known) throw error;
    await click.update({ content: known, components: [] });
    return undefined;
  }
}
