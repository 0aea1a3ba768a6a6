import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { basename } from 'node:path';
import type { Logger } from '../../util/log.ts';
import type { DictionaryEntry } from './dictionary.ts';
import { parseDictionaryFile, type DictionaryFileFormat, type DictionaryFileProblem } from './dictionary-file.ts';

// The operator's bot-wide dictionary: a file (JSON, CSV or TSV, as /dictionary import
// reads) named by GLOBAL_DICTIONARY_FILE, applied under each server's own entries. Read at start
// (a broken file stops start-up, naming its problems) and again whenever it changes (a broken
// edit is logged and the previous entries stay).

type GlobalDictionaryLoad = { ok: true; count: number } | { ok: false; problems: string[] };

/** Words a file problem for the operator (the texts live with the UI's, above this layer). */
export type DescribeDictionaryProblem = (format: DictionaryFileFormat | undefined, problem: DictionaryFileProblem) => string;

export class GlobalDictionary {
  readonly #path: string;
  readonly #logger: Logger;
  readonly #describe: DescribeDictionaryProblem;
  /** One frozen array, replaced on each reload: every guild reads (and the matcher compiles) this one list. */
  #entries: readonly DictionaryEntry[] = [];

  constructor(options: { path: string; logger: Logger; describe: DescribeDictionaryProblem }) {
    this.#path = options.path;
    this.#logger = options.logger;
    this.#describe = options.describe;
  }

  entries(): readonly DictionaryEntry[] {
    return this.#entries;
  }

  /** Reads the file; keeps the previous entries when it cannot be read or has problems. */
  load(): GlobalDictionaryLoad {
    let bytes: Buffer;
    try {
      bytes = readFileSync(this.#path);
    } catch (error) {
      return { ok: false, problems: [`cannot read the file (${(error as NodeJS.ErrnoException).code ?? 'error'})`] };
    }
    const parsed = parseDictionaryFile(basename(this.#path), bytes);
    if (!parsed.ok) {
      return { ok: false, problems: (parsed.file ? [parsed.file] : parsed.rows).map((p) => this.#describe(parsed.format, p)) };
    }
    this.#entries = Object.freeze(parsed.entries);
    return { ok: true, count: parsed.entries.length };
  }

  /** Reloads when the file changes (polled: an editor's rename-and-replace is seen too); returns the stop. */
  watch(intervalMs = 2_000): () => void {
    const onChange = (now: { mtimeMs: number; size: number }, before: { mtimeMs: number; size: number }) => {
      if (now.mtimeMs === before.mtimeMs && now.size === before.size) return;
      const result = this.load();
      if (result.ok) this.#logger.info({ entries: result.count }, 'global dictionary reloaded');
      else
        this.#logger.warn({ problems: result.problems.slice(0, 10) }, 'global dictionary file has problems; keeping the previous entries');
    };
    watchFile(this.#path, { interval: intervalMs, persistent: false }, onChange);
    return () => unwatchFile(this.#path, onChange);
  }
}
