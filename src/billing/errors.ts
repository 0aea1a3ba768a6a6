import { codedError } from '@yomiage/coded-error';
import type { BudgetRefusal } from './policy.ts';

// Errors of src/billing: one place, stable codes (docs/architecture.md, "Errors").

interface BillingErrorOptions {
  message?: string;
  guildId?: string;
  cause?: unknown;
}

/** Base error of src/billing; `code` is stable, `guildId` says where. */
export class BillingError extends codedError({
  budget_refused: 'character allowance exceeded',
  invalid_charge: 'a charge must name a guild, a user, an endpoint and a non-negative whole number of characters',
}) {
  override name = 'BillingError';
  readonly guildId: string | undefined;
  constructor(code: BillingErrorCode, options: BillingErrorOptions = {}) {
    super(code, options);
    this.guildId = options.guildId;
  }
}

export type BillingErrorCode = BillingError['code'];

/** The character budget said no; carries its numbers so the bot can tell the author. */
export class BudgetRefusedError extends BillingError {
  override name = 'BudgetRefusedError';
  readonly refusal: BudgetRefusal;
  constructor(options: Omit<BillingErrorOptions, 'message'> & { refusal: BudgetRefusal }) {
    const { refusal } = options;
    super('budget_refused', {
      ...options,
      message: `${BillingError.messages.budget_refused} (${refusal.scope}: ${refusal.used}+${refusal.requested} > ${refusal.limit})`,
    });
    this.refusal = refusal;
  }
}

/** A programming error in what was asked of the budget (not a refusal, which is a result). */
export class BudgetError extends BillingError {
  override name = 'BudgetError';
  constructor(options: BillingErrorOptions = {}) {
    super('invalid_charge', options);
  }
}
