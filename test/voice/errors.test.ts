import { describe, expect, it } from 'vitest';
import { VoiceSessionError, type VoiceSessionErrorCode } from '../../src/voice/errors.ts';

const VOICE_ERROR_MESSAGES = VoiceSessionError.messages;

describe('voice errors, one table', () => {
  it.each(Object.keys(VOICE_ERROR_MESSAGES) as VoiceSessionErrorCode[])(
    '%s: stable code, its default message, the guild and the cause',
    (code) => {
      const cause = new Error('underneath');
      const error = new VoiceSessionError(code, { guildId: 'g1', cause });
      expect(error).toBeInstanceOf(Error);
      expect(error).toMatchObject({ name: 'VoiceSessionError', code, guildId: 'g1', message: VOICE_ERROR_MESSAGES[code], cause });
      expect(error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
    },
  );
});
