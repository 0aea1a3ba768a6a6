// A name is exported only while another file uses it: an export nobody imports is a door to
// nothing, which a reader must check before changing the thing behind it. Read from the syntax of
// every source file of the repository (tests and scripts use names too), by test/support/export-uses.ts.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { projectResolver, unusedExports } from './support/export-uses.ts';

const ROOT = join(import.meta.dirname, '..');

/** The folders whose exports are checked: the bot's code, its scripts and the packages' sources. */
const checked = (file: string) => /^(src|commands|scripts|bin)\//.test(file) || /^packages\/[^/]+\/src\//.test(file);

/**
 * Names read by a framework rather than imported, exempt by rule: the command loader
 * (src/discord/interactions/loader.ts) imports every module under commands/ and reads its default
 * export. Nothing else needs a rule: entry points (src/main.ts, the scripts, bin/, the workers,
 * the page script a page's `<script src>` loads) are run, not read by name; the other page scripts
 * import each other by relative path like any module, so they are checked as such; the tools'
 * configs (vitest, eslint) and the migrations (SQL) sit outside the checked folders.
 */
const exemptByRule = (file: string, name: string) => file.startsWith('commands/') && name === 'default';

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) continue;
      const path = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.(?:[cm]?ts|[cm]?js)$/.test(entry.name)) out.push(path);
    }
  };
  walk('');
  return out.sort();
}

/** The unused exports of in-memory files (`checked`: every file under src/), for the reader's own cases. */
function unusedIn(files: Record<string, string>, packages: Record<string, string> = {}): string[] {
  const sources = new Map(Object.entries(files));
  const resolve = projectResolver(new Set(sources.keys()), new Map(Object.entries(packages)));
  return unusedExports(sources, resolve, (f) => f.startsWith('src/')).map((e) => `${e.file}:${e.line} ${e.name}`);
}

describe('the export reader', () => {
  it('GIVEN names imported, re-exported or read through a namespace by another file THEN only the others are unused', () => {
    const files = {
      'src/a.ts': [
        'export const imported = 1;',
        'export function reExported() {}',
        'export interface ViaNamespace {}',
        'export const viaNamespaceValue = 2;',
        'export type OnlyHere = number;',
        'export class AlsoOnlyHere {}',
        'const local: OnlyHere = 3;',
        'export { local as renamed };',
        'export default function () {}',
      ].join('\n'),
      'src/b.ts': "import { imported } from './a.ts';\nexport { reExported } from './a.ts';\nconsole.log(imported);",
      'test/c.test.ts':
        "import * as a from '../src/a.ts';\nlet x: a.ViaNamespace;\na.viaNamespaceValue;\nimport { reExported } from '../src/b.ts';",
    };
    expect(unusedIn(files)).toEqual(['src/a.ts:5 OnlyHere', 'src/a.ts:6 AlsoOnlyHere', 'src/a.ts:8 renamed', 'src/a.ts:9 default']);
  });

  it('GIVEN a name used only in its own file THEN it is unused, however often the file names it', () => {
    expect(unusedIn({ 'src/a.ts': 'export const x = 1;\nconsole.log(x, x);', 'src/b.ts': "import { y } from './c.ts';" })).toEqual([
      'src/a.ts:1 x',
    ]);
  });

  it('GIVEN `export * from` THEN a name used through the re-exporting file is used in the original; one used by nobody is reported where it is declared', () => {
    const files = {
      'src/lib/inner.ts': 'export const wanted = 1;\nexport const unwanted = 2;',
      'src/lib/index.ts': "export * from './inner.ts';\nexport { wanted as alias } from './inner.ts';",
      'src/user.ts': "import { wanted } from '@x/lib';",
    };
    expect(unusedIn(files, { '@x/lib': 'src/lib' })).toEqual(['src/lib/index.ts:2 alias', 'src/lib/inner.ts:2 unwanted']);
  });

  it('GIVEN a namespace passed on whole, or a dynamic import used whole THEN every name is used', () => {
    expect(unusedIn({ 'src/a.ts': 'export const x = 1;', 'test/b.ts': "import * as a from '../src/a.ts';\nspy(a);" })).toEqual([]);
    expect(unusedIn({ 'src/a.ts': 'export const x = 1;', 'test/b.ts': "void import('../src/a.ts').then(run);" })).toEqual([]);
  });

  it('GIVEN dynamic imports destructured, read by property, through Promise.all, or named in a type THEN just those names are used', () => {
    const files = {
      'src/a.ts': 'export const a1 = 1;\nexport const a2 = 2;',
      'src/b.ts': 'export const b1 = 1;\nexport const b2 = 2;',
      'src/c.ts': 'export const c1 = 1;\nexport const c2 = 2;',
      'src/d.ts': 'export type D1 = 1;\nexport type D2 = 2;',
      'src/e.ts': 'export const e1 = 1;\nexport const e2 = 2;',
      'test/use.ts': [
        "const { a1 } = await import('../src/a.ts');",
        "const b = (await import('../src/b.ts')).b1;",
        "const [{ c1 }, { e1 }] = await Promise.all([import('../src/c.ts'), import('../src/e.ts')]);",
        "let d: import('../src/d.ts').D1;",
      ].join('\n'),
    };
    expect(unusedIn(files)).toEqual(['src/a.ts:2 a2', 'src/b.ts:2 b2', 'src/c.ts:2 c2', 'src/d.ts:2 D2', 'src/e.ts:2 e2']);
  });

  it('GIVEN page scripts importing each other with `.js` endings THEN their imports resolve', () => {
    expect(
      unusedIn({ 'src/public/a.js': 'export function a() {}\nexport const b = 1;', 'src/public/app.js': "import { a } from './a.js';" }),
    ).toEqual(['src/public/a.js:2 b']);
  });
});

describe('exports', () => {
  it('every exported name of src/, commands/, scripts/, bin/ and the packages’ sources is used by another file (or read by a framework, by rule)', () => {
    const files = sourceFiles();
    const packages = new Map(
      readdirSync(join(ROOT, 'packages')).map((dir) => [
        (JSON.parse(readFileSync(join(ROOT, 'packages', dir, 'package.json'), 'utf8')) as { name: string }).name,
        `packages/${dir}`,
      ]),
    );
    // Guards the check against passing on a misread tree.
    expect(files.length).toBeGreaterThan(400);
    expect(files).toContain('src/bot.ts');
    const sources = new Map(files.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));
    const unused = unusedExports(sources, projectResolver(new Set(files), packages), checked)
      .filter((e) => !exemptByRule(e.file, e.name))
      .map((e) => `${e.file}:${e.line} ${e.name}`);
    expect(unused).toEqual([]);
  });
});
