import { codedError } from '@yomiage/coded-error';

// Errors of src/ops (docs/architecture.md, "Errors"): messages for the operator, never a row's content or a secret.

/** Moving guilds between hosts (npm run guild) cannot go on; nothing was written. */
export class TransferError extends codedError({
  not_an_export: 'the file is not a guild export of this bot',
  schema_mismatch: 'the export and this database are of different bot versions: run the same version on both hosts',
  guild_exists: 'a guild of the export already has rows in this database: remove them first',
  invalid_export: 'the file is not what export writes for this bot version (a table, row or field is wrong)',
}) {
  override name = 'TransferError';
}
