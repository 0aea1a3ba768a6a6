/**
 * Which exported names another file uses, read from the syntax of every source file (the
 * TypeScript parser, no type checking): for the exports test, which keeps a name exported only
 * while some other file needs it.
 *
 * A file uses another's export when it imports it by name (`import { a }`, `import a` for the
 * default), re-exports it (`export { a } from`), reads it through a namespace (`import * as ns`
 * and `ns.a`; a namespace passed on whole uses every name), names it in a type
 * (`import('./x.ts').A`) or takes it from a dynamic import (`const { a } = await import(…)`,
 * `(await import(…)).a`, the same through `await Promise.all([import(…), …])`; any other dynamic
 * import uses every name). `export * from` passes its target's names on: a use of one through
 * the re-exporting file is a use of the original.
 */
import { dirname, join, normalize } from 'node:path';
import ts from 'typescript';

/** One exported name of one file, with the line it is declared on (1-based). */
export interface ExportedName {
  file: string;
  name: string;
  line: number;
}

interface FileFacts {
  /** The names this file exports itself (declared here or re-exported by name), with their line. */
  exports: Map<string, number>;
  /** The files whose every export this file re-exports (`export * from`). */
  starFrom: string[];
  /** What this file uses of other files: `[file, name]`, name `*` for every export. */
  uses: Array<[string, string]>;
}

/** Resolves an import specifier from `file` to a project file, or undefined for a module outside the project. */
export type Resolve = (specifier: string, file: string) => string | undefined;

/**
 * A resolver over a set of project files: relative specifiers (a `.js` ending may name a `.ts`
 * file, as `rewriteRelativeImportExtensions` allows) and workspace package names mapped to their
 * source folder (`@yomiage/x` → `<dir>/src/index.ts`, `@yomiage/x/a/b` → `<dir>/src/a/b.ts`,
 * `@yomiage/x/test/a` → `<dir>/test/a.ts`, as their package.json `exports` say).
 */
export function projectResolver(files: ReadonlySet<string>, packages: ReadonlyMap<string, string>): Resolve {
  const existing = (path: string) =>
    [path, path.replace(/\.js$/, '.ts'), `${path}.ts`, `${path}/index.ts`].map((p) => normalize(p)).find((p) => files.has(p));
  return (specifier, file) => {
    if (specifier.startsWith('.')) return existing(join(dirname(file), specifier));
    const [scope, name, ...rest] = specifier.split('/');
    const dir = packages.get(`${scope}/${name}`);
    if (dir === undefined) return undefined;
    if (rest.length === 0) return existing(`${dir}/src/index.ts`);
    return rest[0] === 'test' ? existing(`${dir}/${rest.join('/')}`) : existing(`${dir}/src/${rest.join('/')}`);
  };
}

const hasModifier = (node: ts.Node, kind: ts.SyntaxKind) =>
  ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** The names a binding pattern (`const { a, b: [c] } = …`) declares. */
function boundNames(name: ts.BindingName): string[] {
  if (ts.isIdentifier(name)) return [name.text];
  return name.elements.flatMap((e) => (ts.isOmittedExpression(e) ? [] : boundNames(e.name)));
}

const moduleName = (name: ts.ModuleExportName) => name.text;

/** What one file exports and what it uses of the others. */
function factsOf(file: string, source: string, resolve: Resolve): FileFacts {
  const kind = file.endsWith('.js') || file.endsWith('.mjs') || file.endsWith('.cjs') ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, kind);
  const facts: FileFacts = { exports: new Map(), starFrom: [], uses: [] };
  const lineOf = (node: ts.Node) => sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
  const use = (target: string | undefined, name: string) => {
    if (target !== undefined && target !== file) facts.uses.push([target, name]);
  };
  /** Local names bound to a whole module (`import * as ns`, `const m = await import(…)`), to follow their property reads. */
  const namespaces = new Map<string, string>();

  /** What the code around a dynamic import (or one element of an awaited `Promise.all([...])`) takes from it. */
  const usesOfModuleValue = (target: string, value: ts.Expression) => {
    let node: ts.Node = value;
    while (ts.isParenthesizedExpression(node.parent)) node = node.parent;
    const parent = node.parent;
    if (ts.isPropertyAccessExpression(parent) && parent.expression === node) return use(target, parent.name.text);
    if (ts.isVariableDeclaration(parent) && parent.initializer === node) {
      if (ts.isIdentifier(parent.name)) return void namespaces.set(parent.name.text, target);
      if (ts.isObjectBindingPattern(parent.name)) {
        for (const e of parent.name.elements) {
          const key = e.propertyName ?? e.name;
          if (e.dotDotDotToken || !(ts.isIdentifier(key) || ts.isStringLiteral(key))) return use(target, '*');
          use(target, key.text);
        }
        return;
      }
    }
    use(target, '*');
  };

  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const target = resolve(node.moduleSpecifier.text, file);
      const clause = node.importClause;
      if (clause === undefined) return;
      if (clause.name) use(target, 'default');
      const bindings = clause.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings) && target) namespaces.set(bindings.name.text, target);
      if (bindings && ts.isNamedImports(bindings)) for (const s of bindings.elements) use(target, moduleName(s.propertyName ?? s.name));
      return;
    }
    if (ts.isExportDeclaration(node)) {
      const target =
        node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier) ? resolve(node.moduleSpecifier.text, file) : undefined;
      const clause = node.exportClause;
      if (node.moduleSpecifier && clause === undefined) {
        if (target) facts.starFrom.push(target);
        return;
      }
      if (clause && ts.isNamespaceExport(clause)) {
        facts.exports.set(moduleName(clause.name), lineOf(node));
        use(target, '*');
        return;
      }
      if (clause && ts.isNamedExports(clause))
        for (const s of clause.elements) {
          facts.exports.set(moduleName(s.name), lineOf(s));
          if (node.moduleSpecifier) use(target, moduleName(s.propertyName ?? s.name));
        }
      return;
    }
    if (ts.isExportAssignment(node)) {
      facts.exports.set('default', lineOf(node));
      ts.forEachChild(node, visit);
      return;
    }
    if (hasModifier(node, ts.SyntaxKind.ExportKeyword)) {
      const line = lineOf(node);
      if (hasModifier(node, ts.SyntaxKind.DefaultKeyword)) facts.exports.set('default', line);
      else if (ts.isVariableStatement(node))
        for (const d of node.declarationList.declarations) for (const n of boundNames(d.name)) facts.exports.set(n, line);
      else if (
        (ts.isFunctionDeclaration(node) ||
          ts.isClassDeclaration(node) ||
          ts.isInterfaceDeclaration(node) ||
          ts.isTypeAliasDeclaration(node) ||
          ts.isEnumDeclaration(node) ||
          ts.isModuleDeclaration(node)) &&
        node.name &&
        (ts.isIdentifier(node.name) || ts.isStringLiteral(node.name))
      )
        facts.exports.set(node.name.text, line);
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      const target = resolve(node.argument.literal.text, file);
      if (target) {
        let first = node.qualifier;
        while (first && ts.isQualifiedName(first)) first = first.left;
        use(target, first ? first.text : '*');
      }
    }
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [arg] = node.arguments;
      const target = arg && ts.isStringLiteralLike(arg) ? resolve(arg.text, file) : undefined;
      if (target) {
        const awaited = ts.isAwaitExpression(node.parent) ? node.parent : undefined;
        const all = ts.isArrayLiteralExpression(node.parent) ? promiseAllBinding(node.parent, node) : undefined;
        if (awaited) usesOfModuleValue(target, awaited);
        else if (all) for (const name of all) use(target, name);
        else use(target, '*');
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);

  // Property reads through a namespace (`ns.a`, `ns.A` in a type); anything else uses every name.
  if (namespaces.size > 0) {
    const reads = (node: ts.Node): void => {
      if (ts.isIdentifier(node) && namespaces.has(node.text)) {
        const target = namespaces.get(node.text)!;
        const parent = node.parent;
        const declaring =
          (ts.isNamespaceImport(parent) || ts.isVariableDeclaration(parent) || ts.isBindingElement(parent)) && parent.name === node;
        if (ts.isPropertyAccessExpression(parent) && parent.expression === node) use(target, parent.name.text);
        else if (ts.isQualifiedName(parent) && parent.left === node) use(target, parent.right.text);
        else if (!declaring && !(ts.isPropertyAccessExpression(parent) && parent.name === node)) use(target, '*');
      }
      ts.forEachChild(node, reads);
    };
    reads(sf);
  }
  return facts;
}

/**
 * For `const [{ a }, { b }] = await Promise.all([import('x'), import('y')])`: the names taken from
 * the element `call`, or undefined when the array is used another way.
 */
function promiseAllBinding(array: ts.ArrayLiteralExpression, call: ts.Expression): string[] | undefined {
  const promiseAll = array.parent;
  if (!ts.isCallExpression(promiseAll) || promiseAll.expression.getText() !== 'Promise.all') return undefined;
  let node: ts.Node = promiseAll.parent;
  if (!ts.isAwaitExpression(node)) return undefined;
  while (ts.isParenthesizedExpression(node.parent)) node = node.parent;
  const declaration = node.parent;
  if (!ts.isVariableDeclaration(declaration) || !ts.isArrayBindingPattern(declaration.name)) return undefined;
  const element = declaration.name.elements[array.elements.indexOf(call)];
  if (element === undefined || ts.isOmittedExpression(element)) return [];
  if (!ts.isObjectBindingPattern(element.name)) return undefined;
  const names: string[] = [];
  for (const e of element.name.elements) {
    const key = e.propertyName ?? e.name;
    if (e.dotDotDotToken || !(ts.isIdentifier(key) || ts.isStringLiteral(key))) return undefined;
    names.push(key.text);
  }
  return names;
}

/**
 * The exports of the files `checked` selects that no other file uses, in file and line order.
 * `sources` holds every file that may use one (tests and scripts included), by project path.
 */
export function unusedExports(sources: ReadonlyMap<string, string>, resolve: Resolve, checked: (file: string) => boolean): ExportedName[] {
  const facts = new Map([...sources].map(([file, source]) => [file, factsOf(file, source, resolve)]));
  const used = new Set<string>();
  const mark = (file: string, name: string, seen = new Set<string>()): void => {
    const key = `${file}\0${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    used.add(key);
    const f = facts.get(file);
    if (f === undefined) return;
    if (name === '*') for (const own of f.exports.keys()) used.add(`${file}\0${own}`);
    // A name this file does not declare itself comes through its `export *` (never `default`).
    if (name === '*' || (!f.exports.has(name) && name !== 'default')) for (const from of f.starFrom) mark(from, name, seen);
  };
  for (const f of facts.values()) for (const [file, name] of f.uses) mark(file, name);
  return [...facts]
    .filter(([file]) => checked(file))
    .flatMap(([file, f]) => [...f.exports].map(([name, line]) => ({ file, name, line })))
    .filter((e) => !used.has(`${e.file}\0${e.name}`))
    .sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line));
}
