import { codedError } from '@yomiage/coded-error';

/** Something went wrong on the bot's side of Discord (not the user's doing: that is UserError, src/i18n/errors.ts). */
export class BotError extends codedError({
  not_delivered: 'Discord did not take the audio',
  invalid_command_module: 'a command module must default-export { data, execute } (a Command)',
  duplicate_command: 'two command modules use the same command name',
  unknown_subcommand: 'a subcommand the command does not handle',
  extra_account_down: 'an extra account (EXTRA_DISCORD_TOKENS) cannot log in, or the gateway ended its connection for good',
}) {
  override name = 'BotError';
}
