import { codedError } from '@yomiage/coded-error';
import type { BudgetRefusal } from '../billing/policy.ts';

// Errors of src/speech: one place, stable codes (docs/architecture.md, "Errors").

interface SpeechErrorOptions {
  message?: string;
  guildId?: string;
  cause?: unknown;
}

/** Base error of src/speech; `code` is stable, `guildId` says where. */
export class SpeechError extends codedError({
  budget_refused: 'character allowance exceeded',
  invalid_charge: 'a charge must name a guild, a user, an endpoint and a non-negative whole number of characters',
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

/** The character budget said no; carries its numbers so the bot can tell the author. */
export class BudgetRefusedError extends SpeechError {
  override name = 'BudgetRefusedError';
  readonly refusal: BudgetRefusal;
  constructor(options: Omit<SpeechErrorOptions, 'message'> & { refusal: BudgetRefusal }) {
    const { refusal } = options;
    super('budget_refused', {
      ...options,
      message: `${SpeechError.messages.budget_refused} (${refusal.scope}: ${refusal.used}+${refusal.requested} > ${refusal.limit})`,
    });
    this.refusal = refusal;
  }
}

/** A programming error in what was asked of the budget (not a refusal, which is a result). */
export class BudgetError extends SpeechError {
  override name = 'BudgetError';
  constructor(options: SpeechErrorOptions = {}) {
    super('invalid_charge', options);
  }
}
