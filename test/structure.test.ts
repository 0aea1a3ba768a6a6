// The repository's structure rules, checked on the tree as it is, so a change that breaks one fails here
// rather than in a reader's head: no import circle, the layers importing only downwards, and
// errors declared by the one convention in their layer's errors.ts (docs/architecture.md).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { circles, importGraph, importsOf, tsFiles } from './support/import-graph.ts';

const ROOT = join(import.meta.dirname, '..');
const files = [...tsFiles(ROOT, 'src'), ...tsFiles(ROOT, 'commands')];
const graph = importGraph(ROOT, files);

/** The layer of a file: the longest RANK key naming it or a folder above it (`discord/events`, `billing/budget.ts`), else `commands` or its folder under src/ (or the file itself at src/'s top). */
function layerOf(file: string): string {
  if (file.startsWith('commands/')) return 'commands';
  const path = file.slice('src/'.length);
  const keys = Object.keys(RANK).filter((k) => path === k || path === `${k}.ts` || path.startsWith(`${k}/`));
  return keys.sort((a, b) => b.length - a.length)[0] ?? path.split('/')[0]!.replace(/\.ts$/, '');
}

/**
 * The bot's rooms, highest first; a room imports only its own files and lower rooms. A file takes
 * the rank of the longest key naming it or a folder above it, so a new file in a ranked folder
 * takes its folder's rank, by concept:
 * - main.ts starts the bot; bot.ts assembles it (the composition root);
 * - commands/ (one folder per feature: the slash commands) and src/dashboard/ (the web dashboard):
 *   the two adapters over the same use cases, which never import each other;
 * - src/discord, by behaviour: events/ and interactions/ (thin adapters: Discord's events and the
 *   one dispatcher; they never import each other) over voice-control/ (join, leave, which account,
 *   the voice status, who may control playback) and diagnosis/ (what the bot records about its own
 *   silence), over delivery/ (where audio goes), over audience/ (who hears or sees what), over
 *   its base files (errors, the invite URL, the REST agent, channel kinds);
 * - src/usecases: what the commands and the dashboard both do, on plain inputs, never Discord;
 * - src/ops (metrics, health, the shard manager), config.ts;
 * - src/speech: the scheduler (its queue files), above what a message becomes (text/) and how
 *   audio is made (synthesis/), above the errors the three share;
 * - src/tts (the service client) and the character budget (billing/budget.ts, the money rules over
 *   the SQL ledger); src/db, src/voice and src/audio;
 * - the domain's own types and rules: src/domain (the records db stores and the rooms above share),
 *   src/billing (the character ledger's states and rules), src/i18n (the texts and UserError, what a
 *   member is told) and the limiter's window shapes (src/tts/limiter/types.ts: src/db keeps them in SQL);
 * - src/util under all.
 */
const RANK: Readonly<Record<string, number>> = {
  main: 17,
  bot: 16,
  commands: 15,
  dashboard: 15,
  'discord/events': 14,
  'discord/interactions': 14,
  'discord/deploy-commands.ts': 14,
  'discord/voice-control': 13,
  'discord/diagnosis': 13,
  'discord/delivery': 12,
  'discord/audience': 11,
  discord: 10,
  usecases: 9,
  ops: 8,
  config: 7,
  speech: 6,
  'speech/text': 5,
  'speech/synthesis': 5,
  'speech/errors.ts': 4,
  tts: 3,
  'billing/budget.ts': 3,
  db: 2,
  voice: 2,
  audio: 2,
  billing: 1,
  domain: 1,
  i18n: 1,
  'tts/limiter/types.ts': 1,
  util: 0,
};

describe('the import graph reader', () => {
  it('GIVEN import and export statements THEN each relative module, type-only where it is erased', () => {
    const source = [
      "import { a, type B } from './a.ts';",
      "import type { C } from '../c.ts';",
      'import {',
      '  d,',
      "} from './d.ts';",
      "export { e } from './e.ts';",
      "export type { F } from './f.ts';",
      "import './side-effect.ts';",
      "const g = await import('./g.ts');",
      "import pino from 'pino';",
      "export const h = 'from';",
      " * import { x } from './in-a-comment-line.ts' is not at a line's start",
    ].join('\n');
    expect(importsOf(source)).toEqual([
      { specifier: './a.ts', typeOnly: false },
      { specifier: '../c.ts', typeOnly: true },
      { specifier: './d.ts', typeOnly: false },
      { specifier: './e.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: true },
      { specifier: './side-effect.ts', typeOnly: false },
      { specifier: './g.ts', typeOnly: false },
    ]);
  });

  it('GIVEN a graph THEN each circle once, with all its files; a tree has none', () => {
    const g = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a', 'd']],
      ['d', []],
      ['e', ['e']],
      ['f', ['d']],
    ]);
    expect(circles(g)).toEqual([['a', 'b', 'c'], ['e']]);
    expect(
      circles(
        new Map([
          ['a', ['b', 'c']],
          ['b', ['c']],
          ['c', []],
        ]),
      ),
    ).toEqual([]);
  });

  it('reads the real tree: every relative import resolves to a file it read', () => {
    // Guards the rules below against passing on an empty or misread graph.
    expect(files.length).toBeGreaterThan(100);
    expect(graph.get('src/main.ts')!.map((e) => e.to)).toContain('src/bot.ts');
    const unresolved = [...graph].flatMap(([from, edges]) =>
      edges.filter((e) => !graph.has(e.to) && !e.to.endsWith('.json')).map((e) => `${from} -> ${e.to}`),
    );
    expect(unresolved).toEqual([]);
  });
});

describe('the structure of src/ and commands/', () => {
  it('no import circle, counting type-only imports', () => {
    const edges = new Map([...graph].map(([file, list]) => [file, list.map((e) => e.to)]));
    expect(circles(edges)).toEqual([]);
  });

  it('each layer imports only from itself and the layers below it', () => {
    const upward = [...graph].flatMap(([from, edges]) =>
      edges
        .filter((e) => {
          const [a, b] = [RANK[layerOf(from)], RANK[layerOf(e.to)]];
          return a !== undefined && b !== undefined && b > a;
        })
        .map((e) => `${from} -> ${e.to}`),
    );
    expect(upward).toEqual([]);
  });

  it("errors extend CodedError and are declared in their layer's errors.ts (a single-file module at src/'s top keeps its own)", () => {
    const misplaced = files.flatMap((file) => {
      const declared = [
        ...readFileSync(join(ROOT, file), 'utf8').matchAll(/^\s*(?:export\s+)?(?:abstract\s+)?class\s+(\w+)\s+extends\s+(\w*Error)\b/gm),
      ];
      const home = file.endsWith('/errors.ts') || file.split('/').length === 2;
      const elsewhere = home ? [] : declared.map((m) => `${file}: ${m[1]} extends ${m[2]}`);
      // One root: every error class extends CodedError (@yomiage/coded-error, or one of its subclasses), not Error.
      const ownRoot = declared.filter((m) => m[2] === 'Error').map((m) => `${file}: ${m[1]} extends Error`);
      return [...elsewhere, ...ownRoot];
    });
    expect(misplaced).toEqual([]);
  });
});

describe('the layers of src/ and commands/', () => {
  it('ranks every folder of src/ and every file at its top', () => {
    const unranked = [...new Set(files.map(layerOf))].filter((layer) => RANK[layer] === undefined);
    expect(unranked).toEqual([]);
  });

  it('no import cycle between folders (layers), counting type-only imports', () => {
    const edges = new Map<string, Set<string>>();
    for (const [from, list] of graph) {
      const a = layerOf(from);
      const out = edges.get(a) ?? edges.set(a, new Set()).get(a)!;
      for (const e of list) if (graph.has(e.to) && layerOf(e.to) !== a) out.add(layerOf(e.to));
    }
    expect(circles(new Map([...edges].map(([layer, to]) => [layer, [...to]])))).toEqual([]);
  });
});

describe('adapters and use cases', () => {
  const layerEdges = [...graph].flatMap(([from, edges]) => edges.map((e) => ({ from, to: e.to, a: layerOf(from), b: layerOf(e.to) })));
  /** The bare module names a file imports (packages, node builtins), as statements name them (a comment naming one is no import). */
  const bareSpecifiers = (file: string) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:\bfrom\s+|\bimport\(\s*|^\s*import\s+)['"]([^'".][^'"]*)['"]/gm)].map(
      (m) => m[1]!,
    );

  it('inside src/discord, events/ and interactions/ never import each other', () => {
    const crossing = layerEdges.filter(
      ({ a, b }) => (a === 'discord/events' && b === 'discord/interactions') || (a === 'discord/interactions' && b === 'discord/events'),
    );
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('commands/ and src/dashboard/ never import each other', () => {
    const crossing = layerEdges.filter(({ a, b }) => (a === 'commands' && b === 'dashboard') || (a === 'dashboard' && b === 'commands'));
    expect(crossing.map(({ from, to }) => `${from} -> ${to}`)).toEqual([]);
  });

  it('use cases import no discord.js, directly or through any file they reach', () => {
    const reached = new Set<string>();
    const visit = (file: string) => {
      if (reached.has(file) || !graph.has(file)) return;
      reached.add(file);
      for (const e of graph.get(file)!) visit(e.to);
    };
    const useCases = files.filter((f) => f.startsWith('src/usecases/'));
    expect(useCases.length).toBeGreaterThan(5);
    for (const file of useCases) visit(file);
    // @discordjs/opus is an audio codec, not Discord.
    const discord = (specifier: string) =>
      specifier === 'discord.js' || (specifier.startsWith('@discordjs/') && specifier !== '@discordjs/opus');
    const leaks = [...reached].flatMap((file) =>
      bareSpecifiers(file)
        .filter(discord)
        .map((s) => `${file} -> ${s}`),
    );
    expect(leaks).toEqual([]);
  });
});

describe("the scheduler's room (src/speech/queue/)", () => {
  const inside = (file: string) => file.startsWith('src/speech/queue/');
  /**
   * What the rest of the bot may import from the room: the scheduler, what it queues and delivers,
   * its options and events, and the queue kept on disk. Its inner files (slots, pacing, the batching
   * rules, the policy) change with the scheduler alone; tests and benches may reach them.
   */
  const DOORS = ['scheduler.ts', 'utterance.ts', 'options.ts', 'journal.ts'].map((f) => `src/speech/queue/${f}`);

  it('nothing outside it imports its inner files, only its doors', () => {
    expect(DOORS.filter((door) => !graph.has(door))).toEqual([]);
    const through = [...graph].flatMap(([from, edges]) =>
      inside(from) ? [] : edges.filter((e) => inside(e.to) && !DOORS.includes(e.to)).map((e) => `${from} -> ${e.to}`),
    );
    expect(through).toEqual([]);
  });

  it('one door per name: none of its files re-exports another module', () => {
    const reexports = [...graph.keys()]
      .filter(inside)
      .flatMap((file) =>
        [...readFileSync(join(ROOT, file), 'utf8').matchAll(/^export\s+(?:type\s+)?(?:\*|\{[^}]*\})\s+from\s+'[^']+'/gm)].map(
          (m) => `${file}: ${m[0]}`,
        ),
      );
    expect(reexports).toEqual([]);
  });
});

describe('docs/architecture.md', () => {
  const doc = readFileSync(join(ROOT, 'docs/architecture.md'), 'utf8');

  it('names every top-level folder of src/', () => {
    const folders = readdirSync(join(ROOT, 'src'), { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .map((d) => `src/${d.name}/`);
    expect(folders.filter((f) => !doc.includes(f))).toEqual([]);
  });

  it('names only paths that exist', () => {
    const named = [...new Set(doc.match(/\b(?:src|test|commands|migrations|scripts|packages|docs)\/[\w./-]*/g))].map((p) =>
      p.replace(/[.]+$/, ''),
    );
    expect(named.length).toBeGreaterThan(10);
    expect(named.filter((path) => !path.includes('NNN') && !existsSync(join(ROOT, path)))).toEqual([]);
  });
});

describe('the workspace packages (the development servers and the libraries they share with the bot)', () => {
  const packageDirs = readdirSync(join(ROOT, 'packages'), { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => `packages/${d.name}`);
  const manifest = (dir: string) =>
    JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
    };
  const nameOf = new Map(packageDirs.map((dir) => [manifest(dir).name, dir]));
  const sourcesOf = (dir: string) =>
    ['src', 'test'].flatMap((sub) => (existsSync(join(ROOT, dir, sub)) ? tsFiles(ROOT, `${dir}/${sub}`) : []));
  const packageFiles = packageDirs.flatMap(sourcesOf);
  const botFiles = [...files, ...tsFiles(ROOT, 'test'), ...tsFiles(ROOT, 'scripts')];
  const relativeGraph = importGraph(ROOT, [...botFiles, ...packageFiles]);
  /** The workspace-package specifiers a file imports (`@yomiage/name` or `@yomiage/name/sub/path`). */
  const packageSpecifiers = (file: string) =>
    [...readFileSync(join(ROOT, file), 'utf8').matchAll(/(?:\bfrom\s+|\bimport\(\s*|^\s*import\s+)['"](@yomiage\/[^'"]+)['"]/gm)].map(
      (m) => m[1]!,
    );
  /** The workspace packages a file imports by name. */
  const packagesImported = (file: string) => packageSpecifiers(file).map((s) => s.split('/').slice(0, 2).join('/'));
  /** The package a project file belongs to, or undefined for the bot's files. */
  const packageOf = (file: string) => packageDirs.find((dir) => file.startsWith(`${dir}/`));
  /** The development servers: the tests and the playground run them; the bot never does. Every other package is a library. */
  const DEV_SERVERS = new Set(['@yomiage/tts-emulator', '@yomiage/local-discord', '@yomiage/playground']);
  const root = manifest('.');
  /** The workspace packages a package depends on at run time, itself excluded, transitively. */
  const runtimeClosure = (names: Iterable<string>): Set<string> => {
    const seen = new Set<string>();
    const visit = (name: string) => {
      const dir = nameOf.get(name);
      if (dir === undefined || seen.has(name)) return;
      seen.add(name);
      for (const dep of Object.keys(manifest(dir).dependencies ?? {})) visit(dep);
    };
    for (const name of names) visit(name);
    return seen;
  };

  it('each package has its package.json (private, ESM, its sources exported), its tests and its own `npm test`', () => {
    expect(packageDirs.length).toBeGreaterThanOrEqual(3);
    for (const dir of packageDirs) {
      const pkg = manifest(dir) as ReturnType<typeof manifest> & {
        private?: boolean;
        type?: string;
        exports?: Record<string, string>;
        scripts?: Record<string, string>;
      };
      expect({ dir, name: pkg.name, private: pkg.private, type: pkg.type, main: pkg.exports?.['.'] }).toEqual({
        dir,
        name: expect.stringMatching(/^@yomiage\//),
        private: true,
        type: 'module',
        main: './src/index.ts',
      });
      if (existsSync(join(ROOT, dir, 'test'))) expect({ dir, test: pkg.scripts?.test }).toEqual({ dir, test: 'vitest run' });
    }
  });

  it('names every package a development server or a library', () => {
    expect([...DEV_SERVERS].filter((name) => !nameOf.has(name))).toEqual([]);
  });

  it("the bot's src/ and commands/ import a package only by name, only a library, and only one its package.json lists as a dependency", () => {
    const listed = new Set(Object.keys(root.dependencies ?? {}));
    const leaks = files.flatMap((file) => [
      ...packagesImported(file)
        .filter((name) => DEV_SERVERS.has(name) || !listed.has(name))
        .map((name) => `${file} -> ${name}`),
      ...(relativeGraph.get(file) ?? []).filter((e) => e.to.startsWith('packages/')).map((e) => `${file} -> ${e.to}`),
    ]);
    expect(leaks).toEqual([]);
  });

  it("no development server is among the bot's dependencies, directly or through a library's", () => {
    const reached = runtimeClosure(Object.keys(root.dependencies ?? {}));
    expect([...reached].filter((name) => DEV_SERVERS.has(name))).toEqual([]);
  });

  it('a package reaches outside itself only by package name, and only to a package its package.json lists (its tests may also use the shared test/support/)', () => {
    const wrong = packageFiles.flatMap((file) => {
      const home = packageOf(file)!;
      const pkg = manifest(home);
      const listed = new Set(Object.keys({ ...pkg.dependencies, ...(file.startsWith(`${home}/test/`) ? pkg.devDependencies : {}) }));
      const outside = (relativeGraph.get(file) ?? [])
        .filter((e) => !e.to.startsWith(`${home}/`) && !(file.startsWith(`${home}/test/`) && e.to.startsWith('test/support/')))
        .map((e) => `${file} -> ${e.to}`);
      const unlisted = packagesImported(file)
        .filter((name) => name !== pkg.name && !listed.has(name))
        .map((name) => `${file} -> ${name} (not in ${home}/package.json)`);
      return [...outside, ...unlisted];
    });
    expect(wrong).toEqual([]);
  });

  it("the bot's tests and scripts use a package by its name, never by a path into it", () => {
    const byPath = botFiles.flatMap((file) =>
      (relativeGraph.get(file) ?? []).filter((e) => e.to.startsWith('packages/')).map((e) => `${file} -> ${e.to}`),
    );
    expect(byPath).toEqual([]);
  });

  it("no import cycle between folders: the bot's code, the bot's tests, each package's code and tests", () => {
    // A package's src/ and test/ are folders of their own; so are the bot's code (src/, commands/)
    // and its tests and scripts (test/, scripts/).
    const folder = (file: string) => {
      const pkg = packageOf(file);
      if (pkg) return `${pkg}/${file.slice(pkg.length + 1).split('/')[0]}`;
      return file.startsWith('test/') || file.startsWith('scripts/') ? 'the bot: test' : 'the bot: src';
    };
    const byName = (specifier: string) => {
      const [scope, name, sub] = specifier.split('/');
      const dir = nameOf.get(`${scope}/${name}`);
      return dir === undefined ? [] : [sub === 'test' ? `${dir}/test` : `${dir}/src`];
    };
    const edges = new Map<string, Set<string>>();
    for (const file of [...botFiles, ...packageFiles]) {
      const from = folder(file);
      const set = edges.get(from) ?? new Set<string>();
      for (const to of [...(relativeGraph.get(file) ?? []).map((e) => folder(e.to)), ...packageSpecifiers(file).flatMap(byName)])
        if (to !== from) set.add(to);
      edges.set(from, set);
    }
    expect(circles(new Map([...edges].map(([from, to]) => [from, [...to]])))).toEqual([]);
  });

  it("the bot's package.json lists as dependencies only what the bot itself uses", () => {
    const root = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const botSources = [...files, ...readdirSync(join(ROOT, 'bin')).map((f) => `bin/${f}`)]
      .map((f) => readFileSync(join(ROOT, f), 'utf8'))
      .join('\n');
    const unused = Object.keys(root.dependencies).filter(
      (name) => !new RegExp(`['"\`]${name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}(['"\`/])`).test(botSources),
    );
    expect(unused).toEqual([]);
  });
});
