import { codedError } from '@yomiage/coded-error';

// Errors of src/speech: one place, stable codes (docs/architecture.md, "Errors"). The budget's
// refusals are src/billing's (src/billing/errors.ts).

interface SpeechErrorOptions {
  message?: string;
  guildId?: string;
  cause?: unknown;
}

/** Base error of src/speech; `code` is stable, `guildId` says where. */
export class SpeechError extends codedError({
  aborted: 'speech was cancelled',
  closed: 'the speech queue is closed',
  synthesis_failed: 'speech synthesis failed',
}) {
  override name = 'SpeechError';
  readonly guildId: string | undefined;
  constructor(code: SpeechErrorCode, options: SpeechErrorOptions = {}) {
    super(code, options);
    this.guildId = options.guildId;
  }
}

export type SpeechErrorCode = SpeechError['code'];
