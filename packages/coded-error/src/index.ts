/**
 * The one shape of an error in this project (docs/architecture.md, "Errors"; after undici's errors module):
 * a stable lowercase `code`, a default message per code from the class's own table
 * (`static messages`), `cause` in the options bag. A layer's errors.ts declares its class from its
 * table, so every code is written once, with its message:
 *
 *   export class WidgetError extends codedError({
 *     widget_missing: 'no such widget',
 *   }) {
 *     override name = 'WidgetError';
 *   }
 *
 * Its code type is `WidgetError['code']`; a module exports a name for it only when its own code
 * needs one (a constructor that takes a narrower set of codes, say).
 */
export interface CodedErrorOptions {
  /** Replaces the code's default message (never chat text or a secret). */
  message?: string | undefined;
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

/** The base class of an error whose codes are the keys of `messages`, each with its default message. */
export function codedError<const Messages extends Readonly<Record<string, string>>>(messages: Messages) {
  return class extends CodedError<Extract<keyof Messages, string>> {
    static override readonly messages: Messages = messages;
  };
}
