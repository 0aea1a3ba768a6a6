/**
 * The TypeScript import graph of a set of source files, read as text (the project's imports are
 * all relative paths with their `.ts` ending), for the structure test: which file imports which,
 * whether only for types, and the circles in it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

export interface ImportEdge {
  /** Project-relative path of the imported file. */
  to: string;
  /** `import type` / `export type`: erased when the code runs. */
  typeOnly: boolean;
}

/** Every `.ts` file below `dir`, project-relative, in sorted order. */
export function tsFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) out.push(relative(root, path));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

// `import x from '…'`, `import { a, type B } from '…'`, `import type …`, `export … from '…'`,
// `import '…'` and `import('…')`; a statement may span lines.
const STATIC = /^\s*(import|export)\s+(type\s+)?([^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The relative imports in `source` (a file's text); bare package names are left out. */
export function importsOf(source: string): Array<{ specifier: string; typeOnly: boolean }> {
  const found: Array<{ specifier: string; typeOnly: boolean }> = [];
  for (const m of source.matchAll(STATIC)) {
    // `export const x = …` and the like carry no `from`: only statements naming a module count.
    if (m[1] === 'export' && m[3] === undefined) continue;
    found.push({ specifier: m[4]!, typeOnly: m[2] !== undefined });
  }
  for (const m of source.matchAll(DYNAMIC)) found.push({ specifier: m[1]!, typeOnly: false });
  return found.filter((i) => i.specifier.startsWith('.'));
}

/** File → the project files it imports, for every file in `files` (project-relative paths). */
export function importGraph(root: string, files: readonly string[]): Map<string, ImportEdge[]> {
  const graph = new Map<string, ImportEdge[]>();
  for (const file of files) {
    const source = readFileSync(join(root, file), 'utf8');
    const edges = importsOf(source).map(({ specifier, typeOnly }) => ({
      to: relative(root, resolve(root, dirname(file), specifier)),
      typeOnly,
    }));
    graph.set(file, edges);
  }
  return graph;
}

/**
 * The circles of a graph: each strongly connected component of more than one file (or a file
 * importing itself), as its files in sorted order (Tarjan's algorithm).
 */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
