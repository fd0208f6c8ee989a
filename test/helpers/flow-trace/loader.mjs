/**
 * Module hooks for the flow trace (test/architecture/flows-enter-each-folder-once.test.ts):
 * every function of dist/src/ gets, as its first statement, a call to `globalThis.__flowEnter`
 * (set by preload.mjs). TypeScript's parser reads the built JavaScript; nothing else changes.
 */
import ts from 'typescript';

const SRC = new URL('../../../dist/src/', import.meta.url).href;

const isFunction = (n) =>
  ts.isFunctionDeclaration(n) ||
  ts.isFunctionExpression(n) ||
  ts.isArrowFunction(n) ||
  ts.isMethodDeclaration(n) ||
  ts.isConstructorDeclaration(n) ||
  ts.isGetAccessor(n) ||
  ts.isSetAccessor(n);

export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (!url.startsWith(SRC) || !url.endsWith('.js')) return loaded;
  const text = typeof loaded.source === 'string' ? loaded.source : Buffer.from(loaded.source).toString('utf8');
  const file = ts.createSourceFile(url, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const edits = [];
  const visit = (n) => {
    if (isFunction(n) && n.body) {
      if (ts.isBlock(n.body)) edits.push([n.body.getStart(file) + 1, 'globalThis.__flowEnter?.();']);
      else {
        edits.push([n.body.getStart(file), '(globalThis.__flowEnter?.(), ']);
        edits.push([n.body.end, ')']);
      }
    }
    ts.forEachChild(n, visit);
  };
  visit(file);
  edits.sort((a, b) => b[0] - a[0]);
  let out = text;
  for (const [at, insert] of edits) out = out.slice(0, at) + insert + out.slice(at);
  return { ...loaded, source: out, shortCircuit: true };
}
