import { parseArgs } from 'node:util';
import { CodedError } from '@yomiage/coded-error';
import { backupDatabase, defaultBackupFile } from './backup.ts';

// `npm run backup -- [FILE]`: a consistent copy of DATA_DIR's database, taken while the bot runs
// (backup.ts). Reads DATA_DIR from the environment or .env, like the bot.
const USAGE = `usage: npm run backup -- [FILE]
Copies DATA_DIR/bot.sqlite3 (DATA_DIR default ./data) while the bot runs, to FILE or by default
DATA_DIR/backups/bot-<UTC time>.sqlite3, owner-only. It holds queued chat text and interaction
tokens: keep it like the database. Restoring it: docs/operating.md, "Backup and restore".`;

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({ allowPositionals: true, options: { help: { type: 'boolean' } } });
  } catch (error) {
    return fail(`${(error as Error).message}\n${USAGE}`);
  }
})();
if (values.help) fail(USAGE, 0);
if (positionals.length > 1) fail(USAGE);

const dataDir = process.env.DATA_DIR?.trim() || './data';
try {
  const made = backupDatabase(dataDir, positionals[0] ?? defaultBackupFile(dataDir, new Date()));
  console.log(`backed up ${dataDir}/bot.sqlite3 to ${made.file} (${made.bytes} bytes, schema version ${made.schema}, integrity ok)`);
} catch (error) {
  if (error instanceof CodedError) fail(`backup failed: ${error.message} (${error.code})`, 1);
  throw error;
}
