import { CodedError } from '@yomiage/coded-error';
import type { MessageKey, Vars } from './texts.ts';

/**
 * An outcome the user must be told about: `code` is the i18n key of the message,
 * `vars` its placeholders. The dispatcher turns it into an ephemeral reply in the user's language.
 */
export class UserError extends CodedError<MessageKey> {
  override name = 'UserError';
  readonly vars: Vars;
  constructor(code: MessageKey, options: { vars?: Vars; cause?: unknown } = {}) {
    super(code, { message: code, cause: options.cause });
    this.vars = options.vars ?? {};
  }
}
