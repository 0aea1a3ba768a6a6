import { describe, expect, it } from 'vitest';
import { describeDictionaryFileProblem } from '../../src/usecases/dictionary-problems.ts';
import {
  DICTIONARY_FILE_LIMITS,
  detectFormat,
  neutraliseCell,
  parseDictionaryFile,
  restoreCell,
  serialiseDictionary,
} from '../../src/speech/text/dictionary-file.ts';

const bytes = (s: string) => Buffer.from(s, 'utf8');
const entries = (name: string, s: string) => {
  const r = parseDictionaryFile(name, bytes(s));
  if (!r.ok) throw new Error(JSON.stringify(r));
  return r.entries.map((e) => [e.word, e.reading]);
};
const problems = (name: string, s: string | Buffer) => {
  const r = parseDictionaryFile(name, typeof s === 'string' ? bytes(s) : s);
  if (r.ok) throw new Error('expected problems');
  return r.file
    ? [describeDictionaryFileProblem('en', r.format, r.file)]
    : r.rows.map((p) => describeDictionaryFileProblem('en', r.format, p));
};

describe('dictionary files: what is read', () => {
  it('GIVEN our CSV export with a header, quotes and CRLF THEN every entry', () => {
    expect(entries('d.csv', 'word,reading\r\n"a,b","say ""x"""\r\nGPU,ジーピーユー\r\n')).toEqual([
      ['a,b', 'say "x"'],
      ['GPU', 'ジーピーユー'],
    ]);
  });
  it('GIVEN a headerless two-column TSV (other bots) with a BOM and blank lines THEN every entry', () => {
    expect(entries('export.txt', '\uFEFF草\tくさ\n\nｗｗ\tわらわら\n')).toEqual([
      ['草', 'くさ'],
      ['ww', 'わらわら'],
    ]);
  });
  it('GIVEN a Japanese header THEN it is skipped', () => {
    expect(entries('d.csv', '単語,読み\nabc,えーびーしー\n')).toEqual([['abc', 'えーびーしー']]);
  });
  it('GIVEN JSON as an array, as {entries}, as pairs, or as a word -> reading object THEN the same entries', () => {
    const want = [
      ['abc', 'えー'],
      ['xyz', 'えっくす'],
    ];
    expect(entries('d.json', '[{"word":"abc","reading":"えー"},{"word":"xyz","reading":"えっくす"}]')).toEqual(want);
    expect(entries('d.json', '{"entries":[{"word":"abc","reading":"えー"},{"word":"xyz","reading":"えっくす"}]}')).toEqual(want);
    expect(entries('d.txt', '[["abc","えー"],["xyz","えっくす"]]')).toEqual(want);
    expect(entries('d.json', '{"abc":"えー","xyz":"えっくす"}')).toEqual(want);
  });
  it('GIVEN a name and a first line THEN the format', () => {
    expect(detectFormat('a.csv', '[{"word":"a"}]')).toBe('json');
    expect(detectFormat('a.tsv', 'a,b')).toBe('tsv');
    expect(detectFormat('a.txt', 'a\tb')).toBe('tsv');
    expect(detectFormat('a', 'a,b')).toBe('csv');
  });
  it('GIVEN entries THEN the export reads back to the same entries (CSV and JSON)', () => {
    const list = [
      { word: 'b,"q"', reading: 'びー' },
      { word: 'a', reading: ' spaced ' },
    ].map((e) => ({ ...e, reading: e.reading.trim() }));
    for (const format of ['csv', 'json'] as const) {
      expect(entries(`x.${format}`, serialiseDictionary(list, format))).toEqual([
        ['a', 'spaced'],
        ['b,"q"', 'びー'],
      ]);
    }
  });
});

describe('dictionary files: a CSV export a spreadsheet does not run (OWASP CSV injection)', () => {
  // Words and readings the importer accepts that a spreadsheet would read as a formula, and ones
  // starting with the escape itself.
  const risky = [
    { word: '-1', reading: 'マイナスいち' },
    { word: '=x', reading: '=HYPERLINK("evil","x")' },
    { word: '+81', reading: '@SUM(A1)' },
    { word: '@home', reading: '-いち' },
    { word: "'til", reading: "'ティル" },
    { word: "''", reading: "'=1+1" },
    { word: 'plain', reading: 'ぷれーん' },
  ];
  const cells = (csv: string) =>
    csv
      .trim()
      .split('\r\n')
      .slice(1)
      .flatMap((line) => line.match(/"(?:[^"]|"")*"|[^,]+/g)!);

  it("GIVEN cells starting with = + - @ tab CR THEN each is prefixed with ' inside quotes; others unchanged", () => {
    expect(['=a', '+a', '-a', '@a', '\ta', '\ra'].map(neutraliseCell)).toEqual(["'=a", "'+a", "'-a", "'@a", "'\ta", "'\ra"]);
    expect(neutraliseCell('a=b')).toBe('a=b');
    expect(neutraliseCell("'a")).toBe("''a");
    for (const v of ['=a', "'a", "''", 'plain', '-']) expect(restoreCell(neutraliseCell(v))).toBe(v);
  });

  it('GIVEN risky entries THEN no exported cell starts with a formula character, and the file reads back to the same entries', () => {
    const csv = serialiseDictionary(risky, 'csv');
    for (const cell of cells(csv)) expect(cell.replace(/^"/, ''), cell).not.toMatch(/^[=+\-@\t\r]/);
    expect(csv).toContain(`"'-1",マイナスいち`);
    expect(csv).toContain(`"'=x","'=HYPERLINK(""evil"",""x"")"`);
    expect(csv).toContain(`"''til","''ティル"`);
    const want = risky.map((e) => [e.word, e.reading]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
    expect(entries('dictionary.csv', csv)).toEqual(want);
  });

  it("GIVEN a hand-written CSV (not an export) with readings starting with ' THEN they are kept as written", () => {
    expect(entries('d.csv', "word,reading\ntil,'til\nx,'=1\n")).toEqual([
      ['til', "'til"],
      ['x', "'=1"],
    ]);
    expect(entries('d.csv', "til,''ティル\n")).toEqual([['til', "''ティル"]]);
  });
});

describe('dictionary files: what is refused, with the line', () => {
  it('GIVEN bad rows THEN each is named by its line, in order', () => {
    expect(problems('d.csv', 'word,reading\nok,おけ\n@everyone,x\n\nthree,col,umns\nok,again\nurl,https://example.com\n')).toEqual([
      'line 3: The word cannot contain a mention.',
      'line 5: Expected 2 columns (word, reading); found 3.',
      'line 6: The same word is already on line 2.',
      'line 7: The reading cannot contain a URL.',
    ]);
  });
  it('GIVEN a quoted field with a line break THEN later lines keep their numbers', () => {
    expect(problems('d.csv', '"a\nb",x\nc\n')).toEqual([
      'line 1: The word cannot contain line breaks or control characters.',
      'line 3: Expected 2 columns (word, reading); found 1.',
    ]);
  });
  it('GIVEN an unclosed quote THEN its line', () => {
    expect(problems('d.csv', 'a,b\n"c,d\ne,f\n')).toEqual(['line 2: A quote (") is never closed.']);
  });
  it('GIVEN broken JSON or a bad JSON entry THEN what is wrong, by entry', () => {
    expect(problems('d.json', '[{"word":"a"')).toEqual(['The file is not valid JSON (expected [{"word": "…", "reading": "…"}]).']);
    expect(problems('d.json', '[{"word":"a","reading":"b"},{"word":1}]')).toEqual([
      'entry 2: An entry must be {"word": "…", "reading": "…"}.',
    ]);
  });
  it('GIVEN more than 1 MB, more than 5,000 entries, not UTF-8, or nothing THEN the file is refused', () => {
    expect(problems('d.csv', Buffer.alloc(DICTIONARY_FILE_LIMITS.maxBytes + 1, 0x61))[0]).toContain(
      'too large (1048577 bytes; at most 1048576)',
    );
    expect(problems('d.csv', Array.from({ length: 5_001 }, (_, i) => `w${i},r`).join('\n'))).toEqual([
      'Too many entries (5001; at most 5000).',
    ]);
    expect(problems('d.csv', Buffer.from([0x82, 0xa0, 0x2c, 0x61]))).toEqual(['The file is not UTF-8 text.']); // Shift_JIS
    expect(problems('d.csv', 'word,reading\n')).toEqual(['The file has no entries.']);
  });
  it('GIVEN exactly 5,000 entries THEN they are read', () => {
    expect(entries('d.csv', Array.from({ length: 5_000 }, (_, i) => `w${i},r`).join('\n'))).toHaveLength(5_000);
  });
  it('GIVEN a problem in Japanese THEN the line reads 行目', () => {
    const r = parseDictionaryFile('d.csv', bytes('a,b,c\n'));
    expect(!r.ok && describeDictionaryFileProblem('ja', r.format, r.rows[0]!)).toBe(
      '1行目: 列は2つ（単語, 読み）にしてください（3 列あります）。',
    );
  });
});
