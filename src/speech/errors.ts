import type { BudgetRefusal } from './budget.ts';

// Errors of src/speech: one place, stable codes (STYLE 4).

export type SpeechErrorCode = 'budget_refused' | 'aborted' | 'closed' | 'synthesis_failed';

const MESSAGES: Record<SpeechErrorCode, string> = {
  budget_refused: 'character allowance exceeded',
  aborted: 'speech was cancelled',
  closed: 'the speech queue is closed',
  synthesis_failed: 'speech synthesis failed',
};

/** Base error of src/speech; `code` is stable, `guildId` says where. */
export class SpeechError extends Error {
  override name = 'SpeechError';
  readonly code: SpeechErrorCode;
  readonly guildId: string | undefined;
  constructor(code: SpeechErrorCode, options: { message?: string; guildId?: string; cause?: unknown } = {}) {
    super(options.message ?? MESSAGES[code], { cause: options.cause });
    this.code = code;
    this.guildId = options.guildId;
  }
}

/** The character budget said no; carries its numbers so the bot can tell the author. */
export class BudgetRefusedError extends SpeechError {
  override name = 'BudgetRefusedError';
  readonly refusal: BudgetRefusal;
  constructor(refusal: BudgetRefusal, guildId?: string) {
    super('budget_refused', {
      message: `character allowance exceeded (${refusal.scope}: ${refusal.used}+${refusal.requested} > ${refusal.limit})`,
      ...(guildId === undefined ? {} : { guildId }),
    });
    this.refusal = refusal;
  }
}

