import type { MessageKey, Vars } from './i18n.ts';

/**
 * An outcome the user must be told about (STYLE.md #5): `code` is the i18n key of the message,
 * `vars` its placeholders. The dispatcher turns it into an ephemeral reply in the user's language.
 */
export class UserError extends Error {
  override name = 'UserError';
  readonly code: MessageKey;
  readonly vars: Vars;
  constructor(code: MessageKey, options: { vars?: Vars; cause?: unknown } = {}) {
    super(code, { cause: options.cause });
    this.code = code;
    this.vars = options.vars ?? {};
  }
}
