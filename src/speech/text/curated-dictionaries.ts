import { readdirSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import type { Logger } from '../../util/log.ts';
import { CURATED_NAME, MAX_CURATED_LISTS } from '../../domain/shared-dictionaries.ts';
import type { ReadingPair } from '../../db/dictionary-cache.ts';
import { GlobalDictionary, type DescribeDictionaryProblem } from './global-dictionary.ts';

// The operator's curated dictionaries (CURATED_DICTIONARIES_DIR): a folder of dictionary files (JSON,
// CSV or TSV, as /dictionary import reads them, with its limits), each one list named by its file
// ("gaming.tsv" is "gaming"), which a server's admins may follow. Read at start (a broken file stops
// start-up, naming it) and polled: a file added, changed or removed is taken in (a broken edit is
// logged and that list's previous entries stay). Each list is one frozen array, read by every
// server that follows it.

const EXTENSIONS = new Set(['.json', '.csv', '.tsv']);

type CuratedLoad = { ok: true; lists: number } | { ok: false; problems: string[] };

export class CuratedDictionaries {
  readonly #dir: string;
  readonly #logger: Logger;
  readonly #describe: DescribeDictionaryProblem;
  /** name -> its file's list (as last read without a problem). */
  readonly #lists = new Map<string, GlobalDictionary>();
  /** name -> the file's size and time when last read (broken or not: a problem is said once per change). */
  readonly #seen = new Map<string, string>();

  constructor(options: { dir: string; logger: Logger; describe: DescribeDictionaryProblem }) {
    this.#dir = options.dir;
    this.#logger = options.logger;
    this.#describe = options.describe;
  }

  /** The list's entries, or undefined when there is none of that name. */
  entries(name: string): readonly ReadingPair[] | undefined {
    return this.#lists.get(name)?.entries();
  }

  names(): readonly string[] {
    return [...this.#lists.keys()].sort();
  }

  /** Reads every list; any problem (a file, a name, too many lists) is returned and nothing is kept from a broken file. */
  load(): CuratedLoad {
    const problems = this.#scan(() => {});
    return problems.length > 0 ? { ok: false, problems } : { ok: true, lists: this.#lists.size };
  }

  /** Polls the folder every `intervalMs`; returns the stop. */
  watch(intervalMs = 2_000): () => void {
    const timer = setInterval(() => {
      this.#scan((file, problem) =>
        this.#logger.warn({ file, problem }, 'curated dictionary file has problems; keeping what was read before'),
      );
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }

  /** Takes in what changed in the folder; `report` hears each problem. Returns the problems' list for `load`. */
  #scan(report: (file: string, problem: string) => void): string[] {
    const problems: string[] = [];
    const say = (file: string, problem: string) => (problems.push(`${file}: ${problem}`), report(file, problem));
    let files: string[];
    try {
      files = readdirSync(this.#dir).filter((f) => EXTENSIONS.has(extname(f).toLowerCase()));
    } catch (error) {
      say(this.#dir, `cannot read the folder (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
      return problems;
    }
    const present = new Set<string>();
    for (const file of files.sort()) {
      const name = file.slice(0, -extname(file).length).toLowerCase();
      // A file that cannot be a list is said once, not at every poll.
      const refuse = (problem: string) => {
        if (!this.#seen.has(`\0${file}`)) say(file, problem);
        this.#seen.set(`\0${file}`, problem);
      };
      if (!CURATED_NAME.test(name)) {
        refuse('a list is named by its file: letters, digits, - and _ (at most 32)');
        continue;
      }
      if (present.has(name)) {
        refuse(`another file is the list "${name}" already`);
        continue;
      }
      if (present.size >= MAX_CURATED_LISTS) {
        refuse(`at most ${MAX_CURATED_LISTS} curated lists`);
        continue;
      }
      present.add(name);
      const path = join(this.#dir, file);
      let seen: string;
      try {
        const stat = statSync(path);
        seen = `${stat.size}:${stat.mtimeMs}`;
      } catch {
        continue; // removed meanwhile: the next scan sees it gone
      }
      if (this.#seen.get(name) === seen) continue;
      this.#seen.set(name, seen);
      const kept = this.#lists.get(name);
      const list = kept ?? new GlobalDictionary({ path, logger: this.#logger, describe: this.#describe });
      const loaded = list.load();
      if (!loaded.ok) {
        for (const problem of loaded.problems.slice(0, 10)) say(file, problem);
        continue;
      }
      this.#lists.set(name, list);
      if (kept) this.#logger.info({ list: name, entries: loaded.count }, 'curated dictionary reloaded');
    }
    for (const name of [...this.#seen.keys()]) {
      if (present.has(name) || name.startsWith('\0')) continue;
      this.#seen.delete(name);
      if (this.#lists.delete(name)) this.#logger.info({ list: name }, 'curated dictionary removed');
    }
    return problems;
  }
}
