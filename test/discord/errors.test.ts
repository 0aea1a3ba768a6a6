import { describe, expect, it } from 'vitest';
import { BotError } from '../../src/discord/errors.ts';
import { UserError } from '../../src/i18n/errors.ts';

type BotErrorCode = BotError['code'];

const BOT_ERROR_MESSAGES = BotError.messages;

describe('errors of the Discord side, one table', () => {
  it.each(Object.keys(BOT_ERROR_MESSAGES) as BotErrorCode[])('BotError %s: stable code, its default message, the cause', (code) => {
    const cause = new Error('underneath');
    const error = new BotError(code, { cause });
    expect(error).toMatchObject({ name: 'BotError', code, message: BOT_ERROR_MESSAGES[code], cause });
    expect(error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('UserError: the code is the i18n key, with its placeholders and the cause', () => {
    const cause = new Error('underneath');
    expect(new UserError('queue.member_full', { vars: { limit: 500 }, cause })).toMatchObject({
      name: 'UserError',
      code: 'queue.member_full',
      vars: { limit: 500 },
      cause,
    });
    expect(new UserError('voice.join_first').vars).toEqual({});
  });
});
