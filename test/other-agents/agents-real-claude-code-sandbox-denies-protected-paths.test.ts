/**
 * The real Claude Code with its own sandbox on (bubblewrap and socat on Linux), in a repository
 * where `hermesd init --agents claude` wrote the paths rules protect into
 * `sandbox.filesystem.denyWrite`: a shell write hermesd's judge cannot read (an interpreter, a
 * variable) fails in Claude Code's sandbox itself, with hermesd's own confinement switched off
 * (`guard.sandbox.enabled: false`, approved), so the refusal is Claude Code's; a write elsewhere
 * in the work tree goes through.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { e2eRepo, resultOf, RULE_ID, type E2E } from '../helpers/agent-e2e.js';
import { parseJsonc } from '../../src/other-agents/json-edit.js';
import { approveAtTerminal } from '../helpers/env.js';

describe("Claude Code's own sandbox holds the paths hermesd's rules protect", () => {
  let e: E2E;
  beforeAll(async () => {
    e = await e2eRepo('claude');
    const config = readFileSync(join(e.repo, '.hermes/config.yaml'), 'utf8');
    writeFileSync(join(e.repo, '.hermes/config.yaml'), `${config}\nguard:\n  sandbox:\n    enabled: false\n`);
    const approved = await approveAtTerminal(e.t, e.repo);
    expect(approved.code, approved.stdout).toBe(0);
    // The rule came after the first init: the next one writes its path into Claude Code's sandbox.
    const init = await e.t.cli(['init', '--agents', 'claude'], { cwd: e.repo });
    expect(init.code, init.stderr).toBe(0);
    expect((parseJsonc(readFileSync(join(e.repo, '.claude/settings.json'), 'utf8')).value as any).sandbox.filesystem.denyWrite).toEqual(['./gen']);
    // What the user turns on: Claude Code's sandbox, with no way out of it for a command.
    writeFileSync(
      join(e.repo, '.claude/settings.local.json'),
      JSON.stringify({ sandbox: { enabled: true, failIfUnavailable: true, allowUnsandboxedCommands: false } }, null, 2) + '\n',
    );
  }, 600_000);
  afterAll(async () => {
    await e?.cleanup();
  });

  it('refuses writes to gen/ by any spelling, in the sandbox, and lets a write elsewhere through', async () => {
    const before = e.genNow();
    const bash = (id: string, command: string) => ({ id, name: 'Bash', input: { command, description: 'write a file' } });
    const { requests, run } = await e.session('write the files', [
      {
        tools: [
          bash('toolu_py', `python3 -c "open('gen/a.ts','w').write('x')"`),
          bash('toolu_var', 'f=gen/a.ts; echo x > $f'),
          bash('toolu_ok', 'echo ok > src/sandboxed.ts'),
        ],
      },
      { text: 'done' },
    ]);
    expect(run.code, run.stderr).toBe(0);
    for (const id of ['toolu_py', 'toolu_var']) expect(resultOf(requests, id)?.output, id).toMatch(/Read-only file system/);
    expect(e.genNow()).toEqual(before);
    // Nothing for hermesd's check after the call to put back (the write never happened), but the model is told the rule.
    const said = requests.map((r) => r.text).join('\n');
    expect(said, "the refused write reached the model without the rule's id").toContain(`gen/a.ts is read-only in the sandbox: protected by rule ${RULE_ID}`);
    expect(said).not.toContain('has been restored');
    expect(readFileSync(join(e.repo, 'src/sandboxed.ts'), 'utf8')).toBe('ok\n');

    // The control: Claude Code's sandbox off, hermesd's confinement off: the write happens, and
    // hermesd's check after the call puts the file back and says which rule.
    writeFileSync(join(e.repo, '.claude/settings.local.json'), JSON.stringify({ sandbox: { enabled: false } }, null, 2) + '\n');
    const off = await e.session('write the file', [{ tools: [bash('toolu_py_off', `python3 -c "open('gen/a.ts','w').write('x')"`)] }, { text: 'done' }]);
    expect(off.run.code, off.run.stderr).toBe(0);
    expect(resultOf(off.requests, 'toolu_py_off')?.output ?? '').not.toMatch(/Read-only file system/);
    expect(off.requests.map((r) => r.text).join('\n')).toContain(`protected by rule ${RULE_ID}`);
    expect(e.genNow()).toEqual(before);
  }, 180_000);
});
