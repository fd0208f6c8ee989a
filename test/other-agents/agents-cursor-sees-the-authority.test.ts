/**
 * Cursor (no client on npm) through its documented sessionStart payload, run by the command
 * `hermesd init --agents cursor` wrote: its `additional_context` holds the repository's authority
 * where Cursor does not read it itself (HERMES.md; with an AGENTS.md beside it, which Cursor
 * does read, it is told which one wins), and not where it does (AGENTS.md, Cursor's own rules).
 */
import { rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeEnv, type TestEnv } from '../helpers/env.js';
import { hookCommands, runHook, until } from '../helpers/agents.js';

const HERMES = 'The quokka ledger is reconciled every Tuesday before noon.';
const AGENTS = 'Releases are cut from the numbat branch only.';
const RULES = 'Indent with tabs in every TypeScript file.';

const count = (text: string, what: string) => text.split(what).length - 1;

describe("Cursor's sessionStart gets the authority where Cursor does not read it", () => {
  let t: TestEnv;
  let repo: string;
  let start: string;

  /** sessionStart as Cursor sends it; the model's additional context ('' when the answer has none). */
  const sessionStart = async (): Promise<string> => {
    const r = await runHook(t, start, {
      cwd: repo,
      env: { CURSOR_PROJECT_DIR: repo, CURSOR_VERSION: '2.1.32' },
      payload: {
        hook_event_name: 'sessionStart',
        conversation_id: 'c0nv-1',
        generation_id: 'gen-1',
        session_id: 'c0nv-1',
        cursor_version: '2.1.32',
        workspace_roots: [repo],
        is_background_agent: false,
        composer_mode: 'agent',
      },
    });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { additional_context?: string }).additional_context ?? '';
  };
  /** Waits until the daemon's authority is `file`. */
  const authorityIs = (file: string) =>
    until(
      () => t.cli(['context', '--json'], { cwd: repo }),
      (r) => r.code === 0 && (r.json().authority as string[]).some((a) => a.includes(file)),
    );

  beforeAll(async () => {
    t = makeEnv();
    repo = t.repo({ 'README.md': '# app\n', 'HERMES.md': `# Rules\n\n${HERMES}\n` });
    const init = await t.cli(['init', '--agents', 'cursor'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    start = hookCommands(repo, 'cursor').sessionStart!;
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('gives HERMES.md, which Cursor does not read, once', async () => {
    await authorityIs('HERMES.md');
    const context = await sessionStart();
    expect(count(context, HERMES), `HERMES.md in sessionStart's additional_context: ${context.slice(0, 300)}`).toBe(1);
    // The same bytes at the next session start (prompt caches stay warm).
    expect(await sessionStart()).toBe(context);
  });

  it('says HERMES.md wins where Cursor also reads an AGENTS.md, and does not give AGENTS.md again', async () => {
    writeFileSync(join(repo, 'AGENTS.md'), `# Agents\n\n${AGENTS}\n`);
    // What the agents read is looked at anew at every session start: no wait for the daemon.
    const context = await sessionStart();
    expect(count(context, "HERMES.md is this repository's authority; where AGENTS.md says otherwise, HERMES.md wins."), 'no word on which file wins').toBe(1);
    expect(count(context, HERMES)).toBe(1);
    expect(context).not.toContain(AGENTS);
  });

  it('gives nothing of AGENTS.md, which Cursor reads itself, once it is the authority', async () => {
    rmSync(join(repo, 'HERMES.md'));
    await authorityIs('AGENTS.md');
    const context = await sessionStart();
    expect(context, 'AGENTS.md was given to Cursor, which reads it itself').not.toContain(AGENTS);
    expect(context).not.toContain('authority');
  });

  it("gives nothing of Cursor's own rules when they are the authority", async () => {
    rmSync(join(repo, 'AGENTS.md'));
    mkdirSync(join(repo, '.cursor/rules'), { recursive: true });
    writeFileSync(join(repo, '.cursor/rules/style.mdc'), `---\nalwaysApply: true\n---\n${RULES}\n`);
    await authorityIs('style.mdc');
    const context = await sessionStart();
    expect(context, "Cursor's rules were given to Cursor, which reads them itself").not.toContain(RULES);
  });
});
