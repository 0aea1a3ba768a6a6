import { CodedError, codedError } from '@yomiage/coded-error';
import type { MessageKey, Vars } from './i18n.ts';

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

/** Something went wrong on the bot's side of Discord (not the user's doing: that is UserError). */
export class BotError extends codedError({
  not_delivered: 'Discord did not take the audio',
  invalid_command_module: 'a command module must default-export { data, execute } (a Command)',
  duplicate_command: 'two command modules use the same command name',
  unknown_subcommand: 'a subcommand the command does not handle',
  extra_account_down: 'an extra account (EXTRA_DISCORD_TOKENS) cannot log in, or the gateway ended its connection for good',
}) {
  override name = 'BotError';
}
