import { ApplicationCommandOptionType, InteractionContextType, type RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord.js';
import { choice, described, named, type Command } from '../../src/discord/interactions/command.ts';
import { requireGuild } from '../../src/discord/interactions/guards.ts';
import { langOf } from '../../src/i18n/texts.ts';
import { readArgs } from '../../src/discord/interactions/command-args.ts';
import { requestNarrate } from './narrate-request.ts';
import { ADVANCED_VOICES } from '../../src/tts/validation.ts';
import { advancedVoiceFacts } from '../../src/tts/voices.ts';
import { voiceLabel } from '../../src/discord/interactions/voice-choices.ts';

const data = {
  ...named('narrate', 'ナレーション'),
  ...described('Advanced speech (Beta): voice, tone, model and seed', '高度な音声合成（ベータ）：声・トーン・モデル・シード'),
  contexts: [InteractionContextType.Guild],
  options: [
    {
      type: ApplicationCommandOptionType.String,
      ...named('text', '文章'),
      ...described('What to say (10 to 3000 characters)', '読み上げる文章（10〜3000文字）'),
      required: true,
      min_length: 10,
      max_length: 3000,
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('voice', '声'),
      ...described('One of the 25 advanced voices (default Ruby)', '25種類の声から選択（省略時 Ruby）'),
      // Exactly 25: Discord's maximum number of choices.
      // Each named with its gender ("Anna · female"); the value stays the voice's name.
      choices: ADVANCED_VOICES.map((v) =>
        choice(voiceLabel('en', v, advancedVoiceFacts(v)), voiceLabel('ja', v, advancedVoiceFacts(v)), v),
      ),
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('tone', 'トーン'),
      ...described('Speaking style, e.g. "calm, like a news anchor"', '話し方の指示（例: 落ち着いたニュースキャスター風）'),
      max_length: 100,
    },
    {
      type: ApplicationCommandOptionType.String,
      ...named('model', 'モデル'),
      ...described('flash (fast) or pro (higher quality)', 'flash（速い）または pro（高品質）'),
      choices: [choice('flash (fast)', 'flash（速い）', 'flash'), choice('pro (higher quality)', 'pro（高品質）', 'pro')],
    },
    {
      type: ApplicationCommandOptionType.Number,
      ...named('speed', '速さ'),
      ...described('Speed 0.5 to 1.5', '速さ 0.5〜1.5'),
      min_value: 0.5,
      max_value: 1.5,
    },
    {
      type: ApplicationCommandOptionType.Number,
      ...named('pitch', '高さ'),
      ...described('Pitch -1.0 to 1.0', '高さ -1.0〜1.0'),
      min_value: -1,
      max_value: 1,
    },
    {
      type: ApplicationCommandOptionType.Integer,
      ...named('seed', 'シード'),
      ...described('Fixes the timbre; reuse a seed to repeat a result', '声質を固定します。同じシードで結果を再現できます'),
      min_value: -2147483648,
      max_value: 2147483647,
    },
  ],
} as const satisfies RESTPostAPIChatInputApplicationCommandsJSONBody;

export default {
  data,
  async execute(interaction, ctx) {
    const guildId = requireGuild(interaction);
    const { text, voice, tone, model, speed, pitch, seed } = readArgs(interaction, data.options);
    await requestNarrate(ctx.requests, interaction, {
      guildId,
      lang: langOf(interaction.locale),
      text,
      voice,
      tone,
      model,
      speed,
      pitch,
      seed,
    });
  },
} satisfies Command;
