import { describe, expect, it } from 'vitest';
import { decideChannelAdd, decideChannelLeave, TEXT_CHANNELS_PER_CALL } from '../../src/domain/read-channels.ts';
import { readingStatus } from '../../src/discord/voice-control/voice-status.ts';
import { checkSettingsChange } from '../../src/usecases/settings.ts';
import { GUILD_SETTINGS_DEFAULTS } from '../../src/domain/guild-settings.ts';
import { UserError } from '../../src/i18n/errors.ts';
import { t } from '../../src/i18n/texts.ts';

// Several text channels in one call, as pure rules (GIVEN/THEN): what /join and /leave typed in a
// text channel do to a call already there, the voice channel status that names them, and the
// server's number (/config text-channels and the dashboard share its check).
const VOICE = 'vc';
const add = (bound: string[], channelId: string, over: { max?: number; readElsewhere?: boolean } = {}) =>
  decideChannelAdd({ voiceChannelId: VOICE, bound, channelId, max: over.max ?? 3, readElsewhere: over.readElsewhere ?? false });
const leave = (bound: string[], channelId: string) => decideChannelLeave({ voiceChannelId: VOICE, bound, channelId });

describe('/join typed in a text channel while the bot is in the member’s call', () => {
  it.each([
    ['the call reads no text channel', [], 'b', 'bind'],
    ['the call reads only its own chat (auto-join)', [VOICE], 'b', 'bind'],
    ['this channel is read already', ['a', 'b'], 'b', 'already'],
    ["typed in the voice channel's own chat", ['a'], VOICE, 'already'],
    ['another channel is read, under the number', ['a'], 'b', 'ask'],
    ['two are read, the number is 3', ['a', 'c'], 'b', 'ask'],
    ['the own chat and two are read: the own chat does not count', [VOICE, 'a', 'c'], 'b', 'ask'],
    ['three are read, the number is 3', ['a', 'c', 'd'], 'b', 'full'],
  ] as const)('GIVEN %s THEN %s', (_given, bound, channelId, expected) => {
    expect(add([...bound], channelId)).toBe(expected);
  });

  it('GIVEN a lowered number under what the call reads THEN nothing more is added (what it reads stays)', () => {
    expect(add(['a', 'c'], 'b', { max: 1 })).toBe('full');
    expect(add(['a', 'c'], 'a', { max: 1 })).toBe('already');
  });

  it('GIVEN the channel is read in another call THEN it is not added here (its messages go to one call)', () => {
    expect(add(['a'], 'b', { readElsewhere: true })).toBe('elsewhere');
  });
});

describe('/leave typed in a text channel of the call', () => {
  it.each([
    ['the only channel read', ['a'], 'a', 'leave'],
    ['one of two read', ['a', 'b'], 'b', 'ask'],
    ['one read beside the own chat only', [VOICE, 'a'], 'a', 'leave'],
    ["the voice channel's own chat", [VOICE, 'a', 'b'], VOICE, 'leave'],
    ['a channel the call does not read', ['a', 'b'], 'x', 'leave'],
  ] as const)('GIVEN %s THEN %s', (_given, bound, channelId, expected) => {
    expect(leave([...bound], channelId)).toBe(expected);
  });
});

describe('the voice channel status naming the channels read', () => {
  it('GIVEN two named channels THEN both are named in the server language', () => {
    expect(readingStatus('ja', ['雑談', 'ゲーム'], 0)).toBe('📖 #雑談、#ゲーム を読み上げ中');
    expect(readingStatus('en', ['chat', 'games'], 0)).toBe('📖 Reading #chat, #games aloud');
  });

  it('GIVEN a channel not everyone who sees the voice channel may view THEN it is counted, never named', () => {
    expect(readingStatus('ja', ['雑談'], 1)).toBe('📖 #雑談 ほか1チャンネルを読み上げ中');
    expect(readingStatus('en', ['chat'], 2)).toBe('📖 Reading #chat and 2 more channels aloud');
    expect(readingStatus('ja', [], 2)).toBe(t('ja', 'voice.status_reading_unnamed'));
  });

  it("GIVEN ten names of 100 characters THEN what fits Discord's 500 characters is named and the rest counted", () => {
    const names = Array.from({ length: 10 }, (_, i) => `${i}`.padEnd(100, 'x'));
    const status = readingStatus('en', names, 0);
    expect(status.length).toBeLessThanOrEqual(500);
    expect(status).toMatch(/^📖 Reading #0x+, #1x+, #2x+, #3x+ and 6 more channels aloud$/);
  });
});

describe('the number of text channels per call (/config text-channels, the dashboard)', () => {
  const facts = { isVoiceChannel: () => false };
  const refusal = (value: unknown) => {
    try {
      checkSettingsChange({ textChannelsPerCall: value as number }, facts);
    } catch (error) {
      return error instanceof UserError ? t('ja', error.code, error.vars) : String(error);
    }
    return 'accepted';
  };

  it('GIVEN a server that never set it THEN a call reads 3', () => {
    expect(GUILD_SETTINGS_DEFAULTS.textChannelsPerCall).toBe(TEXT_CHANNELS_PER_CALL.default);
    expect(TEXT_CHANNELS_PER_CALL.default).toBe(3);
  });

  it('GIVEN 1 or 10 THEN accepted; 0, 11, 2.5 or text THEN refused naming the setting and its bounds, in the member language', () => {
    expect(checkSettingsChange({ textChannelsPerCall: 1 }, facts)).toEqual({ textChannelsPerCall: 1 });
    expect(checkSettingsChange({ textChannelsPerCall: 10 }, facts)).toEqual({ textChannelsPerCall: 10 });
    for (const bad of [0, 11, 2.5, '3', Number.NaN])
      expect(refusal(bad)).toBe('text-channels は 1〜10 の範囲で指定してください。何も変更していません。');
  });
});
