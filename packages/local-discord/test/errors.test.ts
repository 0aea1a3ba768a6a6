import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalDiscordError } from '../src/errors.ts';
import { DEFAULT_IDS, startFakeDiscord, type FakeDiscord } from '../src/server.ts';
import { startFakeVoiceServer, type FakeVoiceServer } from '../src/voice/server.ts';

type LocalDiscordErrorCode = LocalDiscordError['code'];

describe('LocalDiscordError', () => {
  it.each(Object.entries(LocalDiscordError.messages) as [LocalDiscordErrorCode, string][])(
    'GIVEN code %s THEN name, code, the default message and the cause are set',
    (code, message) => {
      const cause = new Error('underlying');
      const error = new LocalDiscordError(code, { cause });
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe('LocalDiscordError');
      expect(error.code).toBe(code);
      expect(error.message).toBe(message);
      expect(error.cause).toBe(cause);
    },
  );
});

describe('misuse of the test-facing API is a LocalDiscordError with a specific code', () => {
  let discord: FakeDiscord;
  let voice: FakeVoiceServer;
  beforeAll(async () => {
    discord = await startFakeDiscord({ waitTimeoutMs: 20 });
    voice = await startFakeVoiceServer();
  });
  afterAll(async () => {
    await discord.close();
    await voice.close();
  });

  const code = (promise: Promise<unknown>) =>
    promise.then(
      () => 'resolved',
      (e: unknown) => (e instanceof LocalDiscordError ? e.code : String(e)),
    );

  const cases: [string, () => unknown, LocalDiscordErrorCode][] = [
    [
      'a message before any client identified',
      () => discord.sendMessage({ channelId: DEFAULT_IDS.general, author: { id: DEFAULT_IDS.alice, username: 'alice' }, content: 'hi' }),
      'no_session',
    ],
    [
      'a channel named with the wrong guild',
      () =>
        discord.sendMessage({
          guildId: '1',
          channelId: DEFAULT_IDS.general,
          author: { id: DEFAULT_IDS.alice, username: 'alice' },
          content: 'hi',
        }),
      'unknown_channel',
    ],
    ['a voice move in an unknown guild', () => discord.setVoiceState(DEFAULT_IDS.alice, '1', DEFAULT_IDS.voice), 'unknown_guild'],
    ['a wait nothing satisfies', () => discord.waitForMessage(), 'timeout'],
    ['a voice wait nothing satisfies', () => voice.waitForEvent('identify', () => true, 20), 'timeout'],
    ['a close of a voice websocket that is not open', async () => voice.closeConnection(DEFAULT_IDS.guild, 4014), 'no_voice_connection'],
    [
      'an invalid commit for a call that does not exist',
      async () => voice.dave.sendInvalid(DEFAULT_IDS.guild, DEFAULT_IDS.bot, 'commit'),
      'dave_misuse',
    ],
  ];
  it.each(cases)('GIVEN %s THEN %s', async (_what, act, expected) => {
    expect(await code(Promise.resolve().then(() => act()))).toBe(expected);
  });
});
