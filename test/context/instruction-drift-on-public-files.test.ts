/**
 * The comparison of instruction files on real public ones (test/fixtures/README.md names their
 * sources and licences): files of one repository, which agree, are never claimed to disagree;
 * the misreadings found on them stay fixed (a docs build is no build, a package named `test-e2e`
 * no test command, `process.env` no path, "PRs that don't touch `.github/**`" no rule); and files
 * of two projects with different tools are named with both lines.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { claimsOf, compareClaims, type Claims } from '../../src/context/instruction-drift.js';
import { REPO_ROOT } from '../helpers/env.js';

const FIXTURES = join(REPO_ROOT, 'test', 'fixtures');
const DIRS = [join(FIXTURES, 'benign-docs'), join(FIXTURES, 'instruction-files')];
const INSTRUCTION_FILE = /(?:^|_)(?:AGENTS|CLAUDE|GEMINI)\.md$/;

/** Every instruction file, by repository (the folder `owner+name` in either fixture folder). */
function byRepository(): Map<string, Array<{ file: string; claims: Claims }>> {
  const out = new Map<string, Array<{ file: string; claims: Claims }>>();
  for (const dir of DIRS) {
    for (const repo of readdirSync(dir)) {
      for (const name of readdirSync(join(dir, repo)).filter((n) => INSTRUCTION_FILE.test(n))) {
        const file = `${repo}/${name}`;
        const list = out.get(repo) ?? [];
        list.push({ file, claims: claimsOf(file, readFileSync(join(dir, repo, name), 'utf8')) });
        out.set(repo, list);
      }
    }
  }
  return out;
}

const repos = byRepository();
const claimsOfFile = (file: string): Claims => [...repos.values()].flat().find((f) => f.file === file)!.claims;

describe('instruction drift on public instruction files', () => {
  it('files of one repository are never claimed to disagree, whichever is the authority', () => {
    const claimed: string[] = [];
    let pairs = 0;
    for (const files of repos.values()) {
      for (const a of files) {
        for (const b of files) {
          if (a === b) continue;
          pairs++;
          for (const d of compareClaims(a.claims, b.claims, [])) claimed.push(`${d.file}:${d.line} vs ${d.authority.file}:${d.authority.line}`);
        }
      }
    }
    expect(pairs, 'the fixtures hold fewer same-repository pairs than measured (docs/agents.md)').toBeGreaterThanOrEqual(60);
    expect(claimed, 'files of one repository were claimed to disagree').toEqual([]);
  });

  it('what was misread once stays fixed', () => {
    const openai = claimsOfFile('openai+openai-agents-python/AGENTS.md');
    expect(
      openai.commands.filter((c) => c.command.startsWith('make build-docs')).flatMap((c) => c.matters),
      '`make build-docs` read as a build command',
    ).toEqual([]);
    expect(openai.commands.find((c) => c.command === 'make tests')?.matters).toEqual(['test']);
    expect(openai.paths.map((p) => p.path)).toEqual(['docs/ja', 'docs/ko', 'docs/zh']);

    const e2e = claimsOfFile('modelcontextprotocol+typescript-sdk/test_e2e_CLAUDE.md');
    const typecheck = e2e.commands.find((c) => c.command.endsWith('test-e2e typecheck'));
    expect(typecheck?.matters, 'a package named test-e2e made its typecheck a test command').toEqual(['typecheck']);

    expect(claimsOfFile('google-gemini+gemini-cli/GEMINI.md').paths, '`process.env` read as a path').toEqual([]);
    const workflows = claimsOfFile('pydantic+pydantic-ai/.github_workflows_AGENTS.md').paths;
    expect(workflows.map((p) => `${p.says} ${p.path}`)).toEqual(['keep-off *.lock.yml']);
  });

  it('two projects with different tools are named with both lines', () => {
    const d = compareClaims(claimsOfFile('modelcontextprotocol+python-sdk/AGENTS.md'), claimsOfFile('google-gemini+gemini-cli/GEMINI.md'), []);
    const test = d.find((x) => x.matter === 'test')!;
    expect(test).toMatchObject({
      file: 'google-gemini+gemini-cli/GEMINI.md',
      line: 45,
      authority: { file: 'modelcontextprotocol+python-sdk/AGENTS.md', line: 37 },
    });
    expect(test.text).toContain('`npm run test`');
    expect(test.authority.text).toContain('pytest');
    // `uv run --frozen pytest` runs `pytest`: the MCP Python SDK's file agrees with garak's on tests.
    expect(compareClaims(claimsOfFile('NVIDIA+garak/AGENTS.md'), claimsOfFile('modelcontextprotocol+python-sdk/AGENTS.md'), [])).toEqual([]);
  });
});
