/**
 * A write the confinement refused is told to the model even when the command threw its own
 * error away: each process of a confined command records what it was refused
 * (src/guard/refused-writes.c, preloaded by the confine script), and the post-tool answer of
 * the session's next shell call names the path with its rule. A writer left in the background
 * is ended with its call (the sandbox's pid namespace goes), and that call is told so, with the
 * rule of the protected path its text names. Run as the
 * agents run it (test/helpers/agents.ts agentShellCall): the pre-tool hook, the command given
 * back run by bash, the post-tool hook.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentShellCall, confinement, postContext } from '../helpers/agents.js';
import { CLI, gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { BACKGROUND_ENDED } from '../../src/guard/refused-writes.js';

const ORIGINAL = 'export const a = 1;\n';
const RULE = 'generated';
const CONFIG = ['rules:', `  - id: ${RULE}`, '    message: Do not edit generated files; run the generator.', '    protect: ["gen/**"]', ''].join('\n');

let t: TestEnv;
let repo: string;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({ '.hermes/config.yaml': CONFIG, 'gen/a.ts': ORIGINAL, 'gen/b.ts': ORIGINAL, 'gen/c.ts': ORIGINAL, 'src/app.ts': 'export const app = 1;\n' });
  const init = await t.cli(['init', '--agents', 'claude,codex,gemini'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
  gitIn(t, repo, 'add', '-A');
  gitIn(t, repo, 'commit', '-qm', 'hermesd init');
  await t.cli(['start'], { cwd: repo });
}, 120_000);

afterAll(async () => {
  await t?.cleanup();
});

const gen = (name: string) => readFileSync(join(repo, 'gen', name), 'utf8');

describe('the confinement records the writes it refused, and the model is told', () => {
  it.each(['claude', 'codex', 'gemini'] as const)('%s: a writer whose output is thrown away is told at its own call, with the rule', async (agent) => {
    const call = await agentShellCall(t, repo, agent, `python3 -c "open('gen/a.ts','w').write('x')" >/dev/null 2>&1; true`, `quiet-${agent}`);
    expect(confinement(call.ran)?.script, `${agent}: the command was not confined: ${JSON.stringify(call.pre)}`).toContain('--unshare-pid');
    expect(call.stderr, 'the command printed nothing of its refusal').toBe('');
    expect(gen('a.ts')).toBe(ORIGINAL);
    expect(postContext(call), `${agent}: the post-tool answer does not name the refused path with its rule`).toMatch(new RegExp(`gen/a\\.ts[^\\n]*${RULE}`));
  });

  it.each(['claude', 'gemini'] as const)(
    '%s: a writer left in the background is ended with its call, and that call is answered with the rule of the path it names',
    async (agent) => {
      const bg = await agentShellCall(t, repo, agent, `(sleep 0.5; node -e "require('fs').writeFileSync('gen/b.ts','x')") >/dev/null 2>&1 &`, `bg-${agent}`);
      expect(bg.stderr, `${agent}: the command's output does not say its background process ends with the call`).toContain(BACKGROUND_ENDED);
      expect(postContext(bg), `${agent}: the call's answer does not name the path its background writer names, with the rule`).toMatch(
        new RegExp(`gen/b\\.ts[^\\n]*${RULE}`),
      );
      spawnSync('sleep', ['1']);
      expect(gen('b.ts')).toBe(ORIGINAL);
      // The writer never ran: nothing is left to tell at the next call.
      const next = await agentShellCall(t, repo, agent, 'true', `bg-next-${agent}`);
      expect(postContext(next), `${agent}: told again at the next call`).not.toContain('gen/b.ts');
    },
  );

  it('a refusal is told to its own session only, once; a read of a protected file records nothing', async () => {
    const codex = await agentShellCall(t, repo, 'codex', `cat gen/c.ts >/dev/null; perl -e 'open(F, ">gen/c.ts") or exit 0' 2>/dev/null`, 'own-1');
    expect(postContext(codex), "codex's session was not told its refusal").toMatch(new RegExp(`gen/c\\.ts[^\\n]*${RULE}`));
    const again = await agentShellCall(t, repo, 'codex', 'true', 'own-2');
    expect(postContext(again), 'the same refusal was told twice').not.toContain('gen/c.ts');
    const claude = await agentShellCall(t, repo, 'claude', 'cat gen/c.ts', 'own-3');
    expect(claude.stdout).toBe(ORIGINAL);
    expect(postContext(claude), 'a read was told as a refused write').toBe('');
  });

  it('a daemon stopped while a confined command runs: the command ends as it would, the file is kept, and the next daemon tells the refusal the output shows', async () => {
    const before = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    // Stopped from outside while the command sleeps: its record folder goes with the daemon.
    const stopper = spawn('sh', ['-c', `sleep 0.8; exec "${process.execPath}" "${CLI}" stop`], {
      cwd: repo,
      env: { ...process.env, ...t.env },
      stdio: 'ignore',
    });
    const stopped = new Promise((resolve) => stopper.on('close', resolve));
    const call = await agentShellCall(t, repo, 'claude', `sleep 2; python3 -c "open('gen/a.ts','w').write('x')"; echo after-the-write`, 'stopped-1');
    await stopped;
    expect(call.ran, `the command was not confined: ${JSON.stringify(call.pre)}`).toMatch(/\/hermesd\/confine\/[0-9a-f]+\.sh' /);
    expect(call.stdout, `the command did not run to its end: ${call.stderr}`).toContain('after-the-write');
    expect(call.stderr, "the write's own error is not in the command's output").toMatch(/Read-only file system/);
    expect(gen('a.ts')).toBe(ORIGINAL);
    const after = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    expect(after, 'the daemon was not stopped during the command (the test did not test that)').not.toBe(before);
    expect(postContext(call), 'the post-tool answer of the next daemon does not name the refused path with its rule').toMatch(
      new RegExp(`gen/a\\.ts[^\\n]*${RULE}`),
    );
  });

  it('a daemon stopped after its pre-tool answer, before the command started: the command still runs confined, and the next daemon tells the refusal', async () => {
    const before = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    const stop = async () => {
      const r = await t.cli(['stop'], { cwd: repo });
      expect(r.code, `hermesd stop failed: ${r.stderr}`).toBe(0);
    };
    const call = await agentShellCall(
      t,
      repo,
      'claude',
      `python3 -c "open('gen/a.ts','w').write('x')"; echo 1 > src/inside.ts; git add src/inside.ts && git commit -qm inside; echo "commit=$?"; echo after-the-write`,
      'stopped-first-1',
      {},
      stop,
    );
    expect(call.ran, `the command was not confined: ${JSON.stringify(call.pre)}`).toMatch(/\/hermesd\/confine\/[0-9a-f]+\.sh' /);
    expect(call.stdout, `the command given back did not run after the daemon stopped: ${call.stderr}`).toContain('after-the-write');
    expect(call.stderr, "the write's own error is not in the command's output").toMatch(/Read-only file system/);
    expect(gen('a.ts')).toBe(ORIGINAL);
    // Its agent socket went with the daemon: a commit from inside finds no daemon, and is refused.
    expect(call.stdout, `a commit from inside ran its hooks without a daemon: ${call.stderr}`).toContain('commit=1');
    expect(call.stderr).toMatch(/no daemon answers hermesd's sandbox; the pre-commit hook refused this commit/);
    const after = (await t.cli(['status', '--json'], { cwd: repo })).json().pid as number;
    expect(after, 'the daemon was not stopped before the command (the test did not test that)').not.toBe(before);
    expect(postContext(call), 'the post-tool answer of the next daemon does not name the refused path with its rule').toMatch(
      new RegExp(`gen/a\\.ts[^\\n]*${RULE}`),
    );
  });

  it('the confine folder and the records folder removed while the daemon runs (by hand, by a /tmp cleaner): the next call puts both back and is told its refusal', async () => {
    const first = await agentShellCall(t, repo, 'claude', 'true', 'removed-1');
    const folder = /HERMESD_REFUSED '([^']+)'/.exec(confinement(first.ran)?.script ?? '')?.[1];
    expect(folder, 'the confine script names no record folder').toBeDefined();
    rmSync(join(repo, '.git/hermesd/confine'), { recursive: true, force: true });
    rmSync(folder!, { recursive: true, force: true });
    const call = await agentShellCall(t, repo, 'claude', `python3 -c "open('gen/a.ts','w').write('x')" >/dev/null 2>&1; true`, 'removed-2');
    expect(call.stderr, 'the preloaded library was handed out after it was removed').not.toMatch(/ld\.so|cannot be preloaded/);
    expect(gen('a.ts')).toBe(ORIGINAL);
    expect(postContext(call), 'the refusal was not recorded after the folders were removed').toMatch(new RegExp(`gen/a\\.ts[^\\n]*${RULE}`));
    // A records folder others may enter (as one another user made under the same name would be) is not used.
    const made = /HERMESD_REFUSED '([^']+)'/.exec(confinement(call.ran)?.script ?? '')?.[1];
    expect(made, 'the records folder was not made again').toBeDefined();
    chmodSync(made!, 0o755);
    const next = await agentShellCall(t, repo, 'claude', `python3 -c "open('gen/a.ts','w').write('x')" >/dev/null 2>&1; true`, 'removed-3');
    // The daemon leaves a folder it no longer takes for its own (it may be another user's): this one is the test's to remove.
    rmSync(made!, { recursive: true, force: true });
    expect(/HERMESD_REFUSED '([^']+)'/.exec(confinement(next.ran)?.script ?? '')?.[1], 'a records folder others may enter was used').not.toBe(made);
    expect(postContext(next)).toMatch(new RegExp(`gen/a\\.ts[^\\n]*${RULE}`));
  });

  it('what a command leaves at its record in place of a file (a FIFO, a link to another file) is read as nothing, and the daemon keeps answering', async () => {
    // The records' folder is writable inside the confinement: a command can put anything at its session's record.
    const first = await agentShellCall(t, repo, 'claude', 'true', 'planted-1');
    const folder = /HERMESD_REFUSED '([^']+)'/.exec(confinement(first.ran)?.script ?? '')?.[1];
    const name = first.ran?.split(' ').at(-1);
    expect(folder, 'the confine script names no record folder').toBeDefined();
    expect(name, `the command given back names no record: ${first.ran}`).toMatch(/^[0-9a-f]{16}$/);
    const record = join(folder!, name!);

    expect(spawnSync('mkfifo', [record]).status).toBe(0);
    const fifo = await agentShellCall(t, repo, 'claude', 'true', 'planted-2');
    expect(fifo.post?.code, `the post-tool hook did not answer past a FIFO at the record: ${fifo.post?.stderr}`).toBe(0);
    expect(postContext(fifo)).toBe('');
    const status = await t.cli(['status', '--json'], { cwd: repo, timeoutMs: 10_000 });
    expect(status.code, `the daemon stopped answering after reading a FIFO at the record: ${status.stderr}`).toBe(0);

    // A link to a file that names a protected path: the link is not followed.
    const elsewhere = join(t.home, 'elsewhere.txt');
    writeFileSync(elsewhere, `${join(repo, 'gen', 'c.ts')}\n`);
    rmSync(record, { force: true });
    symlinkSync(elsewhere, record);
    const linked = await agentShellCall(t, repo, 'claude', 'true', 'planted-3');
    expect(postContext(linked), 'a link at the record was followed to another file').not.toContain('gen/c.ts');
  }, 60_000);

  it('the records live in a folder only this user can enter, and go when the daemon stops', async () => {
    const folders = readdirSync('/tmp').filter((n) => n.startsWith('hermesd-refused-'));
    const call = await agentShellCall(t, repo, 'claude', 'true', 'folder-1');
    const script = confinement(call.ran)?.script ?? '';
    const folder = /HERMESD_REFUSED '([^']+)'/.exec(script)?.[1];
    expect(folder, `the confine script names no record folder:\n${script}`).toBeDefined();
    expect(spawnSync('stat', ['-c', '%a', folder!], { encoding: 'utf8' }).stdout.trim()).toBe('700');
    await t.cli(['stop'], { cwd: repo });
    expect(readdirSync('/tmp').filter((n) => n.startsWith('hermesd-refused-') && !folders.includes(n) && `/tmp/${n}` === folder)).toEqual([]);
  });
});
