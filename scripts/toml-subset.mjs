/**
 * The part of TOML that gitleaks' configuration uses: comments, `key = value` with
 * '''literal''', 'literal' and "basic" strings, numbers, booleans, (multi-line) arrays,
 * `[table]`, `[[array.of.tables]]`. Anything else throws, naming the line.
 */
export function parseTomlSubset(text) {
  const root = {};
  let current = root;
  let i = 0;
  const n = text.length;

  const line = () => text.slice(0, i).split('\n').length;
  const fail = (msg) => {
    throw new Error(`TOML line ${line()}: ${msg}`);
  };

  function skipSpaceAndComments(newlines) {
    for (;;) {
      while (i < n && (text[i] === ' ' || text[i] === '\t' || text[i] === '\r' || (newlines && text[i] === '\n'))) i++;
      if (text[i] === '#') {
        while (i < n && text[i] !== '\n') i++;
        continue;
      }
      return;
    }
  }

  function parseString() {
    if (text.startsWith("'''", i)) {
      const end = text.indexOf("'''", i + 3);
      if (end < 0) fail('unterminated literal string');
      let s = text.slice(i + 3, end);
      if (s.startsWith('\n')) s = s.slice(1);
      i = end + 3;
      return s;
    }
    if (text[i] === "'") {
      const end = text.indexOf("'", i + 1);
      const s = text.slice(i + 1, end);
      i = end + 1;
      return s;
    }
    if (text[i] === '"') {
      i++;
      let s = '';
      while (i < n && text[i] !== '"') {
        if (text[i] === '\\') {
          const e = text[i + 1];
          const simple = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', b: '\b', f: '\f' };
          if (e in simple) {
            s += simple[e];
            i += 2;
          } else if (e === 'u') {
            s += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
            i += 6;
          } else fail(`unknown escape \\${e}`);
        } else s += text[i++];
      }
      i++;
      return s;
    }
    fail('expected a string');
  }

  function parseValue() {
    skipSpaceAndComments(false);
    const c = text[i];
    if (c === "'" || c === '"') return parseString();
    if (c === '[') {
      i++;
      const arr = [];
      for (;;) {
        skipSpaceAndComments(true);
        if (text[i] === ']') {
          i++;
          return arr;
        }
        arr.push(parseValue());
        skipSpaceAndComments(true);
        if (text[i] === ',') i++;
        else if (text[i] !== ']') fail('expected , or ]');
      }
    }
    const m = /^(true|false|[+-]?\d+(\.\d+)?)/.exec(text.slice(i, i + 40));
    if (!m) fail('unsupported value');
    i += m[0].length;
    return m[1] === 'true' ? true : m[1] === 'false' ? false : Number(m[1]);
  }

  function tablePath(s) {
    return s.split('.').map((p) => p.trim());
  }

  while (i < n) {
    skipSpaceAndComments(true);
    if (i >= n) break;
    if (text.startsWith('[[', i)) {
      const end = text.indexOf(']]', i);
      const path = tablePath(text.slice(i + 2, end));
      i = end + 2;
      let parent = root;
      for (const key of path.slice(0, -1)) {
        const v = parent[key];
        parent = Array.isArray(v) ? v[v.length - 1] : v;
        if (!parent) fail(`no parent table for ${path.join('.')}`);
      }
      const last = path[path.length - 1];
      parent[last] ??= [];
      current = {};
      parent[last].push(current);
      continue;
    }
    if (text[i] === '[') {
      const end = text.indexOf(']', i);
      const path = tablePath(text.slice(i + 1, end));
      i = end + 1;
      let t = root;
      for (const key of path) t = t[key] ??= {};
      current = t;
      continue;
    }
    const m = /^([A-Za-z0-9_-]+)\s*=/.exec(text.slice(i, i + 80));
    if (!m) fail('expected key = value');
    i += m[0].length;
    current[m[1]] = parseValue();
  }
  return root;
}
