/**
 * Just enough of Bicep's lexical structure to check templates without the Bicep CLI (which cannot be
 * installed on these machines): comments, strings (with interpolation and the ''' form), top-level
 * statements, and the declarations the checks look at.
 */

export interface Lexed {
  /** The source with comments blanked (same length and line breaks): patterns match code, not prose. */
  code: string;
  /** As `code`, with string contents blanked too: brackets and keywords here are real syntax. */
  masked: string;
}

type Frame = { kind: 'code'; depth: number } | { kind: 'string' };

export const lex = (source: string): Lexed => {
  let code = '';
  let masked = '';
  const blank = (text: string) => text.replace(/[^\n]/g, ' ');
  const stack: Frame[] = [{ kind: 'code', depth: 0 }];
  let i = 0;
  while (i < source.length) {
    const frame = stack[stack.length - 1]!;
    const char = source[i]!;
    const inString = stack.some((f) => f.kind === 'string');
    if (frame.kind === 'string') {
      if (char === '\\') {
        const escape = source.slice(i, i + 2);
        code += escape;
        masked += blank(escape);
        i += escape.length;
      } else if (char === "'") {
        stack.pop();
        code += char;
        masked += stack.some((f) => f.kind === 'string') ? ' ' : char;
        i += 1;
      } else if (source.startsWith('${', i)) {
        stack.push({ kind: 'code', depth: 0 });
        code += '${';
        masked += '  ';
        i += 2;
      } else {
        code += char;
        masked += blank(char);
        i += 1;
      }
      continue;
    }
    if (source.startsWith("'''", i)) {
      const end = source.indexOf("'''", i + 3);
      const stop = end < 0 ? source.length : end + 3;
      const literal = source.slice(i, stop);
      code += literal;
      masked += inString ? blank(literal) : `'${blank(literal.slice(1, -1))}'`;
      i = stop;
    } else if (char === "'") {
      stack.push({ kind: 'string' });
      code += char;
      masked += inString ? ' ' : char;
      i += 1;
    } else if (source.startsWith('//', i)) {
      const end = source.indexOf('\n', i);
      const stop = end < 0 ? source.length : end;
      code += blank(source.slice(i, stop));
      masked += blank(source.slice(i, stop));
      i = stop;
    } else if (source.startsWith('/*', i)) {
      const end = source.indexOf('*/', i + 2);
      const stop = end < 0 ? source.length : end + 2;
      code += blank(source.slice(i, stop));
      masked += blank(source.slice(i, stop));
      i = stop;
    } else if (char === '}' && frame.depth === 0 && stack.length > 1) {
      // the end of an interpolation: back inside the string
      stack.pop();
      code += char;
      masked += ' ';
      i += 1;
    } else {
      if (char === '{') frame.depth += 1;
      if (char === '}') frame.depth -= 1;
      code += char;
      masked += inString ? blank(char) : char;
      i += 1;
    }
  }
  return { code, masked };
};

export interface Statement {
  /** The statement's code (comments blanked), trimmed. */
  text: string;
  /** 1-based line of its first character. */
  line: number;
}

/** Top-level statements: Bicep ends a statement at a line break outside brackets. */
export const statements = (source: string): Statement[] => {
  const { code, masked } = lex(source);
  const result: Statement[] = [];
  let depth = 0;
  let start = 0;
  const push = (end: number) => {
    const raw = code.slice(start, end);
    const text = raw.trim();
    if (text) {
      const offset = start + raw.indexOf(text);
      result.push({ text, line: code.slice(0, offset).split('\n').length });
    }
  };
  for (let i = 0; i < masked.length; i += 1) {
    const char = masked[i]!;
    if ('([{'.includes(char)) depth += 1;
    else if (')]}'.includes(char)) depth -= 1;
    else if (char === '\n' && depth === 0) {
      push(i);
      start = i + 1;
    }
  }
  push(masked.length);
  return result;
};

export interface ParamDeclaration {
  name: string;
  /** The decorators written above it, e.g. `@description('…')`. */
  decorators: string[];
  /** The declaration itself: `param name type [= default]`. */
  text: string;
  line: number;
}

/** The `param` declarations of a .bicep file with their decorators. */
export const paramDeclarations = (source: string): ParamDeclaration[] => {
  const result: ParamDeclaration[] = [];
  let decorators: string[] = [];
  for (const statement of statements(source)) {
    if (statement.text.startsWith('@')) {
      decorators.push(statement.text);
      continue;
    }
    const match = /^param\s+(\w+)\b/.exec(statement.text);
    if (match) result.push({ name: match[1]!, decorators, text: statement.text, line: statement.line });
    decorators = [];
  }
  return result;
};

const all = (pattern: RegExp, text: string) => [...text.matchAll(pattern)];

/** `resource symbol 'Type@version'` (existing ones too), from the comment-free code. */
export const resourceTypes = (source: string) =>
  all(/\bresource\s+(\w+)\s+'([^']*)'/g, lex(source).code).map((match) => ({ symbol: match[1]!, type: match[2]! }));

/** `module symbol '<path or registry reference>'`. */
export const moduleReferences = (source: string) =>
  all(/\bmodule\s+(\w+)\s+'([^']*)'/g, lex(source).code).map((match) => ({ symbol: match[1]!, reference: match[2]! }));

/** Files loaded at compile time: loadTextContent / loadJsonContent / loadYamlContent / loadFileAsBase64. */
export const loadedFiles = (source: string) =>
  all(/\b(loadTextContent|loadJsonContent|loadYamlContent|loadFileAsBase64)\(\s*'([^']*)'/g, lex(source).code).map((match) => ({
    fn: match[1]!,
    path: match[2]!,
  }));

/** The string literals of a top-level `var <name> = [...]`, or undefined when there is none. */
export const stringArrayVariable = (source: string, name: string): string[] | undefined => {
  const declaration = statements(source).find((statement) => new RegExp(`^var\\s+${name}\\s*=\\s*\\[`).test(statement.text));
  return declaration && all(/'([^'$]*)'/g, declaration.text).map((match) => match[1]!);
};

/** `using '<file>'` of a .bicepparam file. */
export const usingTarget = (source: string) => /^using\s+'([^']+)'/m.exec(lex(source).code)?.[1];

/** The assignments of a .bicepparam file: `param name = expression`. */
export const paramAssignments = (source: string) =>
  statements(source)
    .map((statement) => /^param\s+(\w+)\s*=\s*([\s\S]*)$/.exec(statement.text))
    .filter((match): match is RegExpExecArray => match !== null)
    .map((match) => ({ name: match[1]!, value: match[2]!.trim() }));

/** A Bicep literal read as data: strings, numbers, booleans, null, objects and arrays. */
export type BicepValue = string | number | boolean | null | BicepValue[] | { [key: string]: BicepValue };

/**
 * The value of a top-level `var <name> = <literal>`, read as data. A bare identifier naming another
 * top-level var is replaced by that var's value; anything else that is not a literal (a function
 * call, an interpolation, a parameter) makes the result undefined, so a check never passes on an
 * expression it could not read.
 */
export const literalVariable = (source: string, name: string, seen: ReadonlySet<string> = new Set()): BicepValue | undefined => {
  if (seen.has(name)) return undefined;
  const declaration = statements(source).find((statement) => new RegExp(`^var\\s+${name}\\s*=`).test(statement.text));
  if (!declaration) return undefined;
  const text = declaration.text.replace(new RegExp(`^var\\s+${name}\\s*=`), '');
  const tokens = [...text.matchAll(/'(?:[^'\\]|\\.)*'|-?\d+(?:\.\d+)?|[A-Za-z_]\w*|\n|\S/g)].map((match) => match[0]);
  let at = 0;
  const skipSeparators = () => {
    while (tokens[at] === '\n' || tokens[at] === ',') at += 1;
  };
  const fail = (): never => {
    throw new Error('not a literal');
  };
  const value = (): BicepValue => {
    while (tokens[at] === '\n') at += 1;
    const token = tokens[at++] ?? fail();
    if (token.startsWith("'")) {
      if (token.includes('${')) fail();
      return token.slice(1, -1).replace(/\\(.)/g, (_, char: string) => (char === 'n' ? '\n' : char === 't' ? '\t' : char));
    }
    if (/^-?\d/.test(token)) return Number(token);
    if (token === 'true' || token === 'false') return token === 'true';
    if (token === 'null') return null;
    if (token === '{') {
      const object: Record<string, BicepValue> = {};
      for (skipSeparators(); tokens[at] !== '}'; skipSeparators()) {
        const key = tokens[at++] ?? fail();
        if (tokens[at++] !== ':') fail();
        object[key.startsWith("'") ? key.slice(1, -1) : key] = value();
      }
      at += 1;
      return object;
    }
    if (token === '[') {
      const array: BicepValue[] = [];
      for (skipSeparators(); tokens[at] !== ']'; skipSeparators()) array.push(value());
      at += 1;
      return array;
    }
    if (/^[A-Za-z_]\w*$/.test(token) && tokens[at] !== '(' && tokens[at] !== '.') {
      return literalVariable(source, token, new Set([...seen, name])) ?? fail();
    }
    return fail();
  };
  try {
    const result = value();
    while (tokens[at] === '\n') at += 1;
    return at === tokens.length ? result : undefined;
  } catch {
    return undefined;
  }
};
