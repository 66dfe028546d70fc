/**
 * The TypeScript sources of a folder and what they import, read with the compiler's parser (so
 * comments and strings never count): static imports and re-exports, `import type` included,
 * dynamic `import()` and `require()`.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import ts from 'typescript';

export const repoRoot = resolve(__dirname, '../..');

/** Every .ts file under `folder` (relative to the repository), sorted. */
export const sourceFiles = (folder: string): string[] => {
  const found: string[] = [];
  const walk = (path: string) => {
    for (const name of readdirSync(path)) {
      const child = join(path, name);
      if (statSync(child).isDirectory()) walk(child);
      else if (name.endsWith('.ts')) found.push(child);
    }
  };
  walk(join(repoRoot, folder));
  return found.sort();
};

export const parse = (fileName: string, text = readFileSync(fileName, 'utf8')) => ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);

/** The module specifiers a source imports, each once, in order of appearance. */
export const importsOf = (source: ts.SourceFile): string[] => {
  const found = new Set<string>();
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      found.add(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference) && ts.isStringLiteral(node.moduleReference.expression)) {
      found.add(node.moduleReference.expression.text);
    } else if (ts.isCallExpression(node) && (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))) {
      const [first] = node.arguments;
      if (first && ts.isStringLiteralLike(first)) found.add(first.text);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      found.add(node.argument.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return [...found];
};

/** The file a relative specifier names (`./x` → x.ts or x/index.ts), or undefined. */
export const resolveRelative = (fromFile: string, specifier: string): string | undefined => {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(fromFile), specifier);
  return [`${base}.ts`, join(base, 'index.ts'), base].find((path) => path.endsWith('.ts') && existsSync(path));
};

/** Each source under `folder` and the sources under `folder` it imports by relative path. */
export const importGraph = (folder: string): Map<string, string[]> =>
  new Map(
    sourceFiles(folder).map((file) => [
      file,
      importsOf(parse(file))
        .map((specifier) => resolveRelative(file, specifier))
        .filter((target): target is string => target !== undefined),
    ]),
  );

/**
 * The import cycles of a graph: each group of sources that reach one another (Tarjan's strongly
 * connected components of more than one source, or a source importing itself), as one path around.
 */
export const findCycles = (graph: ReadonlyMap<string, readonly string[]>): string[][] => {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)?.includes(node)) groups.push(group);
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  // One path around each group: from its first member, following imports inside the group back to it.
  return groups.map((group) => {
    const members = new Set(group);
    const start = [...group].sort()[0]!;
    const path = [start];
    const seen = new Set([start]);
    const walk = (node: string): boolean => {
      for (const next of graph.get(node) ?? []) {
        if (next === start) return true;
        if (!members.has(next) || seen.has(next)) continue;
        seen.add(next);
        path.push(next);
        if (walk(next)) return true;
        path.pop();
      }
      return false;
    };
    walk(start);
    return [...path, start];
  });
};
