// Child process of `npm run bench:dbwait` and of the non-blocking test: another process on the
// same SQLite file that takes the write lock and holds it. argv: file, holdMs, gapMs, rounds
// (0 = until killed). Prints "locked" each time it holds the lock, "done" at the end.
import Database from 'better-sqlite3';

const [file, holdArg, gapArg, roundsArg] = process.argv.slice(2);
const holdMs = Number(holdArg ?? 250);
const gapMs = Number(gapArg ?? 150);
const rounds = Number(roundsArg ?? 0);
const db = new Database(file!, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
const touch = db.prepare('UPDATE schema_migrations SET applied_at = applied_at WHERE version = 1');
const pause = new Int32Array(new SharedArrayBuffer(4));

for (let i = 0; rounds === 0 || i < rounds; i++) {
  db.exec('BEGIN IMMEDIATE');
  touch.run();
  process.stdout.write('locked\n');
  // Holds the lock without spinning, like a long write (a bulk delete, a backup, an O(n) query).
  Atomics.wait(pause, 0, 0, holdMs);
  db.exec('COMMIT');
  await new Promise((r) => setTimeout(r, gapMs));
}
db.close();
process.stdout.write('done\n');
