/**
 * A small, strict XML parser for the API Management policy files. The policies are deployed with
 * format "xml", which API Management reads as well-formed XML (expressions XML-escaped), so this
 * rejects what an XML parser rejects: unclosed or mismatched tags, unquoted or duplicate attributes,
 * a raw `<` in an attribute or `&` that is not a reference, text outside the root, a `--` in a comment.
 * No DTDs, no namespaces handling (names are kept as written): the policy files use neither.
 */

export interface XmlElement {
  type: 'element';
  name: string;
  attributes: Record<string, string>;
  children: XmlNode[];
  line: number;
}

export interface XmlText {
  type: 'text';
  value: string;
}

export type XmlNode = XmlElement | XmlText;

export class XmlSyntaxError extends Error {
  constructor(
    message: string,
    readonly line: number,
  ) {
    super(`line ${line}: ${message}`);
    this.name = 'XmlSyntaxError';
  }
}

const NAME = /[A-Za-z_:][A-Za-z0-9._:-]*/y;
const SPACE = /[ \t\r\n]+/y;
const PREDEFINED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };

const isXmlChar = (code: number) =>
  code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);

export const parseXml = (source: string): XmlElement => {
  let pos = 0;
  const lineAt = (at: number) => source.slice(0, at).split('\n').length;
  const fail = (message: string, at = pos): never => {
    throw new XmlSyntaxError(message, lineAt(at));
  };
  const sticky = (pattern: RegExp) => {
    pattern.lastIndex = pos;
    const match = pattern.exec(source);
    if (!match) return undefined;
    pos += match[0].length;
    return match[0];
  };
  const expect = (literal: string) => {
    if (!source.startsWith(literal, pos)) fail(`expected "${literal}"`);
    pos += literal.length;
  };
  const skipSpace = () => sticky(SPACE) !== undefined;

  /** Text with references decoded; `forbidden` characters may not appear raw. */
  const decode = (raw: string, start: number, forbidden: string): string =>
    raw.replace(/&([^;&\s]*);?|[<>"']/g, (match, name: string | undefined, offset: number) => {
      if (!match.startsWith('&')) {
        if (forbidden.includes(match)) fail(`"${match}" must be escaped here`, start + offset);
        return match;
      }
      if (!match.endsWith(';')) fail('"&" must start a reference such as &amp;', start + offset);
      const ref = name ?? '';
      if (ref in PREDEFINED) return PREDEFINED[ref]!;
      const numeric = /^#(?:x([0-9A-Fa-f]+)|([0-9]+))$/.exec(ref);
      if (!numeric) fail(`unknown entity &${ref};`, start + offset);
      const code = numeric![1] !== undefined ? parseInt(numeric![1], 16) : parseInt(numeric![2]!, 10);
      if (!isXmlChar(code)) fail(`&${ref}; is not an XML character`, start + offset);
      return String.fromCodePoint(code);
    });

  const comment = () => {
    const start = pos;
    expect('<!--');
    const end = source.indexOf('-->', pos);
    if (end < 0) fail('comment is not closed', start);
    const body = source.slice(pos, end);
    if (body.includes('--') || body.endsWith('-')) fail('"--" is not allowed inside a comment', start);
    pos = end + 3;
  };

  const processingInstruction = () => {
    const start = pos;
    expect('<?');
    const target = sticky(NAME) ?? fail('processing instruction needs a name');
    if (target.toLowerCase() === 'xml') fail('the XML declaration may only open the document', start);
    const end = source.indexOf('?>', pos);
    if (end < 0) fail('processing instruction is not closed', start);
    pos = end + 2;
  };

  const misc = () => {
    for (;;) {
      if (skipSpace()) continue;
      if (source.startsWith('<!--', pos)) comment();
      else if (source.startsWith('<?', pos)) processingInstruction();
      else return;
    }
  };

  const element = (): XmlElement => {
    const start = pos;
    expect('<');
    const name = sticky(NAME) ?? fail('expected an element name');
    const attributes: Record<string, string> = {};
    for (;;) {
      const spaced = skipSpace();
      if (source.startsWith('/>', pos) || source.startsWith('>', pos)) break;
      if (!spaced) fail(`expected whitespace before the next attribute of <${name}>`);
      const attribute = sticky(NAME) ?? fail(`expected an attribute name in <${name}>`);
      skipSpace();
      expect('=');
      skipSpace();
      const quote = source[pos];
      if (quote !== '"' && quote !== "'") fail(`attribute ${attribute} of <${name}> must be quoted`);
      const valueStart = pos + 1;
      const end = source.indexOf(quote!, valueStart);
      if (end < 0) fail(`attribute ${attribute} of <${name}> is not closed`);
      if (Object.hasOwn(attributes, attribute)) fail(`duplicate attribute ${attribute} in <${name}>`);
      attributes[attribute] = decode(source.slice(valueStart, end), valueStart, '<');
      pos = end + 1;
    }
    const node: XmlElement = { type: 'element', name, attributes, children: [], line: lineAt(start) };
    if (source.startsWith('/>', pos)) {
      pos += 2;
      return node;
    }
    expect('>');
    for (;;) {
      if (pos >= source.length) fail(`<${name}> is not closed`, start);
      if (source.startsWith('</', pos)) {
        pos += 2;
        const closing = sticky(NAME) ?? fail('expected an element name');
        if (closing !== name) fail(`</${closing}> closes <${name}> (line ${lineAt(start)})`);
        skipSpace();
        expect('>');
        return node;
      }
      if (source.startsWith('<!--', pos)) comment();
      else if (source.startsWith('<![CDATA[', pos)) {
        const end = source.indexOf(']]>', pos);
        if (end < 0) fail('CDATA section is not closed');
        node.children.push({ type: 'text', value: source.slice(pos + 9, end) });
        pos = end + 3;
      } else if (source.startsWith('<?', pos)) processingInstruction();
      else if (source.startsWith('<!', pos)) fail('declarations are not allowed inside elements');
      else if (source.startsWith('<', pos)) node.children.push(element());
      else {
        const end = source.indexOf('<', pos);
        const stop = end < 0 ? source.length : end;
        const raw = source.slice(pos, stop);
        if (raw.includes(']]>')) fail('"]]>" is not allowed in text');
        node.children.push({ type: 'text', value: decode(raw, pos, '') });
        pos = stop;
      }
    }
  };

  for (let i = 0; i < source.length; i += 1) {
    const code = source.codePointAt(i)!;
    if (code > 0xffff) i += 1;
    if (!isXmlChar(code)) fail(`character U+${code.toString(16)} is not allowed in XML`, i);
  }
  if (source.startsWith('<?xml', pos)) {
    const end = source.indexOf('?>', pos);
    if (end < 0) fail('XML declaration is not closed');
    pos = end + 2;
  }
  misc();
  if (source.startsWith('<!DOCTYPE', pos)) fail('DOCTYPE is not supported');
  if (!source.startsWith('<', pos)) fail('expected the root element');
  const root = element();
  misc();
  if (pos < source.length) fail('content after the root element');
  return root;
};

export const childElements = (element: XmlElement, name?: string): XmlElement[] =>
  element.children.filter((child): child is XmlElement => child.type === 'element' && (name === undefined || child.name === name));

/** Every element below `element` (depth first, document order), optionally of one name. */
export const descendants = (element: XmlElement, name?: string): XmlElement[] =>
  childElements(element).flatMap((child) => [...(name === undefined || child.name === name ? [child] : []), ...descendants(child, name)]);

/** The concatenated text of an element and its descendants. */
export const textOf = (element: XmlElement): string =>
  element.children.map((child) => (child.type === 'text' ? child.value : textOf(child))).join('');
