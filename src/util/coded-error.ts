/**
 * The one shape of an error in this project (README "How it is built", after undici's errors module):
 * a stable lowercase `code`, a default message per code from the subclass's own table
 * (`static messages`), `cause` in the options bag. A layer's errors.ts subclasses it:
 *
 *   export class WidgetError extends CodedError<WidgetErrorCode> {
 *     override name = 'WidgetError';
 *     static override readonly messages = WIDGET_ERROR_MESSAGES;
 *   }
 */
export interface CodedErrorOptions {
  /** Replaces the code's default message (never chat text or a secret). */
  message?: string;
  cause?: unknown;
}

export abstract class CodedError<Code extends string> extends Error {
  /** The subclass's default message of each code. */
  static readonly messages: Readonly<Record<string, string>> = {};
  readonly code: Code;
  constructor(code: Code, options: CodedErrorOptions = {}) {
    super(options.message ?? (new.target as typeof CodedError).messages[code], { cause: options.cause });
    this.code = code;
  }
}
