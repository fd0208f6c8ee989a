/**
 * `hermesd context --agents`, `hermesd check --context` and the MCP resource `hermesd://agents`
 * on real repositories, through the built CLI and the MCP SDK's client: with AGENTS.md as the
 * authority, a CLAUDE.md that gives another test command, keeps agents off a path no protect
 * rule covers, and a GEMINI.md that sends them into a protected one, each disagreement is named
 * by file:line and text on both sides; a repository whose files agree exits 0.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { connectMcp } from '../helpers/mcp.js';

const AGENTS = ['# Rules', '', 'Install with `npm ci`.', 'Run the tests with `npm test`.', 'Build with `npm run build`.', ''].join('\n');
const CLAUDE = [
  '# Claude Code',
  '',
  'Run the tests with `yarn test`.',
  'Build with `npm run build`.',
  '- Do not edit `gen/`: it is generated.',
  '- Never run `npm test` here.',
  '',
].join('\n');
const GEMINI = ['# Gemini', '', 'To add an endpoint, edit `src/generated/api.ts` by hand.', ''].join('\n');
const CONFIG = [
  'rules:',
  '  - id: generated-files',
  '    message: Do not edit src/generated/** by hand; run npm run gen.',
  '    protect: ["src/generated/**"]',
  '',
].join('\n');

describe('drift between instruction files, named on both sides', () => {
  let t: TestEnv;
  let drifted: string;
  let agreeing: string;

  beforeAll(() => {
    t = makeEnv();
    drifted = t.repo({ 'AGENTS.md': AGENTS, 'CLAUDE.md': CLAUDE, 'GEMINI.md': GEMINI, '.hermes/config.yaml': CONFIG });
    agreeing = t.repo({
      'AGENTS.md': AGENTS,
      // What a shadowed file says and the authority agrees with: a one-file test run, a path the config protects.
      'CLAUDE.md': '@AGENTS.md\n\nOne test file: `npx vitest run test/a.test.ts`.\nDo not edit `src/generated/`.\n',
      // A command named to be skipped or avoided is no command given.
      'GEMINI.md': 'See AGENTS.md.\nSkip `yarn test` in CI; avoid `make build` too.\n',
      '.hermes/config.yaml': CONFIG,
    });
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('check --context exits 1 and names both lines of each disagreement, in text and JSON', async () => {
    const r = await t.cli(['check', '--context'], { cwd: drifted });
    expect(r.code, `check --context on a drifted repository did not exit 1:\n${r.stdout}${r.stderr}`).toBe(1);
    expect(r.stdout).toContain('CLAUDE.md:3: Run the tests with `yarn test`.');
    expect(r.stdout).toContain('authority AGENTS.md:4: Run the tests with `npm test`.');
    expect(r.stdout).toContain('CLAUDE.md:5: - Do not edit `gen/`: it is generated.');
    expect(r.stdout).toContain('authority .hermes/config.yaml:4: protect: ["src/generated/**"]');
    expect(r.stdout).toContain('GEMINI.md:3: To add an endpoint, edit `src/generated/api.ts` by hand.');
    // Agreements and a command named to be avoided are not disagreements.
    expect(r.stdout).not.toContain('CLAUDE.md:4');
    expect(r.stdout).not.toContain('CLAUDE.md:6');
    expect(r.stdout).toMatch(/3 disagreements\.$/m);

    const j = await t.cli(['check', '--context', '--json'], { cwd: drifted });
    expect(j.code).toBe(1);
    const violations = j.json().violations as Array<Record<string, unknown>>;
    expect(violations).toEqual([
      expect.objectContaining({
        rule: 'context-command',
        file: 'CLAUDE.md',
        line: 3,
        text: 'Run the tests with `yarn test`.',
        authority: { file: 'AGENTS.md', line: 4, text: 'Run the tests with `npm test`.' },
        agents: ['claude'],
      }),
      expect.objectContaining({
        rule: 'context-protected-path',
        file: 'CLAUDE.md',
        line: 5,
        authority: { file: '.hermes/config.yaml', line: 4, text: 'protect: ["src/generated/**"]' },
      }),
      expect.objectContaining({
        rule: 'context-protected-path',
        file: 'GEMINI.md',
        line: 3,
        authority: { file: '.hermes/config.yaml', line: 4, text: 'protect: ["src/generated/**"]' },
        agents: ['gemini'],
      }),
    ]);
    for (const v of violations) expect(v.message).toEqual(expect.stringContaining(`${v.file}:${v.line}`));
    expect(j.json().warnings).toEqual([]);
  });

  it('context --agents shows per agent what it reads, how the authority reaches it, and the same disagreements', async () => {
    const r = await t.cli(['context', '--agents'], { cwd: drifted });
    expect(r.code, r.stderr).toBe(0);
    const claude = r.stdout.slice(r.stdout.indexOf('\nclaude'), r.stdout.indexOf('\ncodex'));
    expect(claude).toContain('reads      CLAUDE.md');
    expect(claude).toContain('shadowed   CLAUDE.md');
    expect(claude).toContain('disagrees  CLAUDE.md:3: Run the tests with `yarn test`.');
    expect(claude).toContain('authority AGENTS.md:4: Run the tests with `npm test`.');
    expect(claude).toContain('disagrees  CLAUDE.md:5:');
    const codex = r.stdout.slice(r.stdout.indexOf('\ncodex'), r.stdout.indexOf('\ncursor'));
    expect(codex).toContain('shadowed   (none)');
    expect(codex).not.toContain('disagrees');

    const j = await t.cli(['context', '--agents', '--json'], { cwd: drifted });
    expect(j.code, j.stderr).toBe(0);
    const report = j.json();
    expect(report.authority).toEqual(['AGENTS.md']);
    const byAgent = Object.fromEntries((report.agents as Array<{ agent: string }>).map((a) => [a.agent, a])) as Record<string, any>;
    expect(byAgent.claude).toMatchObject({ reads: ['CLAUDE.md'], authority: ['AGENTS.md'], shadowed: ['CLAUDE.md'] });
    expect(byAgent.claude.conflicts.map((c: any) => `${c.file}:${c.line} ${c.authority.file}:${c.authority.line}`)).toEqual([
      'CLAUDE.md:3 AGENTS.md:4',
      'CLAUDE.md:5 .hermes/config.yaml:4',
    ]);
    expect(byAgent.gemini.conflicts.map((c: any) => `${c.file}:${c.line} ${c.authority.file}:${c.authority.line}`)).toEqual([
      'GEMINI.md:3 .hermes/config.yaml:4',
    ]);
    expect(byAgent.codex).toMatchObject({ reads: ['AGENTS.md'], shadowed: [], conflicts: [] });
    expect(report.conflicts).toHaveLength(3);
  });

  it('a repository whose instruction files agree exits 0 with a plain summary, in text and JSON', async () => {
    const r = await t.cli(['check', '--context'], { cwd: agreeing });
    expect(r.code, `check --context on agreeing files did not exit 0:\n${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout.trim()).toBe('authority AGENTS.md; compared with CLAUDE.md, GEMINI.md: they agree.');
    const j = await t.cli(['check', '--context', '--json'], { cwd: agreeing });
    expect(j.code).toBe(0);
    expect(j.json()).toMatchObject({ violations: [], warnings: [], authority: ['AGENTS.md'] });
    const c = await t.cli(['context', '--agents'], { cwd: agreeing });
    expect(c.stdout).toContain('No instruction file disagrees with the authority.');
    expect(c.stdout).not.toContain('disagrees  ');
  });

  it('--context with --staged or --commits is a usage error', async () => {
    const r = await t.cli(['check', '--context', '--staged'], { cwd: drifted });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--context compares the instruction files');
  });

  it('the MCP resource hermesd://agents, read with the SDK client, carries the same report', async () => {
    const s = await connectMcp(t, drifted);
    try {
      const { resources } = await s.client.listResources();
      expect(resources.map((x) => x.uri)).toContain('hermesd://agents');
      const read = await s.client.readResource({ uri: 'hermesd://agents' });
      expect(read.contents[0]).toMatchObject({ uri: 'hermesd://agents', mimeType: 'application/json' });
      const report = JSON.parse(String((read.contents[0] as { text?: string }).text));
      expect(report.conflicts.map((c: any) => `${c.file}:${c.line} ${c.authority.file}:${c.authority.line} ${c.agents.join(',')}`)).toEqual([
        'CLAUDE.md:3 AGENTS.md:4 claude',
        'CLAUDE.md:5 .hermes/config.yaml:4 claude',
        'GEMINI.md:3 .hermes/config.yaml:4 gemini',
      ]);
    } finally {
      await s.close();
    }
  });
});
