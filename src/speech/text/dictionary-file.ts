/**
 * Dictionary import and export files: JSON and CSV (word, reading), and
 * the simple two-column CSV/TSV other read-aloud bots export. Pure: bytes in, entries or
 * line-numbered problems out; the command decides what to do with them.
 */
import { DICTIONARY_MAX_ENTRIES } from '../../db/keyed-dictionary.ts';
import { DICTIONARY_MAX_PATTERNS, isPatternWord } from '../../domain/dictionary-patterns.ts';
import { parseDictionaryEntry, type DictionaryEntry, type DictionaryErrorIdentifier } from './dictionary.ts';

/** A file holds at most as many entries as a server's dictionary (DICTIONARY_MAX_ENTRIES, checked again when written). */
export const DICTIONARY_FILE_LIMITS = {
  maxBytes: 1_048_576,
  maxEntries: DICTIONARY_MAX_ENTRIES,
  maxPatterns: DICTIONARY_MAX_PATTERNS,
} as const;

export type DictionaryFileFormat = 'json' | 'csv' | 'tsv';

/** What is wrong with the file as a whole (the i18n keys the command shows). */
type DictionaryFileErrorIdentifier =
  'dictfile.too_large' | 'dictfile.too_many' | 'dictfile.too_many_patterns' | 'dictfile.not_utf8' | 'dictfile.bad_json' | 'dictfile.empty';

/** What is wrong with one row (the file's line, or the JSON entry's position). */
type DictionaryRowErrorIdentifier =
  DictionaryErrorIdentifier | 'dictfile.columns' | 'dictfile.unclosed_quote' | 'dictfile.duplicate' | 'dictfile.bad_entry';

interface DictionaryRowError {
  /** 1-based line of a CSV/TSV row, or 1-based position of a JSON entry. */
  at: number;
  identifier: DictionaryRowErrorIdentifier;
  context: { max?: number; found?: number; first?: number; position?: number };
}

interface DictionaryFileError {
  identifier: DictionaryFileErrorIdentifier;
  context: { max?: number; found?: number };
}

/** A problem of the file as a whole or of one row; src/usecases/dictionary-problems.ts words it. */
export type DictionaryFileProblem = DictionaryFileError | DictionaryRowError;

type DictionaryFileResult =
  | { ok: true; format: DictionaryFileFormat; entries: DictionaryEntry[] }
  | { ok: false; format?: DictionaryFileFormat; file?: DictionaryFileError; rows: DictionaryRowError[] };

const HEADER_WORD = /^(word|words|単語|語句|key|before|surface|置換前)$/i;
const HEADER_READING = /^(reading|読み|読み方|よみ|value|yomi|after|置換後)$/i;

/** Which format a file is, from its name and first characters. */
export function detectFormat(filename: string, text: string): DictionaryFileFormat {
  // The content decides first: exports are often renamed (a .txt, or JSON saved as .csv).
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start.startsWith('[') || start.startsWith('{') || filename.toLowerCase().endsWith('.json')) return 'json';
  if (filename.toLowerCase().endsWith('.tsv')) return 'tsv';
  const firstLine = start.split('\n', 1)[0] ?? '';
  return firstLine.includes('\t') ? 'tsv' : 'csv';
}

/** Reads an import file: every row checked, every problem listed with its line; entries only when none. */
export function parseDictionaryFile(filename: string, bytes: Uint8Array): DictionaryFileResult {
  if (bytes.length > DICTIONARY_FILE_LIMITS.maxBytes)
    return fileError('dictfile.too_large', { max: DICTIONARY_FILE_LIMITS.maxBytes, found: bytes.length });
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    return fileError('dictfile.not_utf8', {});
  }
  const format = detectFormat(filename, text);
  const raw = format === 'json' ? jsonRows(text) : delimitedRows(text, format === 'tsv' ? '\t' : ',');
  if ('file' in raw) return { ok: false, format, file: raw.file, rows: [] };
  const rows: DictionaryRowError[] = [...raw.errors];
  const entries: DictionaryEntry[] = [];
  const firstAt = new Map<string, number>();
  for (const row of raw.rows) {
    const parsed = parseDictionaryEntry(row.word, row.reading);
    if (!parsed.ok) {
      rows.push({
        at: row.at,
        identifier: parsed.error.identifier,
        context: {
          ...(parsed.error.context.max !== undefined ? { max: parsed.error.context.max } : {}),
          ...(parsed.error.context.position !== undefined ? { position: parsed.error.context.position } : {}),
        },
      });
      continue;
    }
    const first = firstAt.get(parsed.value.word);
    if (first !== undefined) {
      rows.push({ at: row.at, identifier: 'dictfile.duplicate', context: { first } });
      continue;
    }
    firstAt.set(parsed.value.word, row.at);
    entries.push(parsed.value);
  }
  if (raw.rows.length > DICTIONARY_FILE_LIMITS.maxEntries)
    return {
      ok: false,
      format,
      file: { identifier: 'dictfile.too_many', context: { max: DICTIONARY_FILE_LIMITS.maxEntries, found: raw.rows.length } },
      rows: [],
    };
  if (rows.length > 0) return { ok: false, format, rows: rows.sort((a, b) => a.at - b.at) };
  const patterns = entries.filter((e) => isPatternWord(e.word)).length;
  if (patterns > DICTIONARY_FILE_LIMITS.maxPatterns)
    return {
      ok: false,
      format,
      file: { identifier: 'dictfile.too_many_patterns', context: { max: DICTIONARY_FILE_LIMITS.maxPatterns, found: patterns } },
      rows: [],
    };
  if (entries.length === 0) return { ok: false, format, file: { identifier: 'dictfile.empty', context: {} }, rows: [] };
  return { ok: true, format, entries };
}

// A spreadsheet runs a cell starting with = + - @ (or tab, CR) as a formula (OWASP "CSV Injection"):
// an exported CSV prefixes such a cell with ' inside quotes, and a cell that already starts with '
// too, so that every cell of an export starting with ' carries exactly one added '. The export's
// header names that escape, and only a file with this header has it removed on import: a
// hand-written reading starting with ' stays as written.
const FORMULA_START = /^[=+\-@\t\r]/;
const ESCAPE = "'";
/** The header row of an exported CSV (word, reading): it marks the file as escaped. */
const CSV_EXPORT_HEADER = ['word', `reading (a leading ${ESCAPE} is an escape)`] as const;

/** A cell as an export writes it: a spreadsheet does not run it, and restoreCell gives it back. */
export function neutraliseCell(value: string): string {
  return FORMULA_START.test(value) || value.startsWith(ESCAPE) ? ESCAPE + value : value;
}

/** A cell of an exported (escaped) file as it was before neutraliseCell. */
export function restoreCell(cell: string): string {
  return cell.startsWith(ESCAPE) ? cell.slice(ESCAPE.length) : cell;
}

/** The server's entries as a file another server (or a spreadsheet) can import. */
export function serialiseDictionary(entries: readonly DictionaryEntry[], format: 'json' | 'csv'): string {
  const sorted = [...entries].sort((a, b) => (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
  if (format === 'json')
    return (
      JSON.stringify(
        sorted.map((e) => ({ word: e.word, reading: e.reading })),
        null,
        2,
      ) + '\n'
    );
  const field = (raw: string) => {
    const s = neutraliseCell(raw);
    return s !== raw || /[",\r\n]|^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [CSV_EXPORT_HEADER.join(','), ...sorted.map((e) => `${field(e.word)},${field(e.reading)}`)].join('\r\n') + '\r\n';
}

interface RawRow {
  at: number;
  word: string;
  reading: string;
}
type Raw = { rows: RawRow[]; errors: DictionaryRowError[] } | { file: DictionaryFileError };

function fileError(identifier: DictionaryFileErrorIdentifier, context: DictionaryFileError['context']): DictionaryFileResult {
  return { ok: false, file: { identifier, context }, rows: [] };
}

/** JSON: an array of {word, reading} (or [word, reading]), {entries: [...]}, or an object word -> reading. */
function jsonRows(text: string): Raw {
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return { file: { identifier: 'dictfile.bad_json', context: {} } };
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && Array.isArray((value as { entries?: unknown }).entries))
    value = (value as { entries: unknown[] }).entries;
  const rows: RawRow[] = [];
  const errors: DictionaryRowError[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const pair = Array.isArray(item)
        ? item
        : item && typeof item === 'object'
          ? [(item as Record<string, unknown>).word, (item as Record<string, unknown>).reading]
          : [];
      if (pair.length !== 2 || typeof pair[0] !== 'string' || typeof pair[1] !== 'string')
        errors.push({ at: i + 1, identifier: 'dictfile.bad_entry', context: {} });
      else rows.push({ at: i + 1, word: pair[0], reading: pair[1] });
    });
    return { rows, errors };
  }
  if (value && typeof value === 'object') {
    Object.entries(value).forEach(([word, reading], i) => {
      if (typeof reading !== 'string') errors.push({ at: i + 1, identifier: 'dictfile.bad_entry', context: {} });
      else rows.push({ at: i + 1, word, reading });
    });
    return { rows, errors };
  }
  return { file: { identifier: 'dictfile.bad_json', context: {} } };
}

/** CSV (RFC 4180 quoting) or TSV, two columns; an optional header row; blank lines skipped. */
function delimitedRows(text: string, delimiter: string): Raw {
  const rows: RawRow[] = [];
  const errors: DictionaryRowError[] = [];
  const records = splitRecords(text.replace(/^\uFEFF/, ''), delimiter);
  const first = records[0]?.fields.map((f) => f.trim());
  // An export's own header: its cells were escaped (neutraliseCell), and are restored here.
  const escaped = first?.length === 2 && first[0] === CSV_EXPORT_HEADER[0] && first[1] === CSV_EXPORT_HEADER[1];
  records.forEach((record, index) => {
    if (record.fields.length === 1 && record.fields[0]!.trim() === '') return;
    if (record.unclosed) return void errors.push({ at: record.line, identifier: 'dictfile.unclosed_quote', context: {} });
    const fields = escaped ? record.fields.map(restoreCell) : record.fields;
    const header = escaped || (fields.length === 2 && HEADER_WORD.test(fields[0]!.trim()) && HEADER_READING.test(fields[1]!.trim()));
    if (index === 0 && header) return;
    if (fields.length !== 2)
      return void errors.push({ at: record.line, identifier: 'dictfile.columns', context: { found: fields.length } });
    rows.push({ at: record.line, word: fields[0]!, reading: fields[1]! });
  });
  return { rows, errors };
}

function splitRecords(text: string, delimiter: string): { line: number; fields: string[]; unclosed: boolean }[] {
  const records: { line: number; fields: string[]; unclosed: boolean }[] = [];
  let line = 1;
  let i = 0;
  while (i <= text.length) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    let unclosed = false;
    for (;;) {
      if (i >= text.length) {
        if (quoted) unclosed = true;
        fields.push(field);
        i += 1;
        break;
      }
      const c = text[i]!;
      if (quoted) {
        if (c === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        if (c === '"') {
          quoted = false;
          i += 1;
          continue;
        }
        if (c === '\n') line += 1;
        field += c;
        i += 1;
        continue;
      }
      if (c === '"' && field === '') {
        quoted = true;
        i += 1;
        continue;
      }
      if (c === delimiter) {
        fields.push(field);
        field = '';
        i += 1;
        continue;
      }
      if (c === '\r' && text[i + 1] === '\n') {
        i += 1;
        continue;
      }
      if (c === '\n') {
        fields.push(field);
        i += 1;
        line += 1;
        break;
      }
      field += c;
      i += 1;
    }
    records.push({ line: start, fields, unclosed });
    if (unclosed) break;
  }
  return records;
}
