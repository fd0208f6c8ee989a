/**
 * Edits of a user's JSON (or JSON-with-comments) config file that change nothing of theirs,
 * on `jsonc-parser` (the parser and editor VS Code uses): it parses the file (comments,
 * trailing commas), finds where an entry goes or what it spans (`modify`), and applies the
 * edit (`applyEdits`). hermesd styles the text it inserts like its neighbours — their
 * indentation, the file's line ending, one line in a one-line container — instead of
 * jsonc-parser's formatter, which would reformat the user's own lines around it; every other
 * byte (comments, key order, indentation, a missing final newline) stays.
 *
 * A file with a key twice in one object is refused: JSON leaves it undefined which one
 * counts (agents read the last, an editor may write into the first), so hermesd would be
 * adding its entries where the agent does not look.
 *
 * `insertAt`/`removeAt` return the new text; callers check with `parseJsonc` that the result
 * holds exactly what they meant (the user's values plus hermesd's) before writing it.
 */
import jsonc from 'jsonc-parser';
import { ConfigError } from '../errors/index.js';

// jsonc-parser ships CommonJS (its ESM build has extensionless imports Node cannot load).
const { applyEdits, findNodeAtLocation, modify, parseTree, printParseErrorCode } = jsonc;

export type JsonPath = Array<string | number>;

type Span = { start: number; end: number };
export type JsonNode =
  | (Span & { kind: 'object'; members: Array<{ key: string; keySpan: Span; value: JsonNode }> })
  | (Span & { kind: 'array'; items: JsonNode[] })
  | (Span & { kind: 'value'; value: unknown });

const lineOf = (text: string, offset: number): number => text.slice(0, offset).split('\n').length;

function convert(n: jsonc.Node): JsonNode {
  const span = { start: n.offset, end: n.offset + n.length };
  if (n.type === 'object') {
    return {
      ...span,
      kind: 'object',
      members: (n.children ?? []).map((p) => {
        const [k, v] = p.children!;
        return { key: k!.value as string, keySpan: { start: k!.offset, end: k!.offset + k!.length }, value: convert(v!) };
      }),
    };
  }
  if (n.type === 'array') return { ...span, kind: 'array', items: (n.children ?? []).map(convert) };
  return { ...span, kind: 'value', value: n.value };
}

/** The first key that appears twice in one object, with the lines of both, or undefined. */
function duplicateKey(text: string, n: jsonc.Node, path: string[] = []): { path: string; lines: [number, number] } | undefined {
  if (n.type === 'object') {
    const seen = new Map<string, number>();
    for (const p of n.children ?? []) {
      const k = p.children![0]!;
      const key = k.value as string;
      const at = seen.get(key);
      if (at !== undefined) return { path: [...path, key].join('.'), lines: [lineOf(text, at), lineOf(text, k.offset)] };
      seen.set(key, k.offset);
    }
    for (const p of n.children ?? []) {
      const found = p.children![1] && duplicateKey(text, p.children![1], [...path, p.children![0]!.value as string]);
      if (found) return found;
    }
  } else if (n.type === 'array') {
    for (const [i, c] of (n.children ?? []).entries()) {
      const found = duplicateKey(text, c, [...path, String(i)]);
      if (found) return found;
    }
  }
  return undefined;
}

/** Parses JSON with `//` and `/* *\/` comments and trailing commas (what JSONC editors accept); refuses a key given twice. */
export function parseJsonc(text: string, file = 'the file'): { root: JsonNode; value: unknown } {
  if (text.trim() === '') return { root: { kind: 'object', start: 0, end: 0, members: [] }, value: {} };
  const errors: jsonc.ParseError[] = [];
  const tree = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false });
  if (errors.length > 0 || !tree) {
    const e = errors[0];
    const what = e
      ? printParseErrorCode(e.error)
          .replace(/([a-z])([A-Z])/g, '$1 $2')
          .toLowerCase()
      : 'no JSON value';
    throw new ConfigError(`${file} is not valid JSON (line ${e ? lineOf(text, e.offset) : 1}): ${what}. Fix it, then run hermesd init --agents again.`);
  }
  const dup = duplicateKey(text, tree);
  if (dup) {
    throw new ConfigError(
      `${file} has the key "${dup.path}" twice (${dup.lines[0] === dup.lines[1] ? `line ${dup.lines[0]}` : `lines ${dup.lines[0]} and ${dup.lines[1]}`}): agents read the last one, so entries added to the first would be ignored. Keep one, then run hermesd init --agents again.`,
    );
  }
  const root = convert(tree);
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
function styleOf(text: string): { eol: string; unit: string } {
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
  return JSON.stringify(value, null, style.unit)
    .split('\n')
    .join(style.eol + indent);
}

/**
 * Inserts `entry` at the end of the container at `path` (an object member `{key, value}` or
 * an array element `{value}`). Returns the new text.
 */
export function insertAt(text: string, path: JsonPath, entry: { key?: string; value: unknown }): string {
  const tree = parseTree(text, [], { allowTrailingComma: true })!;
  const node = path.length === 0 ? tree : findNodeAtLocation(tree, path);
  if (!node || (node.type !== 'object' && node.type !== 'array')) throw new Error('insertAt: not a container');
  // Where jsonc-parser puts the entry (after the last child, or just inside an empty container).
  const [edit] = modify(text, [...path, entry.key ?? -1], entry.value, {});
  if (!edit) return text;
  const style = styleOf(text);
  const children = (node.children ?? []).map((c) => ({ start: c.offset, end: c.offset + c.length }));
  const keyText = (inline: boolean) => (entry.key === undefined ? '' : JSON.stringify(entry.key) + (inline ? ':' : ': '));
  if (children.length === 0) {
    const start = node.offset;
    const close = node.offset + node.length - 1; // the closing bracket
    const outer = lineIndent(text, start);
    const inner = outer + style.unit;
    const body = style.eol + inner + keyText(false) + render(entry.value, inner, style, false) + style.eol + outer;
    // Whatever sat between the brackets (spaces, a comment) stays before the new entry.
    const between = text.slice(start + 1, close);
    const keep = between.trim() === '' ? '' : between.replace(/\s+$/, '');
    return applyEdits(text, [{ offset: start + 1, length: close - start - 1, content: keep + body }]);
  }
  const last = children[children.length - 1]!;
  const first = children[0]!;
  const multiline = startsLine(text, last.start) || startsLine(text, first.start);
  let content: string;
  if (!multiline) {
    // A one-line container: one more entry on that line, spaced as its neighbours are.
    // Minified stays minified; `{ "a": 1, "b": 2 }` gets its comma and space.
    const sep = /[,:] /.test(text.slice(node.offset, node.offset + node.length)) ? ', ' : ',';
    content = sep + keyText(true) + render(entry.value, '', style, true);
  } else {
    const indent = lineIndent(text, last.start);
    content = ',' + style.eol + indent + keyText(false) + render(entry.value, indent, style, false);
  }
  return applyEdits(text, [{ offset: edit.offset, length: edit.length, content }]);
}

/**
 * Takes the child at `path` (a member's key or an element's index) out of the text, with its
 * separator: the comma before it (or after it, for the first) and the line break and
 * indentation that led to it; the only child of a container leaves it as it was written
 * before (`{}`, `[]`). (jsonc-parser's own removal also takes the whitespace and comments
 * around a first or last child, which may be the user's.)
 */
export function removeAt(text: string, path: JsonPath): string {
  const tree = parseTree(text, [], { allowTrailingComma: true })!;
  const parent = path.length > 1 ? findNodeAtLocation(tree, path.slice(0, -1)) : tree;
  const child = findNodeAtLocation(tree, path);
  if (!parent || !child) return text;
  // An object's children are its members (key and value); an array's, its elements.
  const spans = (parent.children ?? []).map((c) => ({ start: c.offset, end: c.offset + c.length }));
  const me = parent.type === 'object' ? child.parent! : child;
  const index = (parent.children ?? []).indexOf(me);
  if (index < 0) return text;
  const self = spans[index]!;
  if (spans.length === 1) {
    const open = parent.offset + 1;
    const close = parent.offset + parent.length - 1;
    const inner = text.slice(open, close);
    const rest = (inner.slice(0, self.start - open) + inner.slice(self.end - open)).replace(/,/, '');
    return applyEdits(text, [{ offset: open, length: close - open, content: rest.trim() === '' ? '' : rest }]);
  }
  if (index > 0) {
    const prev = spans[index - 1]!;
    // From the comma after the previous child to the end of this one; a trailing comma after it (JSONC) stays as it was.
    const comma = text.slice(prev.end, self.start).indexOf(',');
    const cut = prev.end + (comma >= 0 ? comma : 0);
    return applyEdits(text, [{ offset: cut, length: self.end - cut, content: '' }]);
  }
  return applyEdits(text, [{ offset: self.start, length: spans[1]!.start - self.start, content: '' }]);
}
