/**
 * Where two instruction files say different things on the same matter: the build, test, lint,
 * format and typecheck commands they give, and the paths they tell an agent to keep off (or to
 * edit) against the `protect` rules of the config. Plain text in, claims and conflicts out: which
 * files are compared (each agent's own files against the authority) is other-agents' business.
 *
 * Tuned to say little: a claim is only what a file states in a code span or a shell block
 * (a command) or in one sentence with a path and an edit verb (a path), a command mentioned
 * after "don't", "never", "instead of" is no claim, and two files agree on a matter as soon as
 * one command of each agrees (same tool family, or one runs the other's tool: `uv run pytest`
 * and `pytest`). What that measures on public files: docs/agents.md#drift-between-instruction-files.
 */
import { compileProtect, normalizeRelPath, type ProtectRuleSource } from '../rules/protected-paths.js';

export const MATTERS = ['build', 'test', 'lint', 'format', 'typecheck'] as const;
export type Matter = (typeof MATTERS)[number];

/** A line of a file: repository-relative path, 1-based line (0: the file as a whole), the line's text trimmed. */
export type SourceLine = { file: string; line: number; text: string };

export type CommandClaim = SourceLine & { matters: Matter[]; command: string; family: string; words: string[] };
/** `keep-off`: the file tells agents not to edit the path; `may-edit`: it tells them to, or that they may. */
export type PathClaim = SourceLine & { path: string; says: 'keep-off' | 'may-edit' };
export type Claims = { commands: CommandClaim[]; paths: PathClaim[] };

/** A `protect` glob of the config, with the line that declares it. */
export type ProtectLine = SourceLine & { rule: string; glob: string; covers(path: string): boolean };

export type DriftKind = 'command' | 'protected-path';
/** One place where a shadowed file (`file`, `line`, `text`) disagrees with the authority's side (`authority`). */
export type Drift = SourceLine & { kind: DriftKind; matter: Matter | 'keep-off' | 'may-edit'; authority: SourceLine; message: string };

/**
 * Programs that run a project's build, tests, linters or formatters, by family: two commands of
 * one family do not disagree (`npx vitest` and `npm test`). A code span whose first word is not
 * here is not a command (prose, a path, `docker build` of an image, `git`).
 */
const FAMILY_OF: Record<string, string> = {
  npm: 'npm',
  npx: 'npm',
  yarn: 'yarn',
  pnpm: 'pnpm',
  pnpx: 'pnpm',
  bun: 'bun',
  bunx: 'bun',
  deno: 'deno',
  node: 'node',
  make: 'make',
  gmake: 'make',
  just: 'just',
  task: 'task',
  cargo: 'cargo',
  go: 'go',
  gofmt: 'gofmt',
  'golangci-lint': 'golangci-lint',
  python: 'python',
  python3: 'python',
  py: 'python',
  uv: 'uv',
  uvx: 'uv',
  poetry: 'poetry',
  pdm: 'pdm',
  hatch: 'hatch',
  tox: 'tox',
  nox: 'nox',
  pytest: 'pytest',
  mypy: 'mypy',
  pyright: 'pyright',
  ruff: 'ruff',
  black: 'black',
  isort: 'isort',
  flake8: 'flake8',
  pylint: 'pylint',
  gradle: 'gradle',
  gradlew: 'gradle',
  './gradlew': 'gradle',
  mvn: 'mvn',
  mvnw: 'mvn',
  './mvnw': 'mvn',
  sbt: 'sbt',
  bazel: 'bazel',
  bazelisk: 'bazel',
  cmake: 'cmake',
  ctest: 'cmake',
  ninja: 'ninja',
  meson: 'meson',
  dotnet: 'dotnet',
  mix: 'mix',
  rake: 'rake',
  bundle: 'bundle',
  rspec: 'rspec',
  rubocop: 'rubocop',
  composer: 'composer',
  phpunit: 'phpunit',
  swift: 'swift',
  xcodebuild: 'xcodebuild',
  flutter: 'flutter',
  dart: 'dart',
  tsc: 'tsc',
  eslint: 'eslint',
  prettier: 'prettier',
  biome: 'biome',
  vitest: 'vitest',
  jest: 'jest',
  mocha: 'mocha',
  playwright: 'playwright',
  turbo: 'turbo',
  nx: 'nx',
  lerna: 'lerna',
};

/** Fenced blocks whose lines are shell commands (no language, or a shell's). */
const SHELL_FENCES = new Set(['', 'sh', 'bash', 'shell', 'console', 'zsh', 'shell-session', 'sh-session', 'fish', 'cmd', 'powershell', 'ps1', 'pwsh', 'text']);

/** Before a command on its line: it is named to be avoided or replaced, not given. */
const NOT_GIVEN = /\b(?:don'?t|do not|never|not|avoid|skip|instead of|rather than|no longer|deprecated|unlike|without)\b/i;

const MATTER_TESTS: ReadonlyArray<[Matter, (cmd: string, parts: string[]) => boolean]> = [
  ['typecheck', (c) => /type-?check|check-?types|\bmypy\b|\bpyright\b|\btsc\b.*--noEmit/i.test(c)],
  ['test', (_c, p) => p.some((w) => /^(?:tests?|pytest|jest|vitest|mocha|rspec|ctest|phpunit|tox|e2e)$/.test(w))],
  [
    'lint',
    (c, p) => p.some((w) => /^(?:lint|eslint|clippy|flake8|pylint|rubocop|shellcheck|stylelint|markdownlint|vet)$/.test(w)) || /\bruff\s+check\b/.test(c),
  ],
  ['format', (c, p) => p.some((w) => /^(?:format|fmt|prettier|black|gofmt|isort)$/.test(w)) || /\bruff\s+format\b/.test(c)],
  // Building the documentation (`make build-docs`, `mkdocs build`) is not building the project.
  [
    'build',
    (c, p) =>
      !p.some((w) => /^(?:docs?|documentation|mkdocs|storybook)$/.test(w)) &&
      (p.some((w) => /^(?:build|compile)$/.test(w)) || (/^tsc\b/.test(c) && !/--noEmit/.test(c))),
  ],
];

/** Options whose value names a package or folder, not a matter (`--filter @x/test-utils`, `-w packages/test`). */
const VALUE_OPTIONS = new Set(['--filter', '-F', '-w', '--workspace', '-p', '--package', '--prefix', '-C', '--cwd', '--dir', '--project']);

/** One shell command as a claim: its family and matters, or undefined when it is none of ours. */
function commandOf(raw: string): Pick<CommandClaim, 'command' | 'family' | 'matters' | 'words'> | undefined {
  const words = raw.trim().split(/\s+/).filter(Boolean);
  while (words.length > 0 && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!) || ['sudo', 'time', 'env', 'exec'].includes(words[0]!))) words.shift();
  const first = words[0];
  if (!first) return undefined;
  const family = FAMILY_OF[first];
  if (!family) return undefined;
  const command = words.join(' ');
  // `go test`, `cargo fmt`, `npm run test:unit`, `pytest`: a word of the command names the matter (a package's name does not).
  const named = words.filter(
    (w, i) => !VALUE_OPTIONS.has(words[i - 1] ?? '') && !w.startsWith('@') && !/^--?(?:filter|workspace|package|prefix|cwd|dir|project)=/.test(w),
  );
  const parts = named.flatMap((w) => w.toLowerCase().split(/[:\-_/.=]+/));
  const matters = MATTERS.filter((m) => MATTER_TESTS.find(([n]) => n === m)![1](named.join(' '), parts));
  if (matters.length === 0) return undefined;
  return { command, family, matters, words: words.map((w) => w.replace(/^\.\//, '').toLowerCase()) };
}

/** The commands of one shell line: `npm ci && npm test` is two, only the second a claim. */
function commandsOfLine(line: string): Array<Pick<CommandClaim, 'command' | 'family' | 'matters' | 'words'>> {
  const body = line.replace(/^\s*[$>%]\s+/, '').replace(/\s+#.*$/, '');
  if (/^\s*#/.test(body)) return [];
  return body
    .split(/&&|\|\||;|\|/)
    .map(commandOf)
    .filter((c): c is NonNullable<typeof c> => c !== undefined);
}

const CODE_SPAN = /(`+)([^`]+?)\1/g;

/** Verbs of editing, and the ways of saying not to. */
const EDIT_VERB = String.raw`(?:hand[- ]?edit|edit|modify|change|touch|alter|update|write to|overwrite)`;
const KEEP_OFF = new RegExp(
  String.raw`\b(?:do not|don'?t|never|must not|mustn'?t|should not|shouldn'?t|cannot|can'?t|may not|no need to)\s+(?:\w+\s+){0,2}?${EDIT_VERB}\b` +
    String.raw`|\b(?:not|never)\s+be\s+(?:hand[- ]?)?(?:edited|modified|changed|touched|altered|updated)\b` +
    String.raw`|\bavoid\s+(?:editing|modifying|changing|touching)\b|\bno (?:manual|hand) edits?\b|\bread[- ]only\b`,
  'i',
);
const MAY_EDIT = new RegExp(
  String.raw`\b(?:you|agents?)\s+(?:can|may|should)\s+(?:freely\s+)?${EDIT_VERB}\b|\bfeel free to\s+${EDIT_VERB}\b|\b(?:fine|ok|okay|safe)\s+to\s+${EDIT_VERB}\b` +
    // An imperative: at the start of the line or of a clause ("To add one, edit `x`").
    String.raw`|(?:^(?:[-*+]\s+|\d+[.)]\s+)?|[,;:]\s+(?:then\s+)?)(?:edit|modify|update|change)\s+` +
    '`',
  'i',
);

const FILE_EXTENSION =
  /\.(?:md|mdx|json|jsonc|ya?ml|toml|lock|ts|tsx|js|jsx|mjs|cjs|py|pyi|go|rs|java|kt|rb|sh|txt|cfg|ini|proto|sql|html|css|scss|xml|gradle|mod|sum|snap)$/i;

/** A token that names a path: has a `/`, or a file extension; not a URL, a flag, a command or a sentence. */
function asPath(token: string): string | undefined {
  const t = token.trim().replace(/^["'(]+|["'),.:;]+$/g, '');
  if (!t || /\s/.test(t) || t.includes('://') || t.startsWith('-') || t.startsWith('@') || t.startsWith('~') || t.startsWith('$')) return undefined;
  if (FAMILY_OF[t.split('/')[0]!] && !t.includes('/')) return undefined;
  if (!/[/*]/.test(t) && !FILE_EXTENSION.test(t) && !/^\.env(?:\.[\w-]+)?$/.test(t)) return undefined;
  if (!/^[\w.*/\-[\]{}!,@+]+$/.test(t)) return undefined;
  const rel = normalizeRelPath(t.replace(/^\//, ''));
  return t.endsWith('/') ? `${rel}/` : rel;
}

/** The sentence of `line` around character `at` (paths have dots, so a sentence ends at `. ` before a capital). */
function sentenceAround(line: string, at: number): { from: number; text: string } {
  const ends = [...line.matchAll(/[.!?]\s+(?=[A-Z*_`])/g)].map((m) => m.index! + m[0].length);
  let from = 0;
  let to = line.length;
  for (const e of ends) {
    if (e <= at) from = e;
    else {
      to = e;
      break;
    }
  }
  return { from, text: line.slice(from, to) };
}

/** A clause of a sentence: "the sources; do not edit the translations under …" is two, and the rule is in the second. */
function clauseAround(line: string, at: number): { from: number; text: string } {
  const sentence = sentenceAround(line, at);
  let from = sentence.from;
  let to = sentence.from + sentence.text.length;
  for (const m of sentence.text.matchAll(/[;:]\s+|\s+[—–]\s+/g)) {
    const end = sentence.from + m.index! + m[0].length;
    if (end <= at) from = end;
    else {
      to = sentence.from + m.index!;
      break;
    }
  }
  return { from, text: line.slice(from, to) };
}

/** Mentions of generation: "`x.ts` is generated; do not edit it" names the path before the verb. */
const GENERATED = /\b(?:auto-?)?generated\b/i;

function pathClaimsOf(file: string, lineNo: number, line: string): PathClaim[] {
  const out: PathClaim[] = [];
  const body = line.replace(/^\s*(?:[-*+]\s+|\d+[.)]\s+|>\s*)/, '');
  for (const [says, pattern] of [
    ['keep-off', KEEP_OFF],
    ['may-edit', MAY_EDIT],
  ] as const) {
    const m = pattern.exec(body);
    if (!m) continue;
    const clause = clauseAround(body, m.index);
    const verbEnd = m.index - clause.from + m[0].length;
    if (says === 'may-edit' && NOT_GIVEN.test(clause.text.slice(0, verbEnd))) continue;
    // The path is the verb's object; before the verb only when the clause says the path is generated.
    const scope = says === 'keep-off' && GENERATED.test(clause.text) ? clause.text : clause.text.slice(Math.max(0, verbEnd - (says === 'may-edit' ? 1 : 0)));
    const spans = [...scope.matchAll(CODE_SPAN)].map((s) => s[2]!);
    const bare = scope
      .replace(CODE_SPAN, ' ')
      .split(/\s+/)
      .filter((w) => w.includes('/'));
    for (const token of [...spans, ...bare]) {
      const path = asPath(token);
      if (path) out.push({ file, line: lineNo, text: line.trim(), path, says });
    }
    if (out.length > 0) break;
  }
  return out;
}

/** What one instruction file states: the commands it gives per matter and the paths it keeps agents off or sends them to. */
export function claimsOf(file: string, text: string): Claims {
  const commands: CommandClaim[] = [];
  const paths: PathClaim[] = [];
  const lines = text.split(/\r?\n/);
  let fence: { marker: string; shell: boolean } | undefined;
  lines.forEach((line, i) => {
    const lineNo = i + 1;
    const open = /^\s*(`{3,}|~{3,})\s*([\w+-]*)/.exec(line);
    if (fence) {
      if (open && open[1]![0] === fence.marker[0] && open[1]!.length >= fence.marker.length && open[2] === '') fence = undefined;
      else if (fence.shell) for (const c of commandsOfLine(line)) commands.push({ file, line: lineNo, text: line.trim(), ...c });
      return;
    }
    if (open) {
      fence = { marker: open[1]!, shell: SHELL_FENCES.has(open[2]!.toLowerCase()) };
      return;
    }
    for (const span of line.matchAll(CODE_SPAN)) {
      const sentence = sentenceAround(line, span.index!);
      if (NOT_GIVEN.test(line.slice(sentence.from, span.index))) continue;
      for (const c of commandsOfLine(span[2]!)) commands.push({ file, line: lineNo, text: line.trim(), ...c });
    }
    paths.push(...pathClaimsOf(file, lineNo, line));
  });
  return { commands, paths };
}

/** Two commands agree when they are of one family, or one runs the other's tool (`uv run pytest`, `pytest`). */
function agree(a: CommandClaim, b: CommandClaim): boolean {
  return a.family === b.family || a.words.includes(b.family) || b.words.includes(a.family);
}

/** Whether a claimed path (a file, a folder `x/`, a glob) lies under another claimed one. */
function within(path: string, under: string): boolean {
  const base = under.replace(/\/$/, '').replace(/\/\*\*(\/\*)?$/, '');
  const p = path.replace(/\/$/, '');
  return p === base || p.startsWith(`${base}/`);
}

/** Whether a protect rule covers a claimed path: the file itself, or anything in a claimed folder. */
function protects(rule: ProtectLine, path: string): boolean {
  const p = path.replace(/\/$/, '').replace(/\/\*\*(\/\*)?$/, '');
  return rule.covers(p) || rule.covers(`${p}/x`) || rule.covers(`${p}/x/x`);
}

/**
 * Where `other` (a file an agent reads besides the authority) disagrees with the authority's
 * side: the authority's files (`authority`, their claims merged) and the config's protect rules.
 */
export function compareClaims(authority: Claims, other: Claims, protect: readonly ProtectLine[]): Drift[] {
  const out: Drift[] = [];
  for (const matter of MATTERS) {
    const ours = authority.commands.filter((c) => c.matters.includes(matter));
    const theirs = other.commands.filter((c) => c.matters.includes(matter));
    if (ours.length === 0 || theirs.length === 0) continue;
    if (theirs.some((t) => ours.some((o) => agree(o, t)))) continue;
    const first = ours[0]!;
    const seen = new Set<number>();
    for (const t of theirs) {
      if (seen.has(t.line)) continue;
      seen.add(t.line);
      out.push({
        file: t.file,
        line: t.line,
        text: t.text,
        kind: 'command',
        matter,
        authority: { file: first.file, line: first.line, text: first.text },
        message: `${t.file}:${t.line} gives \`${t.command}\` for ${matter}; the authority ${first.file}:${first.line} gives \`${first.command}\`.`,
      });
    }
  }
  const keepOff = authority.paths.filter((p) => p.says === 'keep-off');
  const mayEdit = authority.paths.filter((p) => p.says === 'may-edit');
  const seen = new Set<string>();
  for (const claim of other.paths) {
    const key = `${claim.line}\0${claim.says}`;
    if (seen.has(key)) continue;
    let against: SourceLine | undefined;
    let message = '';
    if (claim.says === 'keep-off') {
      if (protect.some((r) => protects(r, claim.path)) || keepOff.some((k) => within(claim.path, k.path))) continue;
      const contrary = mayEdit.find((k) => within(claim.path, k.path) || within(k.path, claim.path));
      if (contrary) {
        against = contrary;
        message = `${claim.file}:${claim.line} says not to edit ${claim.path}; the authority ${contrary.file}:${contrary.line} says to edit ${contrary.path}.`;
      } else if (protect.length > 0) {
        // The config states what is protected; a path kept off in one agent's file only is a rule the others never hear of, and nothing enforces.
        against = protect[0]!;
        message =
          `${claim.file}:${claim.line} says not to edit ${claim.path}, but no protect rule covers it (${protect.map((r) => r.glob).join(', ')} in ${protect[0]!.file}) ` +
          `and the authority does not say so: agents that read only the authority will edit it. Add it to a rule's protect list, or drop the line.`;
      } else continue;
    } else {
      const rule = protect.find((r) => protects(r, claim.path));
      const kept = keepOff.find((k) => within(claim.path, k.path));
      if (rule) {
        against = rule;
        message = `${claim.file}:${claim.line} says to edit ${claim.path}, which rule ${rule.rule} protects (${rule.file}:${rule.line}): the edit will be refused.`;
      } else if (kept) {
        against = kept;
        message = `${claim.file}:${claim.line} says to edit ${claim.path}; the authority ${kept.file}:${kept.line} says not to edit ${kept.path}.`;
      } else continue;
    }
    seen.add(key);
    out.push({
      file: claim.file,
      line: claim.line,
      text: claim.text,
      kind: 'protected-path',
      matter: claim.says,
      authority: { file: against.file, line: against.line, text: against.text },
      message,
    });
  }
  return out;
}

/**
 * The protect globs of `rules`, each with the line of the config file that declares it (the
 * first of `files` whose text names the glob; line 0 when none does, as for a default rule).
 */
export function protectLines(rules: readonly ProtectRuleSource[], files: ReadonlyArray<{ file: string; text: string }>): ProtectLine[] {
  const out: ProtectLine[] = [];
  for (const rule of rules) {
    const compiled = compileProtect(rule);
    if (!compiled) continue;
    for (const glob of compiled.globs) {
      let where: SourceLine | undefined;
      for (const f of files) {
        const lines = f.text.split(/\r?\n/);
        const names = (l: string) =>
          l.includes(`"${glob}"`) || l.includes(`'${glob}'`) || new RegExp(`(?:^|[\\s\\[,-])${escapeRegExp(glob)}(?:$|[\\s\\],])`).test(l);
        // The `protect:` line or a list item, before a message that quotes the glob.
        const declares = lines.findIndex((l) => names(l) && /^\s*(?:-|protect\s*:)/.test(l));
        const i = declares >= 0 ? declares : lines.findIndex(names);
        if (i >= 0) {
          where = { file: f.file, line: i + 1, text: lines[i]!.trim() };
          break;
        }
      }
      out.push({
        ...(where ?? { file: files[0]?.file ?? '.hermes/config.yaml', line: 0, text: `protect: ${glob}` }),
        rule: rule.id,
        glob,
        covers: compiled.covers,
      });
    }
  }
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
