// `npm run bench:memory`'s dictionary part: the heap the bot's dictionaries hold, measured in a child
// process of their own (after a forced GC), for the code of this checkout and, in the same run, for
// the code before dictionary memory was bounded by size (BASELINE, extracted with `git archive`).
// Two measurements, each in a fresh process:
// - personal: MEMBERS members, each with ENTRIES personal entries of long words (50 characters,
//   readings of 100: the longest a word and a reading may be), each writing messages in one server,
//   read as the bot reads them (the server's, the member's and no global list). Target: the whole
//   dictionary heap under 64 MiB with 40 members.
// - global: an operator's 2,000-entry global list and GUILDS servers (ten times as many now) with
//   one entry of their own, one message read in each: what each active server costs beside the
//   global list.
// Asserts nothing; prints PASS or MISS against the target.
import { execFileSync, fork } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { mulberry32 } from '../test/support/prng.ts';

const ROOT = resolve(import.meta.dirname, '..');
/** The code before dictionary memory was bounded by size: merged lists per guild and member, a trie per list. */
const BASELINE = process.env.BENCH_DICT_BASELINE ?? '75f6e50';
const MEMBERS = Number(process.env.BENCH_DICT_MEMBERS ?? 40);
/** Members measured for the baseline (its heap grows about 55 MB a member); its figure for MEMBERS is extrapolated. */
const BASELINE_MEMBERS = Number(process.env.BENCH_DICT_BASELINE_MEMBERS ?? 10);
const ENTRIES = Number(process.env.BENCH_DICT_ENTRIES ?? 5_000);
/** Servers read beside the global list: the baseline's (megabytes each), and ten times as many now (a few hundred bytes each: more for a figure above the heap's noise). */
const GUILDS = Number(process.env.BENCH_DICT_GUILDS ?? 200);
const GLOBAL_ENTRIES = 2_000;
const TARGET_MIB = 64;
const MESSAGE = '今日の会議の資料を共有フォルダに置きました。確認をお願いします。';

type Part = 'personal' | 'global';
interface Measured {
  members?: number;
  guilds?: number;
  /** Heap after GC with the dictionaries read, minus the heap before any was read. */
  heapBytes: number;
  /** Milliseconds of one read (the lists fetched and the message read), first and second round. */
  firstMs: number;
  laterMs: number;
  /** Lists compiled during the reads (a version of the code that counts them). */
  compiled?: number;
}

const ja = (random: () => number, from: number, span: number, length: number) =>
  String.fromCodePoint(...Array.from({ length }, () => from + Math.floor(random() * span)));
/** `n` entries of long words: kanji words of 50 characters, hiragana readings of 100. */
function longEntries(random: () => number, n: number) {
  return Array.from({ length: n }, () => ({ word: ja(random, 0x4e00, 0x5000, 50), reading: ja(random, 0x3041, 0x56, 100) }));
}

if (process.argv.includes('--child')) await child(process.env.BENCH_DICT_PART as Part, process.env.BENCH_DICT_ROOT ?? ROOT);

/** One measurement, in this process: the code under `root`, its own database in a temp directory. */
async function child(part: Part, root: string): Promise<void> {
  const { openDatabase } = await import(join(root, 'src/db/database.ts'));
  const { createRepositories } = await import(join(root, 'src/db/repositories.ts'));
  // The baseline commit may predate src/speech/text/.
  const dictionary = await import(
    ['src/speech/text/dictionary.ts', 'src/speech/dictionary.ts'].map((p) => join(root, p)).find(existsSync)!
  );
  const gc = (globalThis as { gc?: () => void }).gc!;
  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const dir = mkdtempSync(join(tmpdir(), 'yomiage-bench-dict-'));
  const db = openDatabase(join(dir, 'bot.sqlite3'));
  const repos = createRepositories(db);
  const random = mulberry32(39);
  const compiled = () => (dictionary.dictionaryCompilations as (() => number) | undefined)?.();
  // What the bot does for each message: its author's lists in the server, then the text read with them.
  const read = (guildId: string, userId: string) => dictionary.applyDictionary(MESSAGE, repos.dictionary.list(guildId, userId));
  const timed = (fn: () => void) => {
    const started = performance.now();
    fn();
    return performance.now() - started;
  };
  let result: Measured;
  if (part === 'personal') {
    const members = Array.from({ length: Number(process.env.BENCH_DICT_N) }, (_, i) => `20000000000000${String(i).padStart(5, '0')}`);
    for (const m of members) await repos.personalDictionary.import(m, longEntries(random, ENTRIES), 'replace', undefined);
    await repos.dictionary.add('g1', '資料', 'しりょう', 'admin');
    read('g1', 'nobody'); // the server's own list, compiled before counting: what is counted is the members'
    const before = heap();
    const compiledBefore = compiled();
    const first = members.map((m) => timed(() => read('g1', m)));
    const later = members.map((m) => timed(() => read('g1', m)));
    const compiledAfter = compiled();
    result = {
      members: members.length,
      heapBytes: heap() - before,
      firstMs: median(first),
      laterMs: median(later),
      ...(compiledAfter === undefined ? {} : { compiled: compiledAfter - compiledBefore! }),
    };
  } else {
    // Ordinary words for the operator's list (4-12 characters, readings of 8-24).
    const global = Object.freeze(
      Array.from({ length: GLOBAL_ENTRIES }, (_, i) => ({
        word: `${ja(random, 0x4e00, 0x5000, 3 + (i % 10))}${i}`,
        reading: ja(random, 0x3041, 0x56, 8 + (i % 17)),
      })),
    );
    repos.dictionary.setGlobal({ entries: () => global, version: () => 1 });
    const guilds = Array.from({ length: Number(process.env.BENCH_DICT_N) }, (_, i) => `30000000000000${String(i).padStart(5, '0')}`);
    for (const g of guilds) await repos.dictionary.add(g, '資料', 'しりょう', 'admin');
    // The global list read once first: what is shared is not counted per guild.
    read('warm-up', 'nobody');
    const before = heap();
    const first = guilds.map((g) => timed(() => read(g, 'nobody')));
    const later = guilds.map((g) => timed(() => read(g, 'nobody')));
    result = { guilds: guilds.length, heapBytes: heap() - before, firstMs: median(first), laterMs: median(later) };
  }
  db.close();
  rmSync(dir, { recursive: true, force: true });
  process.send?.(result);
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? 0;
}

/** Runs one measurement in a fresh process. */
function measure(part: Part, root: string, n: number): Promise<Measured> {
  return new Promise((resolvePromise, reject) => {
    const worker = fork(join(ROOT, 'scripts/bench-memory-dictionaries.ts'), ['--child'], {
      execArgv: ['--experimental-strip-types', '--expose-gc', '--max-old-space-size=8192'],
      env: { ...process.env, BENCH_DICT_PART: part, BENCH_DICT_ROOT: root, BENCH_DICT_N: String(n) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let answer: Measured | undefined;
    worker.on('message', (m) => (answer = m as Measured));
    worker.once('exit', (code) => (answer ? resolvePromise(answer) : reject(new Error(`the ${part} measurement exited (${code})`))));
  });
}

/** The baseline's sources in a temp directory (its node_modules the checkout's), or undefined without git. */
function baselineRoot(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'yomiage-bench-baseline-'));
  try {
    const tar = execFileSync('git', ['-C', ROOT, 'archive', '--format=tar', BASELINE, 'src', 'migrations'], { maxBuffer: 1 << 28 });
    execFileSync('tar', ['-x', '-C', dir], { input: tar });
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    return dir;
  } catch (error) {
    console.log(`(the baseline ${BASELINE} could not be extracted: ${(error as Error).message.split('\n')[0]})`);
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

/** Both measurements, now and before, printed with the target. */
export async function benchDictionaries(): Promise<void> {
  const mib = (bytes: number) => bytes / 1024 / 1024;
  const before = baselineRoot();
  try {
    const now = { personal: await measure('personal', ROOT, MEMBERS), global: await measure('global', ROOT, GUILDS * 10) };
    // As many members as the baseline: what the cache keeps whole, read again without a fetch.
    const fewer = BASELINE_MEMBERS !== MEMBERS ? await measure('personal', ROOT, BASELINE_MEMBERS) : undefined;
    const then = before
      ? { personal: await measure('personal', before, BASELINE_MEMBERS), global: await measure('global', before, GUILDS) }
      : undefined;
    console.log(
      `\nDictionaries: ${MEMBERS} members with ${ENTRIES.toLocaleString('en')} personal entries each (words of 50 characters, readings of 100), read in one server`,
    );
    console.log('code                     members   dictionary heap   per member   first read   next read   lists compiled / reads');
    const row = (label: string, m: Measured) =>
      console.log(
        [
          label.padEnd(24),
          String(m.members).padStart(7),
          `${mib(m.heapBytes).toFixed(1)} MiB`.padStart(17),
          `${(mib(m.heapBytes) / m.members!).toFixed(2)} MiB`.padStart(12),
          `${m.firstMs.toFixed(1)} ms`.padStart(12),
          `${m.laterMs.toFixed(1)} ms`.padStart(11),
          (m.compiled === undefined ? '-' : `${m.compiled} / ${2 * m.members!}`).padStart(24),
        ].join(' '),
      );
    if (then) row(`before (${BASELINE})`, then.personal);
    if (fewer) row('now', fewer);
    row('now', now.personal);
    if (then && BASELINE_MEMBERS !== MEMBERS)
      console.log(
        `  before, ${MEMBERS} members (extrapolated): ~${((mib(then.personal.heapBytes) / BASELINE_MEMBERS) * MEMBERS).toFixed(0)} MiB`,
      );
    console.log(
      '  (a read fetches and compiles its lists when the cache does not keep them: DICTIONARY_CACHE_CHARS bounds what it keeps, least recently read first out)',
    );
    const heapMiB = mib(now.personal.heapBytes);
    console.log(
      `dictionary heap with ${MEMBERS} members: ${heapMiB.toFixed(1)} MiB (target < ${TARGET_MIB} MiB: ${heapMiB < TARGET_MIB ? 'PASS' : 'MISS'})`,
    );
    console.log(
      `\nAn operator's global list of ${GLOBAL_ENTRIES.toLocaleString('en')} entries, servers with one entry of their own, one message read in each`,
    );
    const perGuild = (m: Measured) =>
      `${(m.heapBytes / m.guilds! / 1024).toFixed(2)} KiB per server (${m.guilds} servers: ${mib(m.heapBytes).toFixed(2)} MiB in all), first read ${m.firstMs.toFixed(2)} ms`;
    if (then) console.log(`before (${BASELINE}): ${perGuild(then.global)}`);
    console.log(`now: ${perGuild(now.global)}`);
  } finally {
    if (before) rmSync(before, { recursive: true, force: true });
  }
}
