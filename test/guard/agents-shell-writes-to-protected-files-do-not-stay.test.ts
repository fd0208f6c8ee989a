/**
 * Another agent's shell reaches a protected file by spellings the pre-tool judge cannot read:
 * an interpreter (`python3 -c`, `node -e`, `perl -e`), a variable (`f=gen/a.ts; echo x > $f`),
 * a background writer. Where the agent lets the hook rewrite the command (Claude Code, Codex,
 * Gemini CLI) and bubblewrap runs, the command comes back confined: protected paths and what
 * the guard reads are read-only, so the write fails. Without a sandbox, the post-tool event
 * puts back what changed and tells the model which rule. Either way nothing stays changed.
 * The spellings the judge can read (`tee`, `dd`, `mv`) are refused before they run. Driven
 * through the hooks `init --agents` wrote, each command run as the agent runs it (`bash -c`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentShellCall, confinement, denied, rewritten, runHook, toolHookCommand, type ShellCall } from '../helpers/agents.js';
import { approveAtTerminal, makeEnv, type TestEnv } from '../helpers/env.js';

const AGENTS = ['claude', 'codex', 'gemini'] as const;
type Agent = (typeof AGENTS)[number];
const ORIGINAL = 'export const a = 1;\n';
const CONFIG = 'rules:\n  - id: generated-files\n    message: Do not edit generated files; run the generator.\n    protect: ["gen/**"]\n';

/** Spellings of a write to gen/a.ts; `read`: the judge reads them and refuses before they run. */
const SPELLINGS: Array<{ command: string; read?: true; background?: true }> = [
  { command: `python3 -c "open('gen/a.ts','w').write('x')"` },
  { command: `node -e "require('fs').writeFileSync('gen/a.ts','x')"` },
  { command: `perl -e 'open(F, ">gen/a.ts"); print F "x"; close(F)'` },
  { command: 'f=gen/a.ts; echo x > $f' },
  { command: 'printf x | tee gen/a.ts', read: true },
  { command: 'dd if=/dev/zero of=gen/a.ts bs=1 count=1', read: true },
  { command: 'echo x > /tmp/hd-mv-src && mv /tmp/hd-mv-src gen/a.ts', read: true },
  { command: '(sleep 0.5; f=gen/a.ts; echo x > $f) >/dev/null 2>&1 &', background: true },
];

// What the commands below leave in the machine's /tmp (a confined shell may write there).
afterAll(() => {
  for (const f of ['/tmp/hd-confined-ok', '/tmp/hd-mv-src']) rmSync(f, { force: true });
});

function setup(env: Record<string, string> = {}) {
  const t = makeEnv();
  Object.assign(t.env, env);
  const repo = t.repo({ '.hermes/config.yaml': CONFIG, 'gen/a.ts': ORIGINAL, 'src/app.ts': 'export const app = 1;\n' });
  return { t, repo };
}

/** The agent's pre-tool and post-tool hooks for one shell call, and the call itself run as the agent runs it. */
const shellCall = (t: TestEnv, repo: string, agent: Agent, command: string, id: string): Promise<ShellCall> => agentShellCall(t, repo, agent, command, id);

describe("other agents' shell calls, confined where the agent lets the hook rewrite them", () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(async () => {
    ({ t, repo } = setup());
    const init = await t.cli(['init', '--agents', 'claude,codex,gemini'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  for (const agent of AGENTS) {
    it(`${agent}: no spelling changes gen/a.ts, a background writer included`, async () => {
      let n = 0;
      for (const s of SPELLINGS) {
        const call = await shellCall(t, repo, agent, s.command, `call-${agent}-${n++}`);
        if (s.read) {
          expect(denied(agent, call.pre), `${s.command}: ${JSON.stringify(call.pre)}`).toContain('gen/a.ts');
          continue;
        }
        // Run confined: the answer runs the command, as it was, in a script that runs bubblewrap.
        expect(confinement(call.ran), `${s.command}: ${JSON.stringify(call.pre)}`).toMatchObject({
          command: s.command,
          script: expect.stringContaining('bwrap'),
        });
        if (s.background) await new Promise((r) => setTimeout(r, 1_500));
        expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8'), `${agent}: ${s.command}`).toBe(ORIGINAL);
      }
      // What the confinement leaves alone: the rest of the work tree and /tmp.
      const ok = await shellCall(t, repo, agent, 'echo 2 > src/app.ts && echo t > /tmp/hd-confined-ok', `call-${agent}-ok`);
      expect(confinement(ok.ran)?.script).toContain('--ro-bind');
      expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('2\n');
      expect(readFileSync('/tmp/hd-confined-ok', 'utf8')).toBe('t\n');
    });
  }

  it('the confine script cannot be changed from inside it, a command whose script is gone does not run at all, and one changed since it was written is written again', async () => {
    const first = await shellCall(t, repo, 'claude', 'echo 3 > src/app.ts', 'script-1');
    const script = confinement(first.ran)!.file;
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('3\n');
    // From inside (spelt so the judge cannot read it): the script, and the folder it sits in, are read-only.
    const inside = await shellCall(
      t,
      repo,
      'claude',
      `f='${script}'; d='${join(script, '..')}'; echo 'exec /bin/sh -c "$1"' > $f; touch $d/mine.sh`,
      'script-2',
    );
    expect(inside.ran).toContain(script);
    expect(readFileSync(script, 'utf8')).toContain('bwrap');
    expect(existsSync(join(script, '..', 'mine.sh'))).toBe(false);
    // Gone between the answer and the run (a cleanup, a hand): the command fails, unrun, never unconfined.
    const pre = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Bash'), {
      cwd: repo,
      env: { CLAUDE_PROJECT_DIR: repo },
      payload: {
        session_id: 's',
        cwd: repo,
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: 'echo 4 > src/app.ts' },
        tool_use_id: 'script-3',
      },
    });
    rmSync(script);
    const r = spawnSync('bash', ['-c', rewritten('claude', pre)!], { cwd: repo, encoding: 'utf8' });
    expect(r.status).not.toBe(0);
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('3\n');
    // The next call writes it again.
    const again = await shellCall(t, repo, 'claude', 'echo 5 > src/app.ts', 'script-4');
    expect(confinement(again.ran)?.script).toContain('bwrap');
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('5\n');
    // Changed outside the confinement (by hand, or while no daemon ran: the scripts outlive the daemon
    // that wrote them, so that a command given back just before a stop still starts): handed out only as written.
    expect(script.startsWith(join(repo, '.git/hermesd/confine/'))).toBe(true);
    const kept = confinement(again.ran)!;
    writeFileSync(kept.file, 'exec /bin/sh -c "$1"\n');
    const changed = await shellCall(t, repo, 'claude', 'echo 6 > src/app.ts; f=gen/a.ts; echo 1 > $f', 'script-changed');
    expect(confinement(changed.ran)?.file).toBe(kept.file);
    expect(confinement(changed.ran)?.script, 'a script changed since it was written was handed out as found').toBe(kept.script);
    expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('6\n');
    expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8')).toBe(ORIGINAL);
    expect((await t.cli(['stop'], { cwd: repo })).code).toBe(0);
    expect(readFileSync(kept.file, 'utf8'), 'the stop removed a confine script a command may be about to start').toBe(kept.script);
  });

  it('a confine script that cannot be written refuses the call, saying why (never runs it unconfined)', async () => {
    // A file where the scripts' folder goes: as a full disk or a read-only git dir would make it.
    rmSync(join(repo, '.git/hermesd/confine'), { recursive: true, force: true });
    writeFileSync(join(repo, '.git/hermesd/confine'), 'not a folder\n');
    try {
      const call = await shellCall(t, repo, 'claude', 'echo 7 > src/app.ts', 'script-5');
      expect(call.ran).toBeUndefined();
      expect(denied('claude', call.pre)).toMatch(/could not be judged .*confine.*so it is refused/);
      expect(readFileSync(join(repo, 'src/app.ts'), 'utf8')).toBe('6\n');
    } finally {
      rmSync(join(repo, '.git/hermesd/confine'), { force: true });
    }
  });
});

describe('without a sandbox: the post-tool event puts back what changed and tells the model which rule', () => {
  let t: TestEnv;
  let repo: string;
  beforeAll(async () => {
    ({ t, repo } = setup({ HERMESD_BWRAP: 'none' }));
    const init = await t.cli(['init', '--agents', 'claude,codex,gemini'], { cwd: repo });
    expect(init.code, init.stderr).toBe(0);
    // No sandbox is a loosening the daemon's environment asks for: the user approves it at a terminal.
    const approved = await approveAtTerminal(t, repo);
    expect(approved.code, approved.stdout).toBe(0);
    expect(approved.stdout).toContain('HERMESD_BWRAP');
  });
  afterAll(async () => {
    await t.cleanup();
  });

  for (const agent of AGENTS) {
    it(`${agent}: the file is restored and the rule named in the post-tool answer`, async () => {
      let n = 0;
      for (const s of SPELLINGS.filter((x) => !x.read && !x.background)) {
        const call = await shellCall(t, repo, agent, s.command, `plain-${agent}-${n++}`);
        expect(call.ran).toBe(s.command);
        expect(readFileSync(join(repo, 'gen/a.ts'), 'utf8'), `${agent}: ${s.command}`).toBe(ORIGINAL);
        const context = JSON.parse(call.post!.stdout).hookSpecificOutput;
        expect(context.hookEventName).toBe(agent === 'gemini' ? 'AfterTool' : 'PostToolUse');
        expect(context.additionalContext).toContain('gen/a.ts');
        expect(context.additionalContext).toContain('generated-files');
      }
    });
  }
});
