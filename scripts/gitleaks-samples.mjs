#!/usr/bin/env node
/**
 * Extracts gitleaks' rule samples — the true positives (`tps`) and false positives (`fps`)
 * each rule in cmd/generate/config/rules/*.go is validated with — as DATA into
 * test/fixtures/gitleaks-samples.json. Nothing of gitleaks is built or run: the Go files are
 * read as text and the few expressions the samples are written in are evaluated here
 * (string literals, `+`, fmt.Sprintf, []string{…}, append, the character-class helpers,
 * and secrets.NewSecret(regex), for which a random string matching the regex is generated
 * with a fixed seed). Samples built in ways this reader does not know (loops, other helpers)
 * are skipped and counted.
 *
 *   node scripts/gitleaks-samples.mjs <dir holding the rules/*.go of the pinned tag>
 *
 * The output keeps each secret value apart from the assignment templates it is shown in
 * (gitleaks' GenerateSampleSecrets list, recorded once in the file), so the corpus stays small
 * and "the value alone" and "the value in assignment context" are both measurable.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PINNED_TAG = 'v8.30.0';
const PINNED_COMMIT = '6eaad039603a4de39fddd1cf5f727391efe9974e';

/**
 * The assignment contexts gitleaks shows every sample secret in (GenerateSampleSecrets in
 * cmd/generate/config/utils/generate.go): `{i}` identifier, `{I}` upper-cased, `{s}` secret.
 */
const TEMPLATES = {
  'ini - quoted1': '{i}Token="{s}"',
  'ini - quoted2': '{i}Token = "{s}"',
  'ini - unquoted1': '{i}Token={s}',
  'ini - unquoted2': '{i}Token = {s}',
  'json - string': '{\n    "{i}_token": "{s}"\n}',
  'json - escaped newline in string': '{"config.ini": "{I}_TOKEN={s}\\nBACKUP_ENABLED=true"}',
  'xml - element multiline': '<{i}Token>\n    {s}\n</{i}Token>',
  'yaml - singleline - unquoted': '{i}_token: {s}',
  'yaml - singleline - single quote': "{i}_token: '{s}'",
  'yaml - singleline - double quote': '{i}_token: "{s}"',
  'C#': 'string {i}Token = "{s}";',
  'go - normal': 'var {i}Token string = "{s}"',
  'go - short': '{i}Token := "{s}"',
  'go - backticks': '{i}Token := `{s}`',
  java: 'String {i}Token = "{s}";',
  'kotlin - notype': 'var {i}Token = "{s}"',
  'php - string concat': '${i}Token .= "{s}"',
  'python - single quote': "{i}Token = '{s}'",
  'python - double quote': '{i}Token = "{s}"',
  'misc - comma operator': 'System.setProperty("{I}_TOKEN", "{s}")',
  logstash: '  "{i}Token" => "{s}"',
  'make - recursive assignment': '{i}_TOKEN = "{s}"',
  'make - simple assignment': '{i}_TOKEN := "{s}"',
  'make - shell assignment': '{i}_TOKEN ::= "{s}"',
  'make - evaluated shell assignment': '{i}_TOKEN :::= "{s}"',
  'make - conditional assignment': '{i}_TOKEN ?= "{s}"',
};
/** GenerateSampleSecret (singular) uses this one template. */
const SINGLE_TEMPLATE = '{i}_api_token = "{s}"';

// --- a seeded random generator (mulberry32), so regeneration is reproducible ---
let seed = 0x5eed1e;
function random() {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = (s) => s[Math.floor(random() * s.length)];

// --- random strings matching a (Go) regex: the subset the samples use ---
const CLASS = { w: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_', d: '0123456789', s: ' ' };
function expandClass(body) {
  let chars = '';
  let i = 0;
  const posix = {
    alnum: CLASS.w.replace('_', ''),
    alpha: 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ',
    digit: CLASS.d,
    upper: 'ABCDEFGHIJKLMNOPQRSTUVWXYZ',
    lower: 'abcdefghijklmnopqrstuvwxyz',
  };
  while (i < body.length) {
    if (body.startsWith('[:', i)) {
      const end = body.indexOf(':]', i);
      chars += posix[body.slice(i + 2, end)];
      i = end + 2;
      continue;
    }
    let c = body[i];
    let escaped = false;
    if (c === '\\') {
      const e = body[i + 1];
      i += 2;
      if (e in CLASS) {
        chars += CLASS[e];
        continue;
      }
      c = e;
      escaped = true;
    } else i++;
    // `\\-_` (Square's sample regex) is read as the literals, not the range \\…_: tokens hold no backslash.
    if (body[i] === '-' && i + 1 < body.length && !escaped) {
      let hi = body[i + 1];
      i += 2;
      if (hi === '\\') hi = body[i++];
      for (let k = c.charCodeAt(0); k <= hi.charCodeAt(0); k++) chars += String.fromCharCode(k);
    } else chars += c;
  }
  return chars.replaceAll('\\', '');
}

export function generate(re) {
  let i = 0;
  let ci = false;
  function atom() {
    const c = re[i];
    if (c === '(') {
      i++;
      if (re.startsWith('?:', i)) i += 2;
      else if (re.startsWith('?i)', i)) {
        i += 3;
        ci = true;
        return () => '';
      }
      const inner = alternation();
      i++; // ')'
      return inner;
    }
    if (c === '[') {
      const end = re.indexOf(']', i + 2);
      let body = re.slice(i + 1, end);
      i = end + 1;
      if (body.startsWith('^')) throw new Error('negated class in sample regex ' + re);
      const chars = expandClass(body);
      return () => pick(chars);
    }
    if (c === '\\') {
      const e = re[i + 1];
      i += 2;
      if (e in CLASS) return () => pick(CLASS[e]);
      // assertions match no character (heroku's `\b(HRKU-AA…)\b`)
      if ('bBAz'.includes(e)) return () => '';
      return () => e;
    }
    if (c === '^' || c === '$') {
      i++;
      return () => '';
    }
    if (c === '.') {
      i++;
      return () => pick(CLASS.w);
    }
    i++;
    return () => c;
  }
  function quantified() {
    const a = atom();
    let min = 1;
    let max = 1;
    const q = /^(\{(\d+)(,(\d*))?\}|[*+?])\??/.exec(re.slice(i));
    if (q) {
      i += q[0].length;
      if (q[1] === '*') [min, max] = [0, 1];
      else if (q[1] === '+') [min, max] = [1, 2];
      else if (q[1] === '?') [min, max] = [0, 1];
      else {
        min = Number(q[2]);
        max = q[3] === undefined ? min : q[4] === '' ? min + 1 : Number(q[4]);
      }
    }
    return () => {
      const k = min + Math.floor(random() * (max - min + 1));
      let s = '';
      for (let j = 0; j < k; j++) s += a();
      return s;
    };
  }
  function sequence() {
    const parts = [];
    while (i < re.length && re[i] !== '|' && re[i] !== ')') parts.push(quantified());
    return () => parts.map((p) => p()).join('');
  }
  function alternation() {
    const alts = [sequence()];
    while (re[i] === '|') {
      i++;
      alts.push(sequence());
    }
    return () => pick(alts)();
  }
  const g = alternation();
  const s = g();
  return ci ? s : s;
}

// --- a tokenizer and evaluator for the Go expressions the samples are written in ---
function tokenize(src) {
  const out = [];
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
      continue;
    }
    if (src.startsWith('/*', i)) {
      i = src.indexOf('*/', i) + 2;
      continue;
    }
    if (c === '`') {
      const end = src.indexOf('`', i + 1);
      out.push({ t: 'str', v: src.slice(i + 1, end) });
      i = end + 1;
      continue;
    }
    if (c === '"' || c === "'") {
      let j = i + 1;
      let v = '';
      while (src[j] !== c) {
        if (src[j] === '\\') {
          const e = src[j + 1];
          const simple = { n: '\n', t: '\t', r: '\r', '"': '"', "'": "'", '\\': '\\' };
          if (e in simple) {
            v += simple[e];
            j += 2;
          } else if (e === 'x') {
            v += String.fromCharCode(parseInt(src.slice(j + 2, j + 4), 16));
            j += 4;
          } else if (e === 'u') {
            v += String.fromCharCode(parseInt(src.slice(j + 2, j + 6), 16));
            j += 6;
          } else throw new Error('escape \\' + e);
        } else v += src[j++];
      }
      out.push({ t: 'str', v });
      i = j + 1;
      continue;
    }
    const id = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*/.exec(src.slice(i, i + 200));
    if (id) {
      out.push({ t: 'id', v: id[0] });
      i += id[0].length;
      continue;
    }
    const num = /^\d+(\.\d+)?/.exec(src.slice(i, i + 40));
    if (num) {
      out.push({ t: 'num', v: num[0] });
      i += num[0].length;
      continue;
    }
    const op = /^(:=|\.\.\.|&&|\|\||==|!=|[{}()[\],+=:;.*&!<>-])/.exec(src.slice(i, i + 3));
    if (!op) throw new Error('cannot tokenize at ' + src.slice(i, i + 20));
    out.push({ t: 'op', v: op[0] });
    i += op[0].length;
  }
  return out;
}

class Unsupported extends Error {}

/** A value: a string, or a list of samples ({ text, value?, identifier?, template? }). */
function evaluate(tokens, env) {
  let p = 0;
  const peek = () => tokens[p] ?? { t: 'end', v: undefined };
  const expect = (v) => {
    if (tokens[p]?.v !== v) throw new Unsupported(`expected ${v}, got ${tokens[p]?.v}`);
    p++;
  };
  const asString = (v) => {
    if (typeof v !== 'string') throw new Unsupported('expected a string');
    return v;
  };
  const asList = (v) => (typeof v === 'string' ? [{ text: v }] : v);

  function args() {
    expect('(');
    const out = [];
    let spread = false;
    while (peek().v !== ')') {
      out.push(expr());
      if (peek().v === '...') {
        p++;
        spread = true;
      }
      if (peek().v === ',') p++;
    }
    expect(')');
    return { out, spread };
  }

  function primary() {
    const tok = tokens[p++];
    if (!tok) throw new Unsupported('end of input');
    if (tok.t === 'str') return tok.v;
    if (tok.t === 'op' && tok.v === '[' && tokens[p + 1]?.v === 'byte') {
      // []byte(x): the bytes of a string, kept as the string
      expect(']');
      expect('byte');
      return args().out[0];
    }
    if (tok.t === 'op' && tok.v === '[') {
      expect(']');
      expect('string');
      expect('{');
      const items = [];
      while (peek().v !== '}') {
        items.push(...asList(expr()));
        if (peek().v === ',') p++;
      }
      expect('}');
      return items;
    }
    if (tok.t === 'id') {
      if (tok.v === 'map') {
        // map[string]string{ "path": "content", … }: the contents are the samples.
        expect('[');
        expect('string');
        expect(']');
        expect('string');
        expect('{');
        const items = [];
        while (peek().v !== '}') {
          const path = expr();
          expect(':');
          items.push(...asList(expr()).map((s) => ({ ...s, path })));
          if (peek().v === ',') p++;
        }
        expect('}');
        return items;
      }
      if (peek()?.v === '(') {
        const { out } = args();
        switch (tok.v) {
          case 'secrets.NewSecret':
            return generate(asString(out[0]));
          case 'newPlausibleSecret': {
            // generic.go: retried until it holds a digit 1-9 and none of DefaultStopWords
            for (;;) {
              const s = generate(asString(out[0]));
              if (/[1-9]/.test(s) && !DEFAULT_STOPWORDS.some((w) => s.toLowerCase().includes(w))) return s;
            }
          }
          case 'utils.Numeric':
            return `[0-9]{${out[0]}}`;
          case 'utils.Hex':
            return `[a-f0-9]{${out[0]}}`;
          case 'utils.AlphaNumeric':
            return `[a-z0-9]{${out[0]}}`;
          case 'utils.AlphaNumericExtendedShort':
            return `[a-z0-9_-]{${out[0]}}`;
          case 'utils.AlphaNumericExtended':
            return `[a-z0-9=_\\-]{${out[0]}}`;
          case 'utils.AlphaNumericExtendedLong':
            return `[a-z0-9\\/=_\\+\\-]{${out[0]}}`;
          case 'utils.Hex8_4_4_4_12':
            return '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
          case 'base64.StdEncoding.EncodeToString':
            return Buffer.from(asString(out[0])).toString('base64');
          case 'strings.Repeat':
            return asString(out[0]).repeat(Number(out[1]));
          case 'fmt.Sprintf': {
            let k = 1;
            return asString(out[0]).replace(/%[sdv]/g, () => String(out[k++]));
          }
          case 'utils.GenerateSampleSecret':
            return [
              {
                text: SINGLE_TEMPLATE.replace('{i}', asString(out[0])).replace('{s}', asString(out[1])),
                identifier: asString(out[0]),
                value: asString(out[1]),
                template: 'single',
              },
            ];
          case 'utils.GenerateSampleSecrets':
            return [{ identifier: asString(out[0]), value: asString(out[1]), template: 'all' }];
          case 'append': {
            const [base, ...rest] = out;
            return [...asList(base), ...rest.flatMap(asList)];
          }
          default:
            throw new Unsupported(`call ${tok.v}`);
        }
      }
      if (tok.v in env) return env[tok.v];
      if (tok.v === 'nil') return [];
      throw new Unsupported(`identifier ${tok.v}`);
    }
    if (tok.t === 'num') return tok.v;
    throw new Unsupported(`token ${tok.v}`);
  }

  function expr() {
    let v = primary();
    while (peek()?.v === '+') {
      p++;
      v = asString(v) + asString(primary());
    }
    return v;
  }

  const v = expr();
  if (p !== tokens.length) throw new Unsupported(`trailing ${tokens[p].v}`);
  return v;
}

/** Splits a function body's tokens into statements (top level of the body). */
function statements(tokens) {
  const out = [];
  let depth = 0;
  let cur = [];
  for (const tok of tokens) {
    if (depth === 0 && tok.nl && cur.length && !['+', ',', '(', '{', '.'].includes(cur[cur.length - 1].v)) {
      out.push(cur);
      cur = [];
    }
    // (a string literal `)` is not a bracket: generic.go's allowlist regex ends in one)
    if (tok.t !== 'str' && (tok.v === '(' || tok.v === '{' || tok.v === '[')) depth++;
    if (tok.t !== 'str' && (tok.v === ')' || tok.v === '}' || tok.v === ']')) depth--;
    cur.push(tok);
  }
  if (cur.length) out.push(cur);
  return out;
}

/** Tokens of `src` with a `nl` mark on tokens that start a new line. */
function lineTokens(src) {
  const toks = [];
  let i = 0;
  let line = 0;
  const all = tokenize(src);
  // Recover line starts by re-scanning the source for each token in order.
  let pos = 0;
  for (const tok of all) {
    const needle = tok.t === 'str' ? null : tok.v;
    if (needle) {
      const at = src.indexOf(needle, pos);
      const between = src.slice(pos, at);
      const nl = between.includes('\n');
      line += between.split('\n').length - 1;
      toks.push({ ...tok, nl, line });
      pos = at + needle.length;
    } else {
      // a string literal: find its opening quote
      const m = /["'`]/.exec(src.slice(pos));
      const at = pos + m.index;
      const between = src.slice(pos, at);
      const nl = between.includes('\n');
      line += between.split('\n').length - 1;
      const q = src[at];
      let end;
      if (q === '`') end = src.indexOf('`', at + 1) + 1;
      else {
        end = at + 1;
        while (src[end] !== q) end += src[end] === '\\' ? 2 : 1;
        end++;
      }
      line += src.slice(at, end).split('\n').length - 1;
      toks.push({ ...tok, nl, line });
      pos = end;
    }
    void i;
  }
  return toks;
}

/** `var name = x` and `var ( a = x \n b = y )` as plain `name = x` statements. */
function varDeclarations(stmt) {
  if (stmt[0]?.v !== 'var') return [stmt];
  if (stmt[1]?.v !== '(') return [stmt.slice(1)];
  const inner = stmt.slice(2, -1);
  const out = [];
  let cur = [];
  let depth = 0;
  for (const tok of inner) {
    if (depth === 0 && tok.nl && cur.length && !['+', ',', '(', '{', '.'].includes(cur[cur.length - 1].v)) {
      out.push(cur);
      cur = [];
    }
    if (tok.t !== 'str' && (tok.v === '(' || tok.v === '{' || tok.v === '[')) depth++;
    if (tok.t !== 'str' && (tok.v === ')' || tok.v === '}' || tok.v === ']')) depth--;
    cur.push(tok);
  }
  if (cur.length) out.push(cur);
  return out;
}

function stripComments(src) {
  let out = '';
  let i = 0;
  while (i < src.length) {
    const c = src[i];
    if (c === '`') {
      const end = src.indexOf('`', i + 1) + 1;
      out += src.slice(i, end);
      i = end;
    } else if (c === '"' || c === "'") {
      let end = i + 1;
      while (src[end] !== c) end += src[end] === '\\' ? 2 : 1;
      out += src.slice(i, end + 1);
      i = end + 1;
    } else if (src.startsWith('//', i)) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (src.startsWith('/*', i)) {
      const end = src.indexOf('*/', i) + 2;
      out += src.slice(i, end).replace(/[^\n]/g, ' ');
      i = end;
    } else out += src[i++];
  }
  return out;
}

const rulesDir = process.argv[2];
if (!rulesDir) {
  process.stderr.write('usage: node scripts/gitleaks-samples.mjs <cmd/generate/config/rules dir of gitleaks ' + PINNED_TAG + '>\n');
  process.exit(2);
}

/** rules/stopwords.go's DefaultStopWords (newPlausibleSecret avoids them, as gitleaks' generator does). */
const DEFAULT_STOPWORDS = (() => {
  const src = stripComments(readFileSync(join(rulesDir, 'stopwords.go'), 'utf8'));
  const body = /var DefaultStopWords = \[\]string\{([\s\S]*?)\n\}/.exec(src);
  if (!body) throw new Error('DefaultStopWords not found in stopwords.go');
  return [...body[1].matchAll(/"([^"]*)"/g)].map((m) => m[1].toLowerCase());
})();

const rules = [];
let skipped = 0;
const skippedWhy = new Map();
for (const file of readdirSync(rulesDir)
  .filter((f) => f.endsWith('.go'))
  .sort()) {
  const src = stripComments(readFileSync(join(rulesDir, file), 'utf8'));
  // Package-level `var name = …` (samples shared between rules of one file).
  const fileEnv = {};
  for (const v of src.matchAll(/^var\s+(\w+)\s*=\s*([\s\S]*?)\n\}/gm)) {
    try {
      fileEnv[v[1]] = evaluate(tokenize(v[2] + '\n}'), {});
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
  }
  const funcRe = /^func\s+\w+\(\)\s+\*config\.Rule\s*\{/gm;
  let m;
  while ((m = funcRe.exec(src))) {
    // the body: up to the matching closing brace
    let depth = 0;
    let j = m.index + m[0].length - 1;
    const start = j + 1;
    for (; j < src.length; j++) {
      const c = src[j];
      if (c === '`') j = src.indexOf('`', j + 1);
      else if (c === '"') {
        j++;
        while (src[j] !== '"') j += src[j] === '\\' ? 2 : 1;
      } else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) break;
    }
    const body = src.slice(start, j);
    const idMatch = /RuleID:\s*"([^"]+)"/.exec(body);
    if (!idMatch) continue;
    const id = idMatch[1];
    const env = { ...fileEnv };
    let tps = [];
    let fps = [];
    for (const stmt of statements(lineTokens(body)).flatMap(varDeclarations)) {
      const name = stmt[0]?.v;
      const op = stmt[1]?.v;
      if (stmt[0]?.t !== 'id' || (op !== ':=' && op !== '=')) continue;
      if (/^(r|rule)$/.test(name)) continue;
      try {
        const v = evaluate(stmt.slice(2), env);
        env[name] = v;
        if (name === 'tps') tps = v;
        if (name === 'fps') fps = v;
      } catch (e) {
        if (!(e instanceof Unsupported)) throw e;
        if (name === 'tps' || name === 'fps' || /secret|token|key/i.test(name)) {
          if (process.env.DEBUG_SAMPLES) process.stderr.write(id + ' ' + stmt.map((t) => t.v).join(' ') + '\n');
          skipped++;
          skippedWhy.set(`${id}:${name}`, e.message);
        }
      }
    }
    const asList = (v) => (typeof v === 'string' ? [{ text: v }] : v);
    const out = { id };
    const values = asList(tps)
      .filter((s) => s.template === 'all')
      .map((s) => ({ identifier: s.identifier, value: s.value }));
    const single = asList(tps)
      .filter((s) => s.template === 'single')
      .map((s) => ({ identifier: s.identifier, value: s.value }));
    const lines = asList(tps)
      .filter((s) => !s.template && s.path === undefined)
      .map((s) => s.text);
    // True positives validated with a file path (ValidateWithPaths): found only in that file.
    const pathLines = asList(tps)
      .filter((s) => !s.template && s.path !== undefined)
      .map((s) => ({ path: s.path, text: s.text }));
    if (values.length) out.values = values;
    if (single.length) out.singleValues = single;
    if (lines.length) out.lines = lines;
    if (pathLines.length) out.pathLines = pathLines;
    const fpText = (s) => s.text ?? SINGLE_TEMPLATE.replace('{i}', s.identifier).replace('{s}', s.value);
    // A negative only because of its file path (ValidateWithPaths) says nothing about text.
    const fpLines = asList(fps)
      .filter((s) => s.path === undefined)
      .map(fpText);
    const fpPaths = asList(fps)
      .filter((s) => s.path !== undefined)
      .map((s) => ({ path: s.path, text: fpText(s) }));
    if (fpLines.length) out.fps = fpLines;
    if (fpPaths.length) out.pathFps = fpPaths;
    rules.push(out);
  }
}

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'test/fixtures/gitleaks-samples.json');
// Every sample string is stored base64-encoded: the repository then holds no contiguous token
// literal for secret scanners and push protection to trip on (bench/detector-corpus.ts decodes).
const b64 = (t) => Buffer.from(t, 'utf8').toString('base64');
const encoded = rules.map((r) => ({
  ...r,
  ...(r.values && { values: r.values.map((v) => ({ ...v, value: b64(v.value) })) }),
  ...(r.singleValues && { singleValues: r.singleValues.map((v) => ({ ...v, value: b64(v.value) })) }),
  ...(r.lines && { lines: r.lines.map(b64) }),
  ...(r.pathLines && { pathLines: r.pathLines.map((l) => ({ path: l.path, text: b64(l.text) })) }),
  ...(r.fps && { fps: r.fps.map(b64) }),
  ...(r.pathFps && { pathFps: r.pathFps.map((f) => ({ path: f.path, text: b64(f.text) })) }),
}));
const data = {
  source: `gitleaks ${PINNED_TAG} (commit ${PINNED_COMMIT}), cmd/generate/config/rules/*.go, MIT licence; extracted by scripts/gitleaks-samples.mjs`,
  encoding: 'sample strings (value, lines, fps, pathFps.text) are base64 of UTF-8',
  templates: TEMPLATES,
  singleTemplate: SINGLE_TEMPLATE,
  rules: encoded,
};
writeFileSync(target, JSON.stringify(data, null, 1) + '\n');
const count = (k) => rules.reduce((n, r) => n + (r[k]?.length ?? 0), 0);
process.stdout.write(
  `wrote ${target}: ${rules.length} rules, ${count('values')} values × ${Object.keys(TEMPLATES).length} templates, ` +
    `${count('singleValues')} single-template values, ${count('lines')} literal lines (+${count('pathLines')} in a named file), ` +
    `${count('fps')} false positives ` +
    `(+${count('pathFps')} negative only by file path); ` +
    `${skipped} statements skipped\n`,
);
for (const [k, v] of skippedWhy) process.stdout.write(`  skipped ${k}: ${v}\n`);
