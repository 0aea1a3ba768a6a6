import { CodedError, type CodedErrorOptions } from '../util/coded-error.ts';

// Errors of src/ops (README "How it is built", Errors): messages for the operator, never a row's content or a secret.

export type TransferErrorCode = 'not_an_export' | 'schema_mismatch' | 'guild_exists' | 'foreign_row';

/** Moving guilds between hosts (npm run guild) cannot go on; nothing was written. */
export class TransferError extends CodedError<TransferErrorCode> {
  static override readonly messages: Readonly<Record<TransferErrorCode, string>> = {
    not_an_export: 'the file is not a guild export of this bot',
    schema_mismatch: 'the export and this database are of different bot versions: run the same version on both hosts',
    guild_exists: 'a guild of the export already has rows in this database: remove them first',
    foreign_row: 'the export holds a row of a guild it does not list',
  };
  override name = 'TransferError';
  constructor(code: TransferErrorCode, options: CodedErrorOptions = {}) {
    super(code, options);
  }
}
