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

/** A backup of the database (npm run backup) cannot be made; nothing was written. */
export class BackupError extends codedError({
  no_database: 'there is no database in DATA_DIR (the bot makes DATA_DIR/bot.sqlite3 at its first start): check DATA_DIR',
  target_exists: 'the backup file already exists (a backup never replaces a file): name another one',
  copy_failed: 'the copy could not be written (disk full, no permission)',
  copy_damaged: 'the copy failed its integrity check and was removed',
}) {
  override name = 'BackupError';
}
