/**
 * The attacks a review got through other agents' confined shells, each run as the agent runs
 * it: the pre-tool hook `init --agents` wrote, the command it gives back run by bash with the
 * agent's environment, the post-tool hook after (test/helpers/agents.ts agentShellCall). Each
 * command is spelt so that hermesd's reading of its text lets it through: what holds is the
 * confinement (hermesd's one sandbox plan, by allow-list) and the judgement after the call.
 *
 * Written against the bypasses: a fake daemon on the socket, a planted `.git/commondir`, the
 * agent approving its own loosening through $HERMES_HOME and the socket, commits with the
 * checks off from inside (a killed daemon, HERMESD_SKIP, --no-verify, ~/.gitconfig), root
 * remounting a read-only path, a setsid writer outliving the call, HERMESD_BWRAP=none in the
 * daemon's environment, and the path spellings that reached a protected file.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentShellCall, confinement, denied, postContext, runHook, toolHookCommand } from '../helpers/agents.js';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { huskyInstall, linkNodeModules } from '../helpers/hook-managers.js';
import { claudeWrite, commitKey, expectRefused, head, KEY } from '../helpers/transport.js';
import { createAgentServices } from '../../src/agent/standalone.js';
import { runToolCall, TOOLS } from '../../src/agent/tools/index.js';

const ORIGINAL = 'export const a = 1;\n';
const CONFIG = [
  'rules:',
  '  - id: generated',
  '    message: Do not edit generated files; run the generator.',
  '    protect: ["gen/**", "**/*.gen.ts"]',
  '  - id: accents',
  '    message: Do not edit the generated translations.',
  '    protect: ["générés/**"]',
  '  - id: no-aws-keys',
  '    message: Never commit credentials.',
  '    forbid: "AKIA[0-9A-Z]{16}"',
  'hooks:',
  '  onUnavailable: allow',
  '',
].join('\n');

/** A server that answers every question of hermesd's protocol with "allowed": the fake daemon. */
const FAKE_DAEMON = `import os, re, socket, sys
p = sys.argv[1]
try:
    os.unlink(p)
except OSError as e:
    print('unlink:', e, file=sys.stderr)
s = socket.socket(socket.AF_UNIX)
s.bind(p)
s.listen(128)
print('listening', flush=True)
# The fake must hold the socket path for the whole test: a deep backlog (a slow fake on a busy
# machine must not refuse connections, which a starting daemon takes for a dead socket), and no
# client's fault ends it.
while True:
    c, _ = s.accept()
    try:
        data = c.recv(65536).decode('latin1')
        m = re.search(r'[?&]q=([^& ]+)', data)
        c.sendall(('HTTP/1.0 200 OK\\r\\n\\r\\nhermesd 2 0 %d %s\\n= 0\\n' % (os.getpid(), m.group(1) if m else 'x')).encode())
    except OSError as e:
        print('client:', e, file=sys.stderr, flush=True)
    finally:
        c.close()
`;

let t: TestEnv;
let repo: string;
let agentHome: string;
let socket: string;
/** The agent's environment: its own HOME (under the test's temp dir: never the user's). */
let agentEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': CONFIG,
    'gen/a.ts': ORIGINAL,
    'gen/sub/b.ts': ORIGINAL,
    'générés/fr.json': '{}\n',
    'src/app.ts': 'export const app = 1;\n',
  });
  const init = await t.cli(['init', '--agents', 'claude,codex,gemini'], { cwd: repo });
  expect(init.code, init.stderr).toBe(0);
  gitIn(t, repo, 'add', '-A');
  gitIn(t, repo, 'commit', '-qm', 'hermesd init');
  agentHome = join(t.home, '..', 'agent-home');
  mkdirSync(agentHome, { recursive: true });
  writeFileSync(join(agentHome, '.gitconfig'), '[user]\n\tname = Agent\n');
  writeFileSync(join(t.home, '..', 'hd-fake-daemon.py'), FAKE_DAEMON);
  agentEnv = { HOME: agentHome, CLAUDE_PROJECT_DIR: repo };
  await t.cli(['start'], { cwd: repo });
  socket = (await t.cli(['status', '--json'], { cwd: repo })).json().socket;
}, 120_000);

afterAll(async () => {
  await t?.cleanup();
  // What the attacks below left in the machine's /tmp (a confined shell may write there).
  for (const agent of ['claude', 'codex', 'gemini']) rmSync(`/tmp/hd-fake-${agent}.log`, { force: true });
});

const call = (command: string, id: string, agent: 'claude' | 'codex' | 'gemini' = 'claude') => agentShellCall(t, repo, agent, command, id, agentEnv);
const gen = () => readFileSync(join(repo, 'gen/a.ts'), 'utf8');

describe("another agent's confined shell cannot switch the guard off", () => {
  it('a fake daemon bound from inside never answers for the daemon: writes and commits stay refused', async () => {
    for (const agent of ['claude', 'codex', 'gemini'] as const) {
      const attack = await call(
        `s=$(sed -n 's/.*"socket": "\\(.*\\)".*/\\1/p' .git/hermesd/daemon.json); py=${join(t.home, '..', 'hd-fake-daemon.py')}; setsid python3 $py "$s" </dev/null >/tmp/hd-fake-${agent}.log 2>&1 & sleep 1; cat /tmp/hd-fake-${agent}.log`,
        `fake-${agent}`,
        agent,
      );
      expect(confinement(attack.ran)?.script, `${agent}: the command was not confined: ${JSON.stringify(attack.pre)}`).toContain('--unshare-pid');
      // Inside, the socket folder is another (empty but for the agent socket, read-only): the daemon's socket cannot be replaced.
      expect(attack.stdout, `${agent}: the fake daemon took the socket`).not.toContain('listening');
      expectRefused(await claudeWrite(t, repo, 'gen/a.ts'), 'generated');
      const commit = commitKey(t, repo, `fake-${agent}.txt`);
      expect(commit.moved, `${agent}: a key was committed after the fake daemon ran: ${commit.out}`).toBe(false);
      expect(commit.out).toContain('no-aws-keys');
    }
    expect(gen()).toBe(ORIGINAL);
  });

  it('outside any confinement, the hook client trusts only the daemon that holds the lock: a fake on the socket is a fault, never an allow', async () => {
    // What a process that is not confined (the user's own, or an agent whose shell hermesd cannot wrap) could do.
    const fake: ChildProcess = spawn('python3', [join(t.home, '..', 'hd-fake-daemon.py'), socket], { stdio: ['ignore', 'pipe', 'pipe'] });
    // What the fake said of itself, for a failure's message (whether it was still there to answer).
    let fakeSaid = '';
    fake.stderr!.on('data', (d: Buffer) => (fakeSaid += d.toString()));
    fake.on('exit', (code, signal) => (fakeSaid += `[the fake exited: ${code ?? signal}]`));
    try {
      await new Promise<void>((resolve, reject) => {
        fake.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
        fake.on('exit', (code) => reject(new Error(`the fake daemon exited (${code})`)));
      });
      // The fake answers at once; the daemon whose socket it took stops within seconds (its socket is gone), and no
      // other can start on a path the fake holds: either way a named fault, never the fake's "allowed".
      const write = await claudeWrite(t, repo, 'gen/a.ts');
      expect(denied('claude', write), `the fake's "allow" was taken: ${JSON.stringify(write)} (the fake: ${fakeSaid || 'nothing'})`).toMatch(
        /not by the daemon that holds this work tree's lock|no daemon (could be started|holds)|did not answer/,
      );
      const commit = commitKey(t, repo, 'fake-outside.txt');
      expect(commit.moved, `a key was committed through the fake daemon: ${commit.out}`).toBe(false);
      expect(commit.out).toMatch(/not by the daemon that holds this work tree's lock|refused/);
    } finally {
      fake.kill('SIGKILL');
      spawnSync('git', ['reset', '-q'], { cwd: repo, env: t.env });
      await t.cli(['restart'], { cwd: repo });
    }
    expectRefused(await claudeWrite(t, repo, 'gen/a.ts'), 'generated');
  });

  it('a .git/commondir planted from inside is gone when the call ends, and the next commit runs hermesd', async () => {
    const evil = join(t.home, '..', 'evil-git');
    const attack = await call(
      `cp -r .git ${evil} && printf '#!/bin/sh\\nexit 0\\n' > ${evil}/hooks/pre-commit && chmod +x ${evil}/hooks/pre-commit; f=.git/commondir; echo ${evil} > $f; ls .git`,
      'commondir',
    );
    expect(attack.stdout).toContain('commondir');
    expect(existsSync(join(repo, '.git/commondir')), 'the planted commondir stayed').toBe(false);
    expect(postContext(attack)).toContain('commondir');
    const commit = commitKey(t, repo, 'commondir.txt');
    expect(commit.moved, `a key was committed past the planted hook: ${commit.out}`).toBe(false);
    spawnSync('git', ['reset', '-q'], { cwd: repo, env: t.env });
  });

  it("a file git's config includes that is not there, planted from inside, is gone when the call ends, and the model is told", async () => {
    const config = join(repo, '.git', 'config');
    const before = readFileSync(config, 'utf8');
    writeFileSync(config, `${before}[include]\n\tpath = extra.cfg\n[include]\n\tpath = ../team.gitconfig\n`);
    try {
      const r = await call(
        `d=.git; printf '[core]\\n\\tfsmonitor = "touch PWNED-A; false"\\n' > $d/extra.cfg; t=team.gitconfig; printf '[core]\\n\\tfsmonitor = "touch PWNED-B; false"\\n' > $t`,
        'include-1',
      );
      expect(existsSync(join(repo, '.git', 'extra.cfg')), 'the included file planted in .git stayed').toBe(false);
      expect(existsSync(join(repo, 'team.gitconfig')), 'the included file planted in the work tree stayed').toBe(false);
      expect(postContext(r), 'the model was not told what was removed').toContain('which git reads as configuration or runs as hooks');
      gitIn(t, repo, 'status', '--short');
      expect(existsSync(join(repo, 'PWNED-A')) || existsSync(join(repo, 'PWNED-B')), 'git ran the program a planted include named').toBe(false);
    } finally {
      writeFileSync(config, before);
    }
  });

  it('$HERMES_HOME and the control routes are out of reach: the agent cannot approve its own loosening', async () => {
    const userConfig = join(t.home, 'config.yaml');
    const before = existsSync(userConfig) ? readFileSync(userConfig, 'utf8') : undefined;
    const attack = await call(
      `c=$HERMES_HOME/config.yaml; printf 'guard:\\n  sandbox:\\n    enabled: false\\nagents:\\n  onUnavailable: allow\\n' >> $c; echo wrote=$?; curl -s --unix-socket '${socket}' -X POST http://hermesd/v1/config/approve -d '{}'; echo curl=$?`,
      'approve',
    );
    expect(attack.stdout).toMatch(/wrote=[1-9]/);
    expect(attack.stderr).toMatch(/Read-only file system/);
    expect(attack.stdout).not.toContain('approved');
    expect(existsSync(userConfig) ? readFileSync(userConfig, 'utf8') : undefined).toBe(before);
    // The file tool cannot either: $HERMES_HOME is hermesd's own state.
    const write = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), {
      cwd: repo,
      env: agentEnv,
      payload: {
        session_id: 's1',
        cwd: repo,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: userConfig, content: 'guard:\n  sandbox:\n    enabled: false\n' },
      },
    });
    expect(denied('claude', write), JSON.stringify(write)).toContain("hermesd's own state");
    // Still confined afterwards.
    const next = await call('true', 'after-approve');
    expect(confinement(next.ran)?.script).toContain('--unshare-pid');
  });

  it('a commit of a key made from inside is judged whatever it did: a killed daemon, HERMESD_SKIP, --no-verify', async () => {
    const before = head(repo);
    const pidFile = join(repo, '.git/hermesd/daemon.json');
    const kill = await call(
      `kill -9 $(sed -n 's/.*"pid": \\([0-9]*\\).*/\\1/p' ${pidFile}) 2>&1; printf 'k = "%s"\\n' ${KEY} > k1.txt; git add k1.txt; git commit -qm k1 2>&1; echo rc=$?`,
      'kill',
    );
    expect(kill.stdout, 'the daemon is not visible from inside').toMatch(/No such process/);
    expect(kill.stdout).toMatch(/no-aws-keys/);
    expect(head(repo), 'a key was committed by killing the daemon').toBe(before);
    const skip = await call(
      `printf 'k = "%s"\\n' ${KEY} > k2.txt; git add k2.txt; s=/tmp/hd-skip-$$.sh; echo 'HERMESD_SKIP=1 git commit -qm k2' > $s; sh $s 2>&1; echo rc=$?; rm -f $s`,
      'skip',
    );
    expect(skip.stdout).toMatch(/HERMESD_SKIP=1 is ignored inside hermesd's sandbox/);
    expect(head(repo), 'a key was committed with HERMESD_SKIP').toBe(before);
    const noVerify = await call(
      `printf 'k = "%s"\\n' ${KEY} > k3.txt; git add k3.txt; s=/tmp/hd-nv-$$.sh; echo 'git commit -qm k3 --no-verify' > $s; sh $s; rm -f $s; git log -1 --format=%s`,
      'no-verify',
    );
    expect(noVerify.stdout, 'the commit itself went through inside').toContain('k3');
    expect(head(repo), 'the commit made with --no-verify was taken back after the call').toBe(before);
    expect(postContext(noVerify)).toContain('no-aws-keys');
    spawnSync('git', ['reset', '-q'], { cwd: repo, env: t.env });
  });

  it("the user's git and agent configs are read-only inside and refused to the file tool", async () => {
    const gitconfig = join(agentHome, '.gitconfig');
    const attack = await call(`g=$HOME/.gitconfig; printf '[core]\\n\\thooksPath = /dev/null\\n' >> $g; echo rc=$?`, 'gitconfig');
    expect(attack.stdout).toMatch(/rc=[1-9]/);
    expect(readFileSync(gitconfig, 'utf8')).toBe('[user]\n\tname = Agent\n');
    const write = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), {
      cwd: repo,
      env: agentEnv,
      payload: {
        session_id: 's1',
        cwd: repo,
        hook_event_name: 'PreToolUse',
        tool_name: 'Write',
        tool_input: { file_path: gitconfig, content: '[core]\n\thooksPath = /dev/null\n' },
      },
    });
    expect(denied('claude', write), JSON.stringify(write)).toMatch(/outside what an agent's tools and commands may write/);
  });

  it('no capability inside (a remount fails, as root too), and no process outlives the call', async () => {
    const attack = await call(
      `mount -o remount,rw,bind gen 2>&1; f=gen/a.ts; echo x > $f; setsid sh -c 'sleep 1; echo late > gen/a.ts; echo late > src/late.gen.ts; echo late > /tmp/hd-late-$PPID' </dev/null >/dev/null 2>&1 & echo started`,
      'remount',
    );
    expect(attack.stdout).toContain('started');
    expect(attack.stdout).toMatch(/permission denied|must be superuser|not permitted/i);
    await new Promise((r) => setTimeout(r, 2_000));
    expect(gen()).toBe(ORIGINAL);
    expect(existsSync(join(repo, 'src/late.gen.ts')), 'a writer outlived the call').toBe(false);
    // A file a protect glob covers, made during the call: removed when it ends.
    const made = await call('f=src/made.gen.ts; echo x > $f; ls src', 'made');
    expect(made.stdout).toContain('made.gen.ts');
    expect(existsSync(join(repo, 'src/made.gen.ts'))).toBe(false);
    expect(postContext(made)).toContain('src/made.gen.ts');
  });
});

describe('a path spelt another way is the same path at every entry point', () => {
  beforeAll(() => {
    symlinkSync('gen/sub', join(repo, 's'));
    linkSync(join(repo, 'gen/a.ts'), join(repo, 'src/h.ts'));
  });

  const spellings: Array<[string, string]> = [
    ['s/../x.ts (s → gen/sub: gen/x.ts to open(2))', 's/../x.ts'],
    ['a hard link of gen/a.ts', 'src/h.ts'],
    ['GEN/a.ts (another case)', 'GEN/a.ts'],
    ['the NFD spelling of générés/fr.json', 'générés/fr.json'.normalize('NFD')],
  ];

  it.each(spellings)("Claude Code's Write of %s is refused", async (_name, path) => {
    const r = await runHook(t, toolHookCommand(repo, 'claude', 'PreToolUse', 'Write'), {
      cwd: repo,
      env: agentEnv,
      payload: { session_id: 's1', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Write', tool_input: { file_path: `${repo}/${path}`, content: 'x' } },
    });
    expect(denied('claude', r), `${path}: ${JSON.stringify(r)}`).toMatch(/repository rule "(generated|accents)"/);
  });

  it.each(spellings)("Codex's apply_patch of %s is refused", async (_name, path) => {
    const patch = `*** Begin Patch\n*** Add File: ${path}\n+x\n*** End Patch\n`;
    const r = await runHook(t, toolHookCommand(repo, 'codex', 'PreToolUse', 'apply_patch'), {
      cwd: repo,
      payload: {
        session_id: 's1',
        cwd: repo,
        hook_event_name: 'PreToolUse',
        tool_name: 'apply_patch',
        tool_input: { command: patch },
        tool_use_id: `p-${path}`,
      },
    });
    expect(denied('codex', r), `${path}: ${JSON.stringify(r)}`).toMatch(/repository rule "(generated|accents)"/);
  });

  it.each(spellings)("hermesd's own write_file of %s is refused", async (_name, path) => {
    const services = createAgentServices({ root: repo, home: t.home });
    try {
      const ctx = { root: repo, sessionId: 'spelling', signal: new AbortController().signal, config: services.config, services };
      const r = JSON.parse((await runToolCall(TOOLS, { name: 'write_file', arguments: JSON.stringify({ path, content: 'x' }) }, ctx)).content) as {
        error?: string;
      };
      expect(r.error, `${path}: ${JSON.stringify(r)}`).toMatch(/repository rule "(generated|accents)"/);
    } finally {
      services.sessions.close();
    }
  });

  it('a commit adding GEN/x.ts or the NFD spelling made past the hooks is found by check --commits', async () => {
    const before = head(repo);
    for (const path of ['GEN/y.ts', 'générés/es.json'.normalize('NFD')]) {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), 'x\n');
      spawnSync('git', ['add', '--', path], { cwd: repo, env: t.env });
    }
    spawnSync('git', ['commit', '-qm', 'past the hooks', '--no-verify'], { cwd: repo, env: { ...t.env, HERMESD_SKIP: '1' } });
    const r = await t.cli(['check', '--commits', `${before}..HEAD`, '--json'], { cwd: repo });
    expect(r.code, r.stderr).toBe(1);
    const files = (r.json().violations as Array<{ rule: string; file: string }>).map((v) => `${v.rule} ${v.file.normalize('NFC')}`);
    expect(files).toEqual(expect.arrayContaining(['generated GEN/y.ts', 'accents générés/es.json']));
    spawnSync('git', ['reset', '-q', '--hard', before], { cwd: repo, env: t.env });
  });

  it('a commit adding GEN/x.ts or the NFD spelling is refused by the pre-commit hook', () => {
    const before = head(repo);
    for (const path of ['GEN/x.ts', 'générés/de.json'.normalize('NFD')]) {
      mkdirSync(join(repo, path, '..'), { recursive: true });
      writeFileSync(join(repo, path), 'x\n');
      spawnSync('git', ['add', '--', path], { cwd: repo, env: t.env });
      const r = spawnSync('git', ['commit', '-qm', `add ${path}`], { cwd: repo, env: t.env, encoding: 'utf8' });
      expect(r.status, `${path}: ${r.stdout}${r.stderr}`).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`).toMatch(/generated|accents/);
      spawnSync('git', ['reset', '-q'], { cwd: repo, env: t.env });
    }
    expect(head(repo)).toBe(before);
  });
});

describe("HERMESD_BWRAP in the daemon's environment is a loosening", () => {
  it('without the user approving it, shell calls stay confined', async () => {
    await t.cli(['stop'], { cwd: repo });
    expect((await t.cli(['start'], { cwd: repo, env: { HERMESD_BWRAP: 'none' } })).code).toBe(0);
    const status = await t.cli(['status', '--json'], { cwd: repo });
    expect(JSON.stringify(status.json().warnings)).toContain('HERMESD_BWRAP');
    const attack = await call('f=gen/a.ts; echo x > $f', 'bwrap-none');
    expect(confinement(attack.ran)?.script, JSON.stringify(attack.pre)).toContain('--unshare-pid');
    expect(attack.stderr).toMatch(/Read-only file system/);
    expect(gen()).toBe(ORIGINAL);
    await t.cli(['restart'], { cwd: repo });
  });
});

describe("husky's HUSKY=0 from inside another agent's confined shell", () => {
  const commitWithHusky0 = (repoDir: string, id: string) =>
    agentShellCall(
      t,
      repoDir,
      'claude',
      `printf 'k = "%s"\\n' ${KEY} > k.txt; git add k.txt; s=/tmp/hd-husky0-$$.sh; echo 'HUSKY=0 git commit -qm k' > $s; sh $s 2>&1; echo rc=$?; rm -f $s`,
      id,
      { HOME: agentHome, CLAUDE_PROJECT_DIR: repoDir },
    );
  const huskyRepo = async (own: boolean) => {
    const files: Record<string, string> = { '.hermes/config.yaml': CONFIG, 'package.json': '{"name":"h","private":true,"devDependencies":{"husky":"^9"}}\n' };
    if (own) files['.husky/pre-commit'] = 'echo project-hook-ran\n';
    const r = t.repo(files);
    linkNodeModules(r);
    // A project's own husky 9 (husky's runner `h` in .husky/_), or husky named in package.json only (init lays it out).
    if (own) huskyInstall(r, t.env);
    const init = await t.cli(['init', '--agents', 'claude'], { cwd: r });
    expect(init.code, init.stderr).toBe(0);
    gitIn(t, r, 'add', '-A');
    gitIn(t, r, 'commit', '-qm', 'hermesd init');
    await t.cli(['start'], { cwd: r });
    return r;
  };

  it("in the husky layout init made, HUSKY=0 does not switch hermesd's pre-commit off: the key is refused", async () => {
    const r = await huskyRepo(false);
    const before = head(r);
    const call = await commitWithHusky0(r, 'husky0-ours');
    expect(confinement(call.ran)?.script, 'the call was not confined').toContain('--unshare-pid');
    expect(call.stdout, `HUSKY=0 switched hermesd's check off inside the confinement:\n${call.stdout}`).toMatch(
      /HUSKY=0 is ignored for hermesd's check inside hermesd's sandbox/,
    );
    expect(call.stdout).toMatch(/no-aws-keys/);
    expect(head(r), 'a key was committed with HUSKY=0 from inside').toBe(before);
  }, 120_000);

  it("in a project's own husky 9, whose runner stops before hermesd, the commit is taken back after the call and the model told", async () => {
    const r = await huskyRepo(true);
    const before = head(r);
    const call = await commitWithHusky0(r, 'husky0-own');
    expect(call.stdout, "husky's own commands ran with HUSKY=0").not.toContain('project-hook-ran');
    expect(head(r), 'a key committed with HUSKY=0 from inside stayed').toBe(before);
    expect(postContext(call)).toContain('no-aws-keys');
  }, 120_000);
});
