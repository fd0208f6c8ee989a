/**
 * What a shell command line reaches, read from its text before it runs: the simple commands
 * in it (through `;`, `&&`, pipes, subshells, `$(…)`, backquotes, `sh -c '…'`, `eval`,
 * `xargs`, `env`, `sudo`, `timeout`…), the git invocations among them, and the files they
 * would write (redirections, tee, sed -i, perl -i, rm, mv, cp, touch, dd…) or read (cat,
 * less, head, grep, source, `<`…).
 *
 * hermesd's own terminal judges a command by content after it ran (src/guard/protect.ts); an
 * agent's shell runs outside hermesd, so its hook can only judge the text. Words hermesd
 * cannot resolve (variables other than HOME and PWD, command output) are left out rather
 * than guessed: a judgement never denies on a guess.
 */
import { homedir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';

/** A file a command would write or read: absolute path, and the part of the command that does it. */
export type Reach = { path: string; via: string; glob?: boolean; delete?: boolean };

/** A git invocation: its arguments after `git`, the variables set for it, the directory it runs in. */
export type GitCall = { argv: string[]; env: Record<string, string>; cwd: string; text: string };

export type ShellReach = { writes: Reach[]; reads: Reach[]; git: GitCall[] };

/** How deep `sh -c`, `eval`, `$(…)` may nest before the rest is left unjudged (a command line is not a program). */
const MAX_DEPTH = 8;

type Word = {
  /** The word after quote removal, with HOME/PWD expanded. */
  text: string;
  /** False when part of it is a variable, a command's output or arithmetic hermesd cannot know. */
  known: boolean;
  /** Unquoted glob characters (`*`, `?`, `[`). */
  glob: boolean;
};

type Redirect = { op: string; target?: Word };

type Token = { t: 'word'; w: Word } | { t: 'op'; op: string } | { t: 'redir'; r: Redirect };

type Simple = { words: Word[]; redirects: Redirect[] };

type Ctx = { cwd: string; env: Record<string, string>; depth: number; out: ShellReach; home: string };

const OPERATORS = ['&&', '||', ';;', '|&', ';', '|', '&', '(', ')', '\n'];
const REDIRECTS = ['<<<', '<<-', '&>>', '<<', '<>', '<&', '>>', '>&', '>|', '&>', '<', '>'];
const RESERVED = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  'for',
  'in',
  'case',
  'esac',
  '{',
  '}',
  '!',
  'function',
  'select',
  'coproc',
  '[[',
  ']]',
]);

/** Everything a command line reaches; `cwd` is where it starts. */
export function analyseShell(command: string, cwd: string, opts: { home?: string } = {}): ShellReach {
  const out: ShellReach = { writes: [], reads: [], git: [] };
  run(command, { cwd, env: {}, depth: 0, out, home: opts.home ?? homedir() });
  return out;
}

function run(text: string, ctx: Ctx): void {
  if (ctx.depth > MAX_DEPTH) return;
  const tokens = tokenize(text, ctx);
  let current: Simple = { words: [], redirects: [] };
  const flush = () => {
    if (current.words.length || current.redirects.length) simple(current, ctx);
    current = { words: [], redirects: [] };
  };
  for (const tok of tokens) {
    if (tok.t === 'op') flush();
    else if (tok.t === 'redir') current.redirects.push(tok.r);
    else if (current.words.length === 0 && RESERVED.has(tok.w.text) && tok.w.known) continue;
    else current.words.push(tok.w);
  }
  flush();
}

// ---- tokenizer ---------------------------------------------------------------------------

function tokenize(s: string, ctx: Ctx): Token[] {
  const tokens: Token[] = [];
  const heredocs: Array<{ delim: string }> = [];
  let i = 0;
  const n = s.length;
  while (i < n) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\r') {
      i++;
      continue;
    }
    if (c === '\\' && s[i + 1] === '\n') {
      i += 2;
      continue;
    }
    if (c === '#') {
      while (i < n && s[i] !== '\n') i++;
      continue;
    }
    if (c === '\n') {
      tokens.push({ t: 'op', op: '\n' });
      i++;
      // Here-document bodies follow the line that opened them: text, not commands.
      for (const h of heredocs.splice(0)) {
        for (;;) {
          const end = s.indexOf('\n', i);
          const line = s.slice(i, end < 0 ? n : end);
          i = end < 0 ? n : end + 1;
          if (line.replace(/^\t+/, '') === h.delim || i >= n) break;
        }
      }
      continue;
    }
    if ((c === '<' || c === '>') && s[i + 1] === '(') {
      // Process substitution `<(cmd)`: a word (readWord runs the command inside).
      const w = readWord(s, i, ctx);
      i = Math.max(w.end, i + 1);
      tokens.push({ t: 'word', w: w.word });
      continue;
    }
    const fd = /^\d+(?=[<>])/.exec(s.slice(i, i + 4));
    const at = fd ? i + fd[0].length : i;
    const redir = REDIRECTS.find((r) => s.startsWith(r, at));
    if (redir && (fd || !/^\d/.test(c))) {
      i = at + redir.length;
      while (s[i] === ' ' || s[i] === '\t') i++;
      // `>&2`, `2>&1`, `<&-`: a descriptor, not a file.
      if ((redir === '>&' || redir === '<&') && /^(\d+|-)(?![^\s;&|()<>])/.test(s.slice(i))) {
        while (i < n && /[\d-]/.test(s[i]!)) i++;
        tokens.push({ t: 'redir', r: { op: redir } });
        continue;
      }
      const w = readWord(s, i, ctx);
      i = w.end;
      if (redir === '<<' || redir === '<<-') {
        heredocs.push({ delim: w.word.text });
        tokens.push({ t: 'redir', r: { op: redir } });
      } else {
        tokens.push({ t: 'redir', r: { op: redir, target: w.word } });
      }
      continue;
    }
    const op = OPERATORS.find((o) => s.startsWith(o, i));
    if (op) {
      tokens.push({ t: 'op', op });
      i += op.length;
      continue;
    }
    const w = readWord(s, i, ctx);
    if (w.end === i) {
      i++;
      continue;
    }
    i = w.end;
    tokens.push({ t: 'word', w: w.word });
  }
  return tokens;
}

/** The index just past the `)` matching the `(` at `open`, skipping quoted text; n when unbalanced. */
function matchParen(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') i++;
    else if (c === "'") {
      const e = s.indexOf("'", i + 1);
      i = e < 0 ? s.length : e;
    } else if (c === '"') {
      i = endOfDouble(s, i + 1) - 1;
    } else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return s.length;
}

/** The index just past the closing `"` of a double-quoted string whose body starts at `i`. */
function endOfDouble(s: string, i: number): number {
  for (; i < s.length; i++) {
    const c = s[i]!;
    if (c === '\\') i++;
    else if (c === '"') return i + 1;
    else if (c === '$' && s[i + 1] === '(') i = matchParen(s, i + 1) - 1;
    else if (c === '`') {
      const e = s.indexOf('`', i + 1);
      i = e < 0 ? s.length : e;
    }
  }
  return s.length;
}

const ANSI_C: Record<string, string> = { n: '\n', t: '\t', r: '\r', '\\': '\\', "'": "'", '"': '"', a: '\x07', b: '\b', e: '\x1b', f: '\f', v: '\v' };

/** Reads one word at `start`: quotes removed, substitutions analysed (their commands run too), variables expanded where known. */
function readWord(s: string, start: number, ctx: Ctx): { word: Word; end: number } {
  let text = '';
  let known = true;
  let glob = false;
  let i = start;
  const sub = (inner: string) => run(inner, { ...ctx, depth: ctx.depth + 1, env: { ...ctx.env } });
  const variable = (i0: number): number => {
    // $NAME, ${NAME}, ${NAME:-x}, $1, $?, …
    let j = i0 + 1;
    let name = '';
    if (s[j] === '{') {
      const e = s.indexOf('}', j);
      const body = s.slice(j + 1, e < 0 ? s.length : e);
      name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(body) ? body : '';
      j = e < 0 ? s.length : e + 1;
    } else {
      const m = /^([A-Za-z_][A-Za-z0-9_]*|[0-9@*#?$!-])/.exec(s.slice(j));
      if (!m) {
        text += '$';
        return j;
      }
      name = m[1]!;
      j += m[1]!.length;
    }
    const value = name === 'HOME' ? ctx.home : name === 'PWD' ? ctx.cwd : ctx.env[name];
    if (value !== undefined) text += value;
    else known = false;
    return j;
  };
  while (i < s.length) {
    const c = s[i]!;
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === ';' || c === '&' || c === '|' || c === ')') break;
    if (c === '(' && i === start) break;
    if ((c === '<' || c === '>') && s[i + 1] === '(' && i === start) {
      // Process substitution: its command runs; the word is a pipe.
      const e = matchParen(s, i + 1);
      sub(s.slice(i + 2, e - 1));
      known = false;
      i = e;
      continue;
    }
    if (c === '<' || c === '>') break;
    if (c === '(') {
      text += c;
      i++;
      continue;
    }
    if (c === '\\') {
      if (s[i + 1] === '\n') i += 2;
      else {
        text += s[i + 1] ?? '';
        i += 2;
      }
      continue;
    }
    if (c === "'") {
      const e = s.indexOf("'", i + 1);
      text += s.slice(i + 1, e < 0 ? s.length : e);
      i = e < 0 ? s.length : e + 1;
      continue;
    }
    if (c === '$' && s[i + 1] === "'") {
      let j = i + 2;
      while (j < s.length && s[j] !== "'") {
        if (s[j] === '\\' && j + 1 < s.length) {
          text += ANSI_C[s[j + 1]!] ?? s[j + 1]!;
          j += 2;
        } else text += s[j++];
      }
      i = j + 1;
      continue;
    }
    if (c === '"') {
      const end = endOfDouble(s, i + 1);
      let j = i + 1;
      while (j < end - 1) {
        const d = s[j]!;
        if (d === '\\' && j + 1 < end - 1 && '$`"\\\n'.includes(s[j + 1]!)) {
          if (s[j + 1] !== '\n') text += s[j + 1];
          j += 2;
        } else if (d === '$' && s[j + 1] === '(' && s[j + 2] !== '(') {
          const e = matchParen(s, j + 1);
          sub(s.slice(j + 2, e - 1));
          known = false;
          j = e;
        } else if (d === '$' && s[j + 1] === '(') {
          j = matchParen(s, j + 1);
          known = false;
        } else if (d === '$') {
          j = variable(j);
        } else if (d === '`') {
          const e = s.indexOf('`', j + 1);
          sub(s.slice(j + 1, e < 0 ? end - 1 : e));
          known = false;
          j = e < 0 ? end - 1 : e + 1;
        } else {
          text += d;
          j++;
        }
      }
      i = end;
      continue;
    }
    if (c === '$' && s[i + 1] === '(' && s[i + 2] !== '(') {
      const e = matchParen(s, i + 1);
      sub(s.slice(i + 2, e - 1));
      known = false;
      i = e;
      continue;
    }
    if (c === '$' && s[i + 1] === '(') {
      i = matchParen(s, i + 1);
      known = false;
      continue;
    }
    if (c === '$') {
      i = variable(i);
      continue;
    }
    if (c === '`') {
      const e = s.indexOf('`', i + 1);
      sub(s.slice(i + 1, e < 0 ? s.length : e));
      known = false;
      i = e < 0 ? s.length : e + 1;
      continue;
    }
    if (c === '~' && i === start && (s[i + 1] === '/' || s[i + 1] === undefined || /[\s;&|)]/.test(s[i + 1]!))) {
      text += ctx.home;
      i++;
      continue;
    }
    if (c === '*' || c === '?' || c === '[') glob = true;
    text += c;
    i++;
  }
  return { word: { text, known, glob }, end: i };
}

// ---- commands ----------------------------------------------------------------------------

const ASSIGNMENT = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s;

function basename(cmd: string): string {
  return cmd.slice(cmd.lastIndexOf('/') + 1);
}

/** A path as the command names it, absolute but not normalised: `s/../x` is resolved through `s` by the judge (rules/protected-paths.ts), as open(2) does. */
function abs(ctx: Ctx, p: string): string {
  const whole = isAbsolute(p) ? p : `${ctx.cwd}/${p}`;
  return (
    '/' +
    whole
      .split('/')
      .filter((part) => part !== '' && part !== '.')
      .join('/')
  );
}

function reach(list: Reach[], ctx: Ctx, w: Word | undefined, via: string, del = false): void {
  if (!w || !w.known || w.text === '' || w.text === '-') return;
  if (/^\/dev\/(null|std(in|out|err)|tty|fd\/\d+)$/.test(w.text)) return;
  list.push({ path: abs(ctx, w.text), via, ...(w.glob ? { glob: true } : {}), ...(del ? { delete: true } : {}) });
}

/** Option parsing for the commands below: positionals, and the value of each option that takes one. */
function operands(words: Word[], withValue: string, longWithValue: string[] = []): { positionals: Word[]; values: Map<string, Word[]>; flags: string[] } {
  const positionals: Word[] = [];
  const values = new Map<string, Word[]>();
  const flags: string[] = [];
  const put = (k: string, v: Word | undefined) => {
    if (v) values.set(k, [...(values.get(k) ?? []), v]);
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    const t = w.text;
    if (t === '--') {
      positionals.push(...words.slice(i + 1));
      break;
    }
    if (t.startsWith('--') && t.length > 2) {
      const eq = t.indexOf('=');
      const name = eq < 0 ? t : t.slice(0, eq);
      flags.push(name);
      if (eq >= 0) put(name, { ...w, text: t.slice(eq + 1) });
      else if (longWithValue.includes(name)) put(name, words[++i]);
      continue;
    }
    if (t.startsWith('-') && t.length > 1 && w.known) {
      for (let j = 1; j < t.length; j++) {
        const f = t[j]!;
        flags.push('-' + f);
        if (withValue.includes(f)) {
          const rest = t.slice(j + 1);
          put('-' + f, rest ? { ...w, text: rest } : words[++i]);
          break;
        }
      }
      continue;
    }
    positionals.push(w);
  }
  return { positionals, values, flags };
}

/** Commands that print or send a file's bytes: their file operands are reads. */
const READERS = new Set([
  'cat',
  'tac',
  'nl',
  'less',
  'more',
  'most',
  'head',
  'tail',
  'bat',
  'batcat',
  'view',
  'od',
  'xxd',
  'hexdump',
  'strings',
  'base64',
  'base32',
  'cut',
  'sort',
  'uniq',
  'paste',
  'fold',
  'fmt',
  'column',
  'tr',
  'iconv',
  'grep',
  'egrep',
  'fgrep',
  'rg',
  'ag',
  'ack',
  'awk',
  'gawk',
  'mawk',
  'jq',
  'yq',
  'diff',
  'cmp',
  'comm',
  'source',
  '.',
  'scp',
  'vim',
  'vi',
  'nvim',
  'nano',
  'emacs',
  'code',
  'open',
  'xdg-open',
  'python',
  'python3',
  'node',
  'ruby',
  'perl',
  'php',
  'bash',
  'sh',
  'zsh',
]);

/** Wrappers that run the rest of their arguments as a command; the value says which options take a value. */
const WRAPPERS: Record<string, { withValue: string; longWithValue?: string[]; skipFirst?: boolean }> = {
  sudo: { withValue: 'ugpChUrtDRT', longWithValue: ['--user', '--group', '--prompt', '--chdir', '--host', '--close-from', '--role', '--type'] },
  doas: { withValue: 'uC' },
  nohup: { withValue: '' },
  time: { withValue: 'fo' },
  nice: { withValue: 'n', longWithValue: ['--adjustment'] },
  ionice: { withValue: 'cnp' },
  timeout: { withValue: 'sk', longWithValue: ['--signal', '--kill-after'], skipFirst: true },
  command: { withValue: '' },
  builtin: { withValue: '' },
  exec: { withValue: 'a' },
  stdbuf: { withValue: 'ioe', longWithValue: ['--input', '--output', '--error'] },
  xargs: {
    withValue: 'IEdaLnPs',
    longWithValue: ['--replace', '--eof', '--delimiter', '--arg-file', '--max-lines', '--max-args', '--max-procs', '--max-chars'],
  },
  watch: { withValue: 'nd', longWithValue: ['--interval'] },
  flock: { withValue: 'wEc', skipFirst: true },
  chronic: { withValue: '' },
  unbuffer: { withValue: '' },
};

const SHELLS = new Set(['sh', 'bash', 'zsh', 'dash', 'ksh', 'mksh', 'ash', 'busybox']);

function simple(cmd: Simple, ctx: Ctx): void {
  // Redirections apply to whatever the command is.
  for (const r of cmd.redirects) {
    if (!r.target) continue;
    const via = `${r.op} ${r.target.text}`;
    if (r.op === '<') reach(ctx.out.reads, ctx, r.target, via);
    else if (r.op === '<>') {
      reach(ctx.out.reads, ctx, r.target, via);
      reach(ctx.out.writes, ctx, r.target, via);
    } else if (r.op !== '<<<' && r.op !== '<&') reach(ctx.out.writes, ctx, r.target, via);
  }
  let words = cmd.words;
  const env: Record<string, string> = {};
  while (words.length && ASSIGNMENT.test(words[0]!.text)) {
    const m = ASSIGNMENT.exec(words[0]!.text)!;
    env[m[1]!] = m[2]!;
    words = words.slice(1);
  }
  if (words.length === 0) {
    // `A=b` alone sets a shell variable for the commands after it.
    Object.assign(ctx.env, env);
    return;
  }
  command(words, { ...ctx, env: { ...ctx.env, ...env } }, ctx, env);
}

/** `outer` is the sequence's context (cd and export change it); `ctx` carries this command's variables. */
function command(words: Word[], ctx: Ctx, outer: Ctx, local: Record<string, string>): void {
  const name = basename(words[0]!.text);
  const args = words.slice(1);
  const text = words.map((w) => w.text).join(' ');

  const wrapper = WRAPPERS[name];
  if (wrapper) {
    let i = 0;
    let skipped = false;
    for (; i < args.length; i++) {
      const t = args[i]!.text;
      if (t === '--') {
        i++;
        break;
      }
      if (t.startsWith('-') && t.length > 1) {
        const long = t.startsWith('--');
        if (long ? !t.includes('=') && wrapper.longWithValue?.includes(t) : wrapper.withValue.includes(t[t.length - 1]!) && t.length === 2) i++;
        continue;
      }
      if (wrapper.skipFirst && !skipped) {
        skipped = true;
        continue;
      }
      break;
    }
    const rest = args.slice(i);
    if (rest.length) command(rest, ctx, name === 'exec' || name === 'command' || name === 'builtin' ? outer : ctx, local);
    return;
  }
  if (name === 'env') {
    const e: Record<string, string> = {};
    let i = 0;
    for (; i < args.length; i++) {
      const t = args[i]!.text;
      if (t === '-u' || t === '--unset' || t === '-C' || t === '--chdir' || t === '-S') {
        i++;
        continue;
      }
      if (t.startsWith('-')) continue;
      const m = ASSIGNMENT.exec(t);
      if (!m) break;
      e[m[1]!] = m[2]!;
    }
    if (i < args.length) command(args.slice(i), { ...ctx, env: { ...ctx.env, ...e } }, ctx, { ...local, ...e });
    return;
  }
  if (name === 'cd' || name === 'pushd') {
    const target = args.find((w) => !w.text.startsWith('-'));
    if (!target) outer.cwd = ctx.home;
    // The shell's cd is logical (`cd s/..` comes back here), a file operand is not.
    else if (target.known) outer.cwd = resolve(ctx.cwd, target.text);
    return;
  }
  if (name === 'export' || name === 'declare' || name === 'typeset' || name === 'local' || name === 'readonly') {
    for (const w of args) {
      const m = ASSIGNMENT.exec(w.text);
      if (m) outer.env[m[1]!] = m[2]!;
    }
    return;
  }
  if (name === 'eval') {
    run(args.map((w) => w.text).join(' '), { ...ctx, depth: ctx.depth + 1 });
    return;
  }
  if (SHELLS.has(name)) {
    const c = args.findIndex((w) => /^-[a-z]*c[a-z]*$/.test(w.text));
    if (c >= 0 && args[c + 1]) {
      run(args[c + 1]!.text, { ...ctx, depth: ctx.depth + 1, env: { ...ctx.env } });
      return;
    }
    const script = args.find((w) => !w.text.startsWith('-'));
    reach(ctx.out.reads, ctx, script, text);
    return;
  }
  if (name === 'git') {
    const shown = [...Object.entries(local).map(([k, v]) => `${k}=${v}`), text].join(' ');
    ctx.out.git.push({ argv: args.map((w) => w.text), env: { ...local }, cwd: ctx.cwd, text: shown });
    gitWrites(args, ctx, text);
    return;
  }
  fileEffects(name, args, ctx, text);
}

/** What a git command writes in the work tree by name (`checkout -- p`, `restore p`, `rm p`, `mv a b`). */
function gitWrites(args: Word[], ctx: Ctx, text: string): void {
  let i = 0;
  let cwd = ctx.cwd;
  for (; i < args.length; i++) {
    const t = args[i]!.text;
    if (t === '-C') {
      const d = args[++i];
      if (d?.known) cwd = resolve(cwd, d.text);
      continue;
    }
    if (t === '-c' || t === '--git-dir' || t === '--work-tree' || t === '--namespace' || t === '--config-env') {
      i++;
      continue;
    }
    if (!t.startsWith('-')) break;
  }
  const sub = args[i]?.text;
  const rest = args.slice(i + 1);
  const here = { ...ctx, cwd };
  if (sub === 'rm' || sub === 'mv') {
    const ps = operands(rest, '', ['--pathspec-from-file']).positionals;
    ps.forEach((w, i) => reach(ctx.out.writes, here, w, text, sub === 'rm' || i < ps.length - 1));
  } else if (sub === 'restore') {
    for (const w of operands(rest, 's', ['--source', '--pathspec-from-file']).positionals) reach(ctx.out.writes, here, w, text);
  } else if (sub === 'checkout') {
    const dd = rest.findIndex((w) => w.text === '--');
    if (dd >= 0) for (const w of rest.slice(dd + 1)) reach(ctx.out.writes, here, w, text);
  }
}

function fileEffects(name: string, args: Word[], ctx: Ctx, text: string): void {
  const w = ctx.out.writes;
  const r = ctx.out.reads;
  switch (name) {
    case 'tee':
      for (const x of operands(args, '').positionals) reach(w, ctx, x, text);
      return;
    case 'rm':
    case 'unlink':
    case 'rmdir':
    case 'shred':
      for (const x of operands(args, name === 'shred' ? 'nsu' : '').positionals) reach(w, ctx, x, text, true);
      return;
    case 'truncate':
      for (const x of operands(args, 'sr', ['--size', '--reference']).positionals) reach(w, ctx, x, text);
      return;
    case 'touch':
      for (const x of operands(args, 'dtr', ['--date', '--reference']).positionals) reach(w, ctx, x, text);
      return;
    case 'chmod':
    case 'chown':
    case 'chgrp': {
      const o = operands(args, '', ['--reference']);
      for (const x of o.values.has('--reference') ? o.positionals : o.positionals.slice(1)) reach(w, ctx, x, text);
      return;
    }
    case 'mv': {
      const o = operands(args, 'tS', ['--target-directory', '--suffix']);
      const target = o.values.get('-t')?.[0] ?? o.values.get('--target-directory')?.[0];
      // What is moved is gone from where it was.
      o.positionals.forEach((x, i) => reach(w, ctx, x, text, !!target || i < o.positionals.length - 1));
      if (target) {
        reach(w, ctx, target, text);
        for (const x of o.positionals) if (x.known && target.known) reach(w, ctx, { ...x, text: `${target.text}/${basename(x.text)}` }, text);
      } else if (o.positionals.length >= 2) {
        const dest = o.positionals[o.positionals.length - 1]!;
        for (const x of o.positionals.slice(0, -1)) if (x.known && dest.known) reach(w, ctx, { ...x, text: `${dest.text}/${basename(x.text)}` }, text);
      }
      return;
    }
    case 'cp':
    case 'ln':
    case 'install':
    case 'rsync': {
      const o = operands(args, name === 'install' ? 'tmogS' : 'tS', ['--target-directory', '--suffix', '--mode', '--owner', '--group']);
      const target = o.values.get('-t')?.[0] ?? o.values.get('--target-directory')?.[0];
      const sources = target ? o.positionals : o.positionals.slice(0, -1);
      const dest = target ?? (o.positionals.length >= 2 ? o.positionals[o.positionals.length - 1] : undefined);
      if (name !== 'ln') for (const x of sources) reach(r, ctx, x, text);
      if (dest) {
        reach(w, ctx, dest, text);
        for (const x of sources) if (x.known && dest.known) reach(w, ctx, { ...x, text: `${dest.text}/${basename(x.text)}` }, text);
      }
      return;
    }
    case 'dd':
      for (const x of args) {
        if (x.text.startsWith('of=')) reach(w, ctx, { ...x, text: x.text.slice(3) }, text);
        if (x.text.startsWith('if=')) reach(r, ctx, { ...x, text: x.text.slice(3) }, text);
      }
      return;
    case 'sed': {
      const o = operands(args, 'efl', ['--expression', '--file', '--line-length']);
      const inPlace = o.flags.some((f) => f === '-i' || f === '--in-place');
      const files = o.values.has('-e') || o.values.has('--expression') || o.values.has('-f') || o.values.has('--file') ? o.positionals : o.positionals.slice(1);
      for (const x of files) reach(inPlace ? w : r, ctx, x, text);
      return;
    }
    case 'perl': {
      const o = operands(args, 'eEIMmlx0');
      const inPlace = o.flags.includes('-i');
      const files = o.values.has('-e') || o.values.has('-E') ? o.positionals : o.positionals.slice(1);
      for (const x of files) reach(inPlace ? w : r, ctx, x, text);
      return;
    }
    case 'curl': {
      const o = operands(args, 'dFToHXuAeErwxU', [
        '--data',
        '--data-binary',
        '--data-raw',
        '--data-ascii',
        '--data-urlencode',
        '--form',
        '--upload-file',
        '--output',
        '--header',
        '--request',
        '--user',
      ]);
      for (const k of ['-d', '--data', '--data-binary', '--data-ascii', '--data-urlencode', '-F', '--form']) {
        for (const x of o.values.get(k) ?? []) {
          const at = x.text.indexOf('@');
          if (at >= 0 && (k === '-F' || k === '--form' || at === 0 || k === '--data-urlencode'))
            reach(r, ctx, { ...x, text: x.text.slice(at + 1).split(';')[0]! }, text);
        }
      }
      for (const k of ['-T', '--upload-file']) for (const x of o.values.get(k) ?? []) reach(r, ctx, x, text);
      for (const k of ['-o', '--output']) for (const x of o.values.get(k) ?? []) reach(w, ctx, x, text);
      return;
    }
    default:
      if (READERS.has(name)) {
        // grep PATTERN files, awk PROGRAM files, jq FILTER files: the first operand is not a file, which the
        // secret-file test ignores anyway (a pattern is not a secret path); every operand is considered.
        for (const x of operands(
          args,
          name === 'head' || name === 'tail' ? 'nc' : name === 'grep' || name === 'egrep' || name === 'fgrep' || name === 'rg' ? 'efmABC' : '',
        ).positionals)
          reach(r, ctx, x, text);
      }
  }
}
