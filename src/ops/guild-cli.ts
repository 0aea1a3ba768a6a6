import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openDatabase } from '../db/database.ts';
import { parseShardIds } from '../util/shards.ts';
import { CodedError } from '@yomiage/coded-error';
import { exportGuilds, guildsOfShards, importGuilds, removeGuilds } from './guild-transfer.ts';

// `npm run guild -- <export|import|remove> ...`: moves guilds' rows between hosts with their
// shard range (docs/scaling.md). Works on DATA_DIR's database (default ./data), like the bot.
const USAGE = `usage:
  npm run guild -- export <guild id>... [--out FILE]
  npm run guild -- export --shards 4-7 --shard-count 8 [--out FILE]
  npm run guild -- import FILE
  npm run guild -- remove <guild id>... | --shards 4-7 --shard-count 8
Works on DATA_DIR/bot.sqlite3 (DATA_DIR default ./data). Without --out, export writes to stdout.
The export holds unfinished /narrate job tokens and queued chat text: keep it like the database.`;

function fail(message: string, code = 2): never {
  console.error(message);
  process.exit(code);
}

const { values, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: { out: { type: 'string' }, shards: { type: 'string' }, 'shard-count': { type: 'string' }, help: { type: 'boolean' } },
    });
  } catch (error) {
    return fail(`${(error as Error).message}\n${USAGE}`);
  }
})();
const [command, ...args] = positionals;
if (values.help || !command) fail(USAGE, values.help ? 0 : 2);

const db = openDatabase(join(process.env.DATA_DIR?.trim() || './data', 'bot.sqlite3'));

function selected(): string[] {
  if (values.shards === undefined) {
    if (args.length === 0 || args.some((g) => !/^\d{1,20}$/.test(g)))
      fail(`name guild ids (numbers), or --shards with --shard-count\n${USAGE}`);
    return args;
  }
  const ids = parseShardIds(values.shards);
  const count = Number(values['shard-count']);
  if (!ids.ok) fail(`--shards: ${ids.problem}`);
  if (!Number.isInteger(count) || count < 1) fail("--shards needs --shard-count (the bot's SHARD_COUNT)");
  return guildsOfShards(db, ids.ids, count);
}

try {
  if (command === 'export') {
    const data = exportGuilds(db, selected());
    const text = JSON.stringify(data, null, 1) + '\n';
    if (values.out) writeFileSync(values.out, text, { mode: 0o600 });
    else process.stdout.write(text);
    const rows = Object.values(data.tables).reduce((n, t) => n + t.length, 0);
    console.error(`exported ${data.guilds.length} guild(s), ${rows} row(s)${values.out ? ` to ${values.out}` : ''}`);
  } else if (command === 'import') {
    if (args.length !== 1) fail(USAGE);
    let data: unknown;
    try {
      data = JSON.parse(readFileSync(args[0]!, 'utf8'));
    } catch (error) {
      fail(`cannot read ${args[0]}: ${(error as Error).message}`);
    }
    // Checked against what export writes before anything is written (guild-export-schema.ts).
    const { guilds, rows } = importGuilds(db, data);
    console.error(`imported ${guilds} guild(s), ${rows} row(s)`);
  } else if (command === 'remove') {
    const { rows } = removeGuilds(db, selected());
    console.error(`removed ${rows} row(s)`);
  } else {
    fail(`unknown command "${command}"\n${USAGE}`);
  }
} catch (error) {
  if (error instanceof CodedError) fail(`${error.message} (${error.code}); nothing was written`, 1);
  throw error;
} finally {
  db.close();
}
