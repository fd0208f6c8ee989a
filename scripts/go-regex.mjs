/**
 * Go RE2 → JavaScript regular expression translation, for rule data written for Go
 * (gitleaks' configuration). Node 20 has no inline modifiers, so `(?i)`, `(?i:…)`,
 * `(?-i:…)` and `(?s…)` are rewritten: a pattern that is case-insensitive throughout keeps
 * the `i` flag; any other case-insensitive part has its letters spelt out (`a` → `[aA]`,
 * `[a-z]` → `[a-zA-Z]`). POSIX classes, `\z`, `\A` and Go's `.` (anything but `\n`) are
 * rewritten too; everything else RE2 accepts is also valid JavaScript.
 */

const POSIX = {
  alnum: 'a-zA-Z0-9',
  alpha: 'a-zA-Z',
  digit: '0-9',
  lower: 'a-z',
  upper: 'A-Z',
  space: '\\t\\n\\v\\f\\r ',
  word: '\\w',
  xdigit: '0-9A-Fa-f',
  punct: '!-\\/:-@\\[-`{-~',
};

const isLetter = (c) => /^[A-Za-z]$/.test(c);
const swapCase = (c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase());

/** Letters a class range adds under case-insensitivity, as extra class items. */
function otherCaseOfRange(lo, hi) {
  const extra = [];
  const a = lo.charCodeAt(0);
  const b = hi.charCodeAt(0);
  const overlap = (from, to) => [Math.max(a, from), Math.min(b, to)];
  const [l1, h1] = overlap(97, 122); // a-z
  if (l1 <= h1) extra.push(`${String.fromCharCode(l1 - 32)}-${String.fromCharCode(h1 - 32)}`);
  const [l2, h2] = overlap(65, 90); // A-Z
  if (l2 <= h2) extra.push(`${String.fromCharCode(l2 + 32)}-${String.fromCharCode(h2 + 32)}`);
  return extra;
}

/** One class item as it appears in a JS class, escaping what JS reads differently. */
function classChar(c) {
  return c === ']' || c === '\\' || c === '[' || c === '^' || c === '-' ? '\\' + c : c;
}

/**
 * Translates a Go regular expression. Returns `{ source, flags }` for `new RegExp`.
 * Throws on syntax this translator does not know, so a new upstream construct is
 * noticed when the data is regenerated rather than silently mistranslated.
 */
export function translateGoRegex(go) {
  // Case-insensitive throughout: a leading (?i) and no other flag group anywhere.
  const uniform = go.startsWith('(?i)') && !/\(\?(?:[a-zA-Z]+-?[a-zA-Z]*|-[a-zA-Z]+)[:)]/.test(go.slice(4));
  const body = uniform ? go.slice(4) : go;
  let i = 0;
  const n = body.length;

  function fail(msg) {
    throw new Error(`${msg} at ${i} in ${go}`);
  }

  function parseClass(flags) {
    // body[i] === '['
    i++;
    let negate = false;
    if (body[i] === '^') {
      negate = true;
      i++;
    }
    const items = [];
    let first = true;
    while (i < n && (body[i] !== ']' || first)) {
      first = false;
      let item;
      let lo;
      if (body.startsWith('[:', i)) {
        const end = body.indexOf(':]', i);
        if (end < 0) fail('unterminated POSIX class');
        const name = body.slice(i + 2, end);
        if (!(name in POSIX)) fail(`unknown POSIX class ${name}`);
        items.push(POSIX[name]);
        i = end + 2;
        continue;
      }
      if (body[i] === '\\') {
        const e = body[i + 1];
        if (e === 'x') {
          const hex = body.slice(i + 2, i + 4);
          lo = String.fromCharCode(parseInt(hex, 16));
          item = `\\x${hex}`;
          i += 4;
        } else if ('wdsWDS'.includes(e)) {
          items.push('\\' + e);
          i += 2;
          continue;
        } else if (e === 'n' || e === 't' || e === 'r' || e === 'f' || e === 'v') {
          item = '\\' + e;
          lo = { n: '\n', t: '\t', r: '\r', f: '\f', v: '\v' }[e];
          i += 2;
        } else if (/[A-Za-z0-9]/.test(e)) {
          fail(`unknown class escape \\${e}`);
        } else {
          lo = e;
          item = classChar(e);
          i += 2;
        }
      } else {
        lo = body[i];
        item = classChar(lo);
        i++;
      }
      // A range lo-hi (a '-' before ']' is a literal dash).
      if (body[i] === '-' && body[i + 1] !== ']' && i + 1 < n) {
        i++;
        let hi;
        let hiItem;
        if (body[i] === '\\') {
          const e = body[i + 1];
          if (e === 'x') {
            const hex = body.slice(i + 2, i + 4);
            hi = String.fromCharCode(parseInt(hex, 16));
            hiItem = `\\x${hex}`;
            i += 4;
          } else {
            hi = e;
            hiItem = classChar(e);
            i += 2;
          }
        } else {
          hi = body[i];
          hiItem = classChar(hi);
          i++;
        }
        items.push(`${item}-${hiItem}`);
        if (flags.i) items.push(...otherCaseOfRange(lo, hi));
        continue;
      }
      items.push(item);
      if (flags.i && isLetter(lo)) items.push(swapCase(lo));
    }
    if (body[i] !== ']') fail('unterminated class');
    i++;
    return `[${negate ? '^' : ''}${items.join('')}]`;
  }

  function parseSeq(flags, depth) {
    let out = '';
    while (i < n) {
      const c = body[i];
      if (c === ')') {
        if (depth === 0) fail('unbalanced )');
        return out;
      }
      if (c === '(') {
        if (body.startsWith('(?', i)) {
          const m = /^\(\?([a-zA-Z]*)(?:-([a-zA-Z]*))?([:)])/.exec(body.slice(i));
          const named = /^\(\?P?<([A-Za-z_][A-Za-z0-9_]*)>/.exec(body.slice(i));
          if (named) {
            i += named[0].length;
            const inner = parseSeq({ ...flags }, depth + 1);
            if (body[i] !== ')') fail('unterminated group');
            i++;
            out += `(?<${named[1]}>${inner})`;
            continue;
          }
          if (!m) fail('unknown group syntax');
          const next = { ...flags };
          for (const f of m[1]) {
            if (f !== 'i' && f !== 's') fail(`unsupported flag ${f}`);
            next[f] = true;
          }
          for (const f of m[2] ?? '') {
            if (f !== 'i' && f !== 's') fail(`unsupported flag ${f}`);
            next[f] = false;
          }
          i += m[0].length;
          if (m[3] === ')') {
            // (?i) sets flags for the rest of the enclosing group.
            Object.assign(flags, next);
            continue;
          }
          const inner = parseSeq(next, depth + 1);
          if (body[i] !== ')') fail('unterminated group');
          i++;
          out += `(?:${inner})`;
          continue;
        }
        i++;
        const inner = parseSeq({ ...flags }, depth + 1);
        if (body[i] !== ')') fail('unterminated group');
        i++;
        out += `(${inner})`;
        continue;
      }
      if (c === '[') {
        out += parseClass(flags);
        continue;
      }
      if (c === '\\') {
        const e = body[i + 1];
        if (e === 'z') out += '$';
        else if (e === 'A') out += '^';
        else if (e === 'x') {
          out += body.slice(i, i + 4);
          i += 4;
          continue;
        } else if (e === 'Q' || e === 'p' || e === 'P' || e === 'C' || e === 'K') fail(`unsupported escape \\${e}`);
        else out += '\\' + e;
        i += 2;
        continue;
      }
      if (c === '.') {
        out += flags.s ? '[\\s\\S]' : '[^\\n]';
        i++;
        continue;
      }
      if (c === '{') {
        // Quantifiers pass through; a literal brace that is not one is escaped for JS.
        const q = /^\{\d+(,\d*)?\}/.exec(body.slice(i));
        if (q) {
          out += q[0];
          i += q[0].length;
        } else {
          out += '\\{';
          i++;
        }
        continue;
      }
      if (c === '}') {
        out += '\\}';
        i++;
        continue;
      }
      if (flags.i && isLetter(c)) out += `[${c.toLowerCase()}${c.toUpperCase()}]`;
      else out += c;
      i++;
    }
    if (depth !== 0) fail('unterminated group');
    return out;
  }

  const source = parseSeq({ i: false, s: false }, 0);
  return { source, flags: uniform ? 'i' : '' };
}
