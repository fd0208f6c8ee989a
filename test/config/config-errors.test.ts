import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors/index.js';
import { makeEnv, writeFiles, type TestEnv } from '../helpers/env.js';

/** Each bad config, the line the error must name, and the key path it must name. */
const CASES: Array<{ name: string; yaml: string; line: number; key: string; says: RegExp }> = [
  {
    name: 'unknown top-level key',
    yaml: 'rules: []\nmodle:\n  name: x\n',
    line: 2,
    key: 'modle',
    says: /unknown key "modle" \(allowed here: rules, checks, hooks, model/,
  },
  {
    name: 'unknown key inside a rule',
    yaml: 'rules:\n  - id: gen\n    message: m\n    protect: ["gen/**"]\n    protects: ["x"]\n',
    line: 5,
    key: 'rules[0].protects',
    says: /unknown key "protects" \(allowed here: id, message, protect, generator, forbid, secrets, allow, paths, exclude\)/,
  },
  {
    name: 'wrong type',
    yaml: 'hooks:\n  pre-commit:\n    rules: "yes"\n',
    line: 3,
    key: 'hooks.pre-commit.rules',
    says: /expected boolean/,
  },
  {
    name: 'value outside an enum',
    yaml: 'hooks:\n  onUnavailable: maybe\n',
    line: 2,
    key: 'hooks.onUnavailable',
    says: /"allow"\|"block"/,
  },
  {
    name: 'bad regex',
    yaml: 'rules:\n  - id: no-keys\n    message: m\n    forbid: "AKIA[0-9"\n',
    line: 4,
    key: 'rules[0].forbid',
    says: /invalid regular expression/,
  },
  {
    name: 'bad glob',
    yaml: 'rules:\n  - id: gen\n    message: m\n    protect:\n      - "src/**"\n      - "gen/{a,b"\n',
    line: 6,
    key: 'rules[0].protect[1]',
    says: /invalid glob "gen\/\{a,b"/,
  },
  {
    name: 'missing required key',
    yaml: 'rules:\n  - id: gen\n    protect: ["gen/**"]\n',
    line: 2,
    key: 'rules[0].message',
    says: /missing required key/,
  },
  {
    name: 'rule that checks nothing',
    yaml: 'checks: []\nrules:\n  - id: empty\n    message: m\n',
    line: 3,
    key: 'rules[0]',
    says: /needs `protect`/,
  },
  {
    name: 'duplicate rule id',
    yaml: 'rules:\n  - {id: a, message: m, forbid: x}\n  - {id: a, message: n, forbid: y}\n',
    line: 3,
    key: 'rules[1].id',
    says: /duplicate rule id "a"/,
  },
  {
    name: 'hook naming an unknown check',
    yaml: 'checks:\n  - {id: lint, run: "true"}\nhooks:\n  pre-commit:\n    checks: [lint, tests]\n',
    line: 5,
    key: 'hooks.pre-commit.checks[1]',
    says: /unknown check "tests" \(defined checks: lint\)/,
  },
  {
    name: 'YAML syntax error',
    yaml: 'rules:\n  - id: a\n    message: "unterminated\n',
    line: 3,
    key: '',
    says: /YAML syntax error/,
  },
  {
    // The parser trips where the next item begins (here line 17, or at the file's end); the mistake is line 16.
    name: 'a flow list left open, between good rules',
    yaml:
      'rules:\n  - id: a\n    message: m\n    protect:\n      - "gen/**"\n  - id: b\n    message: n\n    forbid: "x"\n' +
      '  - id: c\n    message: o\n    protect: ["a/**"]\n  - id: d\n    message: p\n    protect:\n' +
      '      - [ "b/**"\n  - id: e\n    message: q\n    protect:\n      - "c/**"\n',
    line: 15,
    key: '',
    says: /15:9: YAML syntax error: `\[` opened here is never closed with `\]`/,
  },
  {
    name: 'a flow mapping left open (a `]` inside quotes does not close it)',
    yaml: 'rules:\n  - {id: a, message: "m ]", forbid: x\n  - id: b\n    message: n\n    forbid: y\n',
    line: 2,
    key: '',
    says: /2:5: YAML syntax error: `\{` opened here is never closed with `\}`/,
  },
];

describe('config errors name the file, the line and the key', () => {
  let base: string;
  let home: string;
  let root: string;
  let file: string;
  beforeEach(() => {
    base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-cfgerr-')));
    home = join(base, 'home');
    root = join(base, 'repo');
    mkdirSync(home);
    mkdirSync(join(root, '.hermes'), { recursive: true });
    file = join(root, '.hermes', 'config.yaml');
  });
  afterEach(() => rmSync(base, { recursive: true, force: true }));

  for (const c of CASES) {
    it(c.name, () => {
      writeFileSync(file, c.yaml);
      let err: unknown;
      try {
        loadConfig({ root, home, env: {} });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ConfigError);
      const e = err as ConfigError;
      expect(e.exitCode).toBe(2);
      expect(e.message).toContain(`${file}:${c.line}:`);
      if (c.key) expect(e.message).toContain(`${c.key}: `);
      expect(e.message).toMatch(c.says);
    });
  }

  it('names the user file when the error is there', () => {
    writeFileSync(join(home, 'config.yaml'), 'memory:\n  memoryCharLimit: -1\n');
    expect(() => loadConfig({ root, home, env: {} })).toThrow(new RegExp(`${join(home, 'config.yaml')}:2:.*memory\\.memoryCharLimit`));
  });

  it('names the environment variable when an override is invalid', () => {
    expect(() => loadConfig({ root, home, env: { OPENAI_BASE_URL: 'not a url' } })).toThrow(/environment variable OPENAI_BASE_URL \(sets model\.baseUrl\)/);
  });

  it('reports every problem of a file, in line order', () => {
    writeFileSync(file, 'model:\n  maxTurns: zero\nrules:\n  - {id: Bad_Id, message: m, forbid: "("}\n');
    let message = '';
    try {
      loadConfig({ root, home, env: {} });
    } catch (e) {
      message = (e as Error).message;
    }
    const lines = message.split('\n');
    expect(lines[0]).toBe('Invalid configuration, 3 problems:');
    expect(lines[1]).toContain(`${file}:2:`);
    expect(lines.slice(2).join('\n')).toContain('rules[0].id');
    expect(lines.slice(2).join('\n')).toContain('rules[0].forbid');
  });
});

describe('a config error reaches the CLI through the daemon as exit 2', () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(() => {
    t = makeEnv();
    repo = t.repo({ 'README.md': 'x\n' });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('each error kind exits 2 naming file, line and key; fixing the file makes check pass again', async () => {
    const file = join(repo, '.hermes', 'config.yaml');
    for (const c of CASES.filter((x) => ['unknown key inside a rule', 'wrong type', 'bad regex', 'bad glob', 'YAML syntax error'].includes(x.name))) {
      writeFiles(repo, { '.hermes/config.yaml': c.yaml });
      const r = await t.cli(['check', '--staged'], { cwd: repo });
      expect(r.code, `${c.name}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${file}:${c.line}:`);
      if (c.key) expect(r.stderr).toContain(c.key);
      expect(r.stdout).toBe('');
    }
    const api = await t.cli(['check', '--json'], { cwd: repo });
    expect(api.code).toBe(2);

    writeFiles(repo, { '.hermes/config.yaml': 'rules:\n  - {id: no-keys, message: m, forbid: "AKIA"}\n' });
    const ok = await t.cli(['check', '--staged', '--json'], { cwd: repo });
    expect(ok.code).toBe(0);
    expect(ok.json().violations).toEqual([]);
  });
});
