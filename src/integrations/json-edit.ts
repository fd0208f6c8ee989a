/**
 * Edits of a user's JSON (or JSON-with-comments) config file that change nothing of theirs:
 * text is only inserted (a member, an array element) or hermesd's own inserted text taken
 * out again; every other byte — comments, key order, indentation, line endings, a missing
 * final newline — stays. The text is parsed with positions; an insertion copies the
 * indentation of the neighbour it follows (or of the container, one level in) and the
 * file's line ending; a one-line container gets a one-line insertion.
 *
 * `insert`/`remove` return the new text; callers check with `parseJsonc` that the result
 * holds exactly what they meant (the user's values plus hermesd's) before writing it.
 */
import { ConfigError } from '../errors/index.js';

type Span = { start: number; end: number };
export type JsonNode =
  | (Span & { kind: 'object'; members: Array<{ key: string; keySpan: Span; value: JsonNode }> })
  | (Span & { kind: 'array'; items: JsonNode[] })
  | (Span & { kind: 'value'; value: unknown });

/** Parses JSON with `//` and `/* *\/` comments and trailing commas (what JSONC editors accept). */
export function parseJsonc(text: string, file = 'the file'): { root: JsonNode; value: unknown } {
  let i = 0;
  const fail = (what: string): never => {
    const line = text.slice(0, i).split('\n').length;
    throw new ConfigError(`${file} is not valid JSON (line ${line}): ${what}. Fix it, then run hermesd init --agents again.`);
  };
  const skip = () => {
    for (;;) {
      while (i < text.length && /\s/.test(text[i]!)) i++;
      if (text.startsWith('//', i)) {
        while (i < text.length && text[i] !== '\n') i++;
      } else if (text.startsWith('/*', i)) {
        const e = text.indexOf('*/', i + 2);
        if (e < 0) fail('a comment is not closed');
        i = e + 2;
      } else return;
    }
  };
  const str = (): string => {
    const start = i;
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i] === '\\') i++;
      i++;
    }
    if (i >= text.length) fail('a string is not closed');
    i++;
    try {
      return JSON.parse(text.slice(start, i)) as string;
    } catch {
      return fail('a string has a bad escape');
    }
  };
  const value = (): JsonNode => {
    skip();
    const start = i;
    const c = text[i];
    if (c === '{') {
      i++;
      const members: Array<{ key: string; keySpan: Span; value: JsonNode }> = [];
      for (;;) {
        skip();
        if (text[i] === '}') {
          i++;
          return { kind: 'object', start, end: i, members };
        }
        if (text[i] !== '"') fail('expected a key in quotes');
        const ks = i;
        const key = str();
        const keySpan = { start: ks, end: i };
        skip();
        if (text[i] !== ':') fail(`expected ":" after "${key}"`);
        i++;
        members.push({ key, keySpan, value: value() });
        skip();
        if (text[i] === ',') i++;
        else if (text[i] !== '}') fail('expected "," or "}"');
      }
    }
    if (c === '[') {
      i++;
      const items: JsonNode[] = [];
      for (;;) {
        skip();
        if (text[i] === ']') {
          i++;
          return { kind: 'array', start, end: i, items };
        }
        items.push(value());
        skip();
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('expected "," or "]"');
      }
    }
    if (c === '"') return { kind: 'value', start, end: i, value: str() };
    const m = /^(-?\d+(\.\d+)?([eE][+-]?\d+)?|true|false|null)/.exec(text.slice(i, i + 64));
    if (!m) return fail(`unexpected ${c === undefined ? 'end of file' : `"${c}"`}`);
    i += m[0].length;
    return { kind: 'value', start, end: i, value: JSON.parse(m[0]) };
  };
  skip();
  if (i >= text.length) return { root: { kind: 'object', start: 0, end: 0, members: [] }, value: {} };
  const root = value();
  skip();
  if (i < text.length) fail('text after the end of the document');
  return { root, value: toValue(root) };
}

export function toValue(n: JsonNode): unknown {
  if (n.kind === 'object') {
    const o: Record<string, unknown> = {};
    for (const m of n.members) o[m.key] = toValue(m.value);
    return o;
  }
  if (n.kind === 'array') return n.items.map(toValue);
  return n.value;
}

/** The node at `path` (object keys), or undefined. */
export function nodeAt(root: JsonNode, path: readonly string[]): JsonNode | undefined {
  let n: JsonNode | undefined = root;
  for (const key of path) {
    if (!n || n.kind !== 'object') return undefined;
    n = n.members.find((m) => m.key === key)?.value;
  }
  return n;
}

/** The file's style: its line ending and indentation unit (two spaces when it shows none). */
export function styleOf(text: string): { eol: string; unit: string } {
  const eol = /\r\n/.test(text) ? '\r\n' : '\n';
  const m = /\n([ \t]+)\S/.exec(text);
  let unit = '  ';
  if (m) {
    const ws = m[1]!;
    unit = ws.startsWith('\t') ? '\t' : ws.length <= 8 ? ws : '  ';
  }
  return { eol, unit };
}

/** The whitespace that starts the line `pos` is on. */
function lineIndent(text: string, pos: number): string {
  const ls = text.lastIndexOf('\n', pos - 1) + 1;
  return /^[ \t]*/.exec(text.slice(ls))![0];
}

/** Whether `pos` is the first non-blank character of its line. */
function startsLine(text: string, pos: number): boolean {
  const ls = text.lastIndexOf('\n', pos - 1) + 1;
  return text.slice(ls, pos).trim() === '';
}

/** `value` as JSON text placed at `indent`, in the file's style (one line when `inline`). */
function render(value: unknown, indent: string, style: { eol: string; unit: string }, inline: boolean): string {
  if (inline) return JSON.stringify(value);
  return JSON.stringify(value, null, style.unit).split('\n').join(style.eol + indent);
}

/**
 * Inserts `entry` at the end of the container `node` (an object member `{key, value}` or an
 * array element `{value}`). Returns the new text.
 */
export function insertInto(text: string, node: JsonNode, entry: { key?: string; value: unknown }): string {
  if (node.kind === 'value') throw new Error('insertInto: not a container');
  const style = styleOf(text);
  const children = node.kind === 'object' ? node.members.map((m) => ({ start: m.keySpan.start, end: m.value.end })) : node.items.map((n) => ({ start: n.start, end: n.end }));
  const close = node.end - 1; // the closing bracket
  const keyText = (inline: boolean) => (entry.key === undefined ? '' : JSON.stringify(entry.key) + (inline ? ':' : ': '));
  if (children.length === 0) {
    const outer = lineIndent(text, node.start);
    const inner = outer + style.unit;
    const body = style.eol + inner + keyText(false) + render(entry.value, inner, style, false) + style.eol + outer;
    // Whatever sat between the brackets (spaces, a comment) stays before the new entry.
    const between = text.slice(node.start + 1, close);
    const keep = between.trim() === '' ? '' : between.replace(/\s+$/, '');
    return text.slice(0, node.start + 1) + keep + body + text.slice(close);
  }
  const last = children[children.length - 1]!;
  const first = children[0]!;
  const multiline = startsLine(text, last.start) || startsLine(text, first.start);
  if (!multiline) {
    // A one-line container: one more entry on that line, spaced as its neighbours are.
    // Minified stays minified; `{ "a": 1, "b": 2 }` gets its comma and space.
    const sep = /[,:] /.test(text.slice(node.start, node.end)) ? ', ' : ',';
    return text.slice(0, last.end) + sep + keyText(true) + render(entry.value, '', style, true) + text.slice(last.end);
  }
  const indent = lineIndent(text, last.start);
  return text.slice(0, last.end) + ',' + style.eol + indent + keyText(false) + render(entry.value, indent, style, false) + text.slice(last.end);
}

/**
 * Takes the child at `index` of a container out of the text, with its separator: the comma
 * before it (or after it, for the first) and the line break and indentation that led to it.
 */
export function removeFrom(text: string, node: JsonNode, index: number): string {
  if (node.kind === 'value') throw new Error('removeFrom: not a container');
  const spans = node.kind === 'object' ? node.members.map((m) => ({ start: m.keySpan.start, end: m.value.end })) : node.items.map((n) => ({ start: n.start, end: n.end }));
  const me = spans[index]!;
  if (spans.length === 1) {
    // The only child: the container goes back to empty, as it was written (`{}` or `[]` keeps its own spacing).
    const open = node.start + 1;
    const close = node.end - 1;
    const inner = text.slice(open, close);
    const before = inner.slice(0, me.start - open);
    const after = inner.slice(me.end - open);
    const rest = (before + after).replace(/,/, '');
    return text.slice(0, open) + (rest.trim() === '' ? '' : rest) + text.slice(close);
  }
  if (index > 0) {
    const prev = spans[index - 1]!;
    // From the end of the previous child to the end of this one: ",<ws/comments>child".
    const gap = text.slice(prev.end, me.start);
    const comma = gap.indexOf(',');
    const cut = prev.end + (comma >= 0 ? comma : 0);
    // Comments between the comma and this child belonged to it; a trailing comma after it (JSONC) stays as it was.
    return text.slice(0, cut) + text.slice(me.end);
  }
  const next = spans[1]!;
  return text.slice(0, me.start) + text.slice(next.start);
}
