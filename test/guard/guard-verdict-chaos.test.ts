/**
 * A thousand guarded questions — another agent's Write to a protected path, its shell reaching
 * one, a commit holding a key — while the daemon is killed, stopped, restarted, upgraded to
 * another install and back at random instants. None of them is allowed: each is refused by
 * the rule, or refused by a fault that names itself. The one exception the contract allows is
 * a user's commit when no daemon could be started in time under hooks.onUnavailable "allow",
 * and it says so.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolHookCommand } from '../helpers/agents.js';
import { alive, CLI, copyInstall, makeEnv, REPO_ROOT, type TestEnv } from '../helpers/env.js';
import { guardedConfig, head, KEY, recordedPid } from '../helpers/transport.js';

const QUESTIONS = 1_000;
/** Questions of each kind in a round of ten: Write, Bash, commit. */
const ROUND = ['write', 'write', 'write', 'bash', 'bash', 'bash', 'write', 'bash', 'commit', 'commit'] as const;

type Outcome = { kind: (typeof ROUND)[number]; n: number; code: number; out: string; moved?: boolean; started: number; ended: number };

/** The faults as they happened: which, and when it began. */
type Fault = { name: string; at: number };

/** One question in words, for a failure's first line: which question, the fault around it, what came back. */
function said(o: Outcome, faults: Fault[]): string {
  const around = faults.filter((f) => f.at <= o.ended).at(-1);
  const fault = around ? `${around.name} ${around.at >= o.started ? 'during it' : `${o.started - around.at} ms before it`}` : 'no fault yet';
  const answer = o.out.trim().split('\n')[0]!.slice(0, 220) || '(nothing printed)';
  return `${o.kind} #${o.n} (${fault}) → exit ${o.code}${o.moved ? ', HEAD moved' : ''}: ${answer}`;
}

function run(cmd: string, args: string[], opts: { cwd: string; env: NodeJS.ProcessEnv; input?: string }): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: opts.env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.stdin.on('error', () => undefined);
    child.stdin.end(opts.input ?? '');
    child.on('close', (code) => resolve({ code: code ?? -1, out }));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (a: number, b: number) => a + Math.random() * (b - a);

let t: TestEnv;
let repo: string;
/** The CLI of a second install of hermesd, of another version: the "upgrade". */
let otherCli: string;

beforeAll(async () => {
  t = makeEnv();
  repo = t.repo({
    '.hermes/config.yaml': guardedConfig('agents:\n  timeoutMs: 5000\nhooks:\n  timeoutMs: 6000\n'),
    'gen/x.ts': 'x\n',
    '.claude/settings.json': '{}\n',
  });
  expect((await t.cli(['init', '--agents', 'claude'], { cwd: repo })).code).toBe(0);
  // What init wrote (the agents' stub, their hook config) is committed, as a team does: the
  // test's undoing of an allowed commit (a hard reset) must not take it away. (Once it did: a
  // commit let through under hooks.onUnavailable "allow" carried init's untracked files, the
  // reset deleted the stub, and every later hook command found no stub and did nothing.)
  const committed = await run('sh', ['-c', 'git add -A && git commit -qm "hermesd init" && git status --porcelain'], { cwd: repo, env: t.env });
  expect(committed).toEqual({ code: 0, out: '' });
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
  otherCli = copyInstall(join(t.home, '..', 'other-install'), { version: `${pkg.version}-other` });
}, 120_000);

afterAll(async () => {
  await run(process.execPath, [otherCli, 'stop'], { cwd: repo, env: t.env }).catch(() => undefined);
  await t?.cleanup();
});

describe('a thousand guarded questions while the daemon is killed, stopped, restarted and upgraded', () => {
  it('none is allowed; every refusal names the rule or the fault', async () => {
    const writeCmd = toolHookCommand(repo, 'claude', 'PreToolUse', 'Write');
    const bashCmd = toolHookCommand(repo, 'claude', 'PreToolUse', 'Bash');
    const agentEnv = { ...t.env, CLAUDE_PROJECT_DIR: repo };
    const ask = async (kind: (typeof ROUND)[number], n: number): Promise<Outcome> => {
      const started = Date.now();
      const o = await asked(kind, n);
      return { ...o, n, started, ended: Date.now() };
    };
    const asked = async (kind: (typeof ROUND)[number], n: number): Promise<Omit<Outcome, 'n' | 'started' | 'ended'>> => {
      if (kind === 'write') {
        const payload = {
          session_id: 'chaos',
          cwd: repo,
          hook_event_name: 'PreToolUse',
          tool_name: 'Write',
          tool_input: { file_path: join(repo, 'gen/x.ts'), content: `w${n}` },
        };
        return { kind, ...(await run('sh', ['-c', writeCmd], { cwd: repo, env: agentEnv, input: JSON.stringify(payload) })) };
      }
      if (kind === 'bash') {
        const payload = { session_id: 'chaos', cwd: repo, hook_event_name: 'PreToolUse', tool_name: 'Bash', tool_input: { command: `echo ${n} > gen/x.ts` } };
        return { kind, ...(await run('sh', ['-c', bashCmd], { cwd: repo, env: agentEnv, input: JSON.stringify(payload) })) };
      }
      const before = head(repo);
      const r = await run('sh', ['-c', `printf 'key = "%s" %s\\n' "$1" "$2" > creds.txt && git add -A && git commit -qm "key $2"`, 'sh', KEY, String(n)], {
        cwd: repo,
        env: t.env,
      });
      const moved = head(repo) !== before;
      // The allowed exception is undone, so every later commit holds a key again.
      if (moved) await run('git', ['reset', '-q', '--hard', before], { cwd: repo, env: t.env });
      return { kind, ...r, moved };
    };

    // The questions: three agents asking at once, and one user committing.
    const outcomes: Outcome[] = [];
    const numbers = Array.from({ length: QUESTIONS }, (_, n) => n);
    const agentQueue = numbers.filter((n) => ROUND[n % ROUND.length] !== 'commit');
    const commitQueue = numbers.filter((n) => ROUND[n % ROUND.length] === 'commit');
    const agentWorker = async () => {
      for (let n = agentQueue.shift(); n !== undefined; n = agentQueue.shift()) outcomes.push(await ask(ROUND[n % ROUND.length]!, n));
    };
    const committer = async () => {
      for (let n = commitQueue.shift(); n !== undefined; n = commitQueue.shift()) outcomes.push(await ask('commit', n));
    };
    const commits = commitQueue.length;

    // The faults, one after another, each after a random number of answered questions (not a
    // random time: a fast machine answers more questions per second, and would see fewer faults).
    const faults: Record<string, number> = { kill: 0, stop: 0, restart: 0, upgrade: 0, downgrade: 0 };
    const faultLog: Fault[] = [];
    const fault = (name: string) => {
      faults[name]!++;
      faultLog.push({ name, at: Date.now() });
    };
    let done = false;
    const chaos = async () => {
      // Counted from the last fault's start: the answers given while a fault lasts (a stop of
      // seconds) count too, or a daemon that answers faster would see fewer faults.
      let from = 0;
      while (!done) {
        const at = from + Math.floor(between(8, 40));
        while (!done && outcomes.length < at) await sleep(10);
        if (done) break;
        from = outcomes.length;
        const pid = recordedPid(repo);
        const roll = Math.random();
        if (roll < 0.35 && pid && alive(pid)) {
          fault('kill');
          process.kill(pid, 'SIGKILL');
        } else if (roll < 0.6 && pid && alive(pid)) {
          fault('stop');
          process.kill(pid, 'SIGSTOP');
          await sleep(between(1500, 3500));
          try {
            process.kill(pid, 'SIGCONT');
          } catch {
            // gone
          }
        } else if (roll < 0.75) {
          fault('restart');
          await run(process.execPath, [CLI, 'restart'], { cwd: repo, env: t.env });
        } else if (roll < 0.88) {
          fault('upgrade');
          await run(process.execPath, [otherCli, 'restart'], { cwd: repo, env: t.env });
        } else {
          fault('downgrade');
          await run(process.execPath, [CLI, 'start'], { cwd: repo, env: t.env });
        }
      }
    };
    const chaosDone = chaos();
    await Promise.all([agentWorker(), agentWorker(), agentWorker(), committer()]);
    done = true;
    await chaosDone;

    expect(outcomes.length, `${outcomes.length} of ${QUESTIONS} questions came back`).toBe(QUESTIONS);
    expect(commits, 'the round has 200 commits in a thousand questions').toBe(200);
    // About one fault every 24 answers: some 40 in a thousand questions, whatever the machine's speed.
    expect(
      Object.values(faults).reduce((a, b) => a + b, 0),
      JSON.stringify(faults),
    ).toBeGreaterThan(20);

    // An agent's refusal is its structured deny (exit 0, the deny on stdout); a commit's, a refused commit.
    const refusedCall = (o: Outcome) => o.code === 0 && o.out.includes('"permissionDecision":"deny"');
    const byRule = (o: Outcome) => (o.kind === 'commit' ? o.out.includes('no-aws-keys') : refusedCall(o) && o.out.includes('repository rule'));
    // A fault, named: what happened, and that it refused.
    const byFault = (o: Outcome) => (o.kind === 'commit' ? /hermesd: .+(refused|stopped)/.test(o.out) : refusedCall(o) && /hermesd: .+refused/.test(o.out));
    const allowed = outcomes.filter((o) => (o.kind === 'commit' ? o.moved : !refusedCall(o)));
    const unchecked = allowed.filter(
      (o) => o.kind === 'commit' && o.out.includes('UNCHECKED because hooks.onUnavailable is "allow"') && o.out.includes('could not be started'),
    );
    const wronglyAllowed = allowed.filter((o) => !unchecked.includes(o));
    expect(
      wronglyAllowed.map((o) => said(o, faultLog)),
      `${wronglyAllowed.length} question(s) allowed, none may be; the first: ${wronglyAllowed[0] ? said(wronglyAllowed[0], faultLog) : ''}`,
    ).toEqual([]);
    const unnamed = outcomes.filter((o) => !allowed.includes(o) && !byRule(o) && !byFault(o));
    expect(
      unnamed.map((o) => said(o, faultLog)),
      `${unnamed.length} refusal(s) name neither the rule nor the fault; the first: ${unnamed[0] ? said(unnamed[0], faultLog) : ''}`,
    ).toEqual([]);
    // The hooks the agents ran were hermesd's all along: the stub they source is still there.
    expect(existsSync(join(repo, '.hermes/agent-hook')), "the agents' stub .hermes/agent-hook is gone").toBe(true);
    // The file the agents asked to write was never changed by a question (the hooks judge; nothing writes).
    expect(readFileSync(join(repo, 'gen/x.ts'), 'utf8'), 'the protected gen/x.ts was changed').toBe('x\n');
    // Most questions were answered by a daemon, not by a fault.
    expect(
      outcomes.filter(byRule).length,
      `only ${outcomes.filter(byRule).length} of ${QUESTIONS} were judged by a daemon (the rest by faults: ${JSON.stringify(faults)})`,
    ).toBeGreaterThan(QUESTIONS / 2);
  }, 600_000);
});
