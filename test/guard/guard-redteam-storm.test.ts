/**
 * Red team, the daemon itself: a rename storm costs time, never the daemon (status keeps
 * answering and the watcher's child processes stay few), and a hook that cannot reach the
 * daemon fails closed — for an agent task's commit and for the user's own; only a daemon that
 * cannot start at all lets the user's commit through, as hooks.onUnavailable says.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from '../helpers/env.js';
import { redTeam, terminal, type RedTeam } from '../helpers/redteam.js';

const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
hooks:
  timeoutMs: 1500
`;

let rt: RedTeam;
beforeAll(async () => {
  rt = await redTeam({ config: CONFIG, files: { 'notes.md': 'notes\n', 'src/a.ts': 'a\n' } });
}, 120_000);
afterAll(async () => rt?.close());

/** Children of `pid` right now (from /proc). */
function childrenOf(pid: number): number {
  let n = 0;
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) n++;
    } catch {
      // exited
    }
  }
  return n;
}

describe('the daemon under attack', () => {
  it('a rename storm: status keeps answering throughout, child processes stay bounded', async () => {
    const pid = rt.daemonPid();
    await new Promise((r) => setTimeout(r, 300));
    const storm = spawn(process.execPath, [
      '-e',
      `const fs=require('fs');const r=${JSON.stringify(rt.repo)};const end=Date.now()+4000;
       for(let i=0;i<300;i++)fs.mkdirSync(r+'/storm'+i,{recursive:true});
       let k=0;while(Date.now()<end){const i=k%300;const a=r+'/storm'+i,b=r+'/gust'+i;try{fs.renameSync(a,b);fs.renameSync(b,a);}catch{}k++}`,
    ]);
    const stormDone = new Promise((r) => storm.on('exit', r));
    let worstMs = 0;
    let mostChildren = 0;
    let probes = 0;
    let failures = 0;
    let done = false;
    void stormDone.then(() => (done = true));
    while (!done) {
      const t0 = Date.now();
      try {
        // A wedged daemon would miss a bound far beyond any load: how fast it answers is the bench's to measure.
        await rt.client.call('GET', '/v1/status', undefined, { timeoutMs: 10_000 });
      } catch {
        failures++;
      }
      worstMs = Math.max(worstMs, Date.now() - t0);
      mostChildren = Math.max(mostChildren, childrenOf(pid));
      probes++;
      await new Promise((r) => setTimeout(r, 100));
    }
    // At least two answers while the storm blew (a loaded machine answers fewer, never none).
    expect(probes).toBeGreaterThanOrEqual(2);
    expect(failures, `worst status answer ${worstMs} ms`).toBe(0);
    expect(mostChildren).toBeLessThanOrEqual(8);
    // And it settles: the storm's directories are noticed, and the daemon is still itself.
    expect((await rt.client.call<{ pid: number }>('GET', '/v1/status', undefined, { timeoutMs: 10_000 })).pid).toBe(pid);
    spawnSync('sh', ['-c', 'rm -rf storm* gust*'], { cwd: rt.repo });
  }, 60_000);

  it("a hook that cannot reach the daemon fails closed for the task's commit and for the user's; where no daemon can start the user's is judged in the hook itself", async () => {
    const pid = rt.daemonPid();
    const head = rt.g('rev-parse', 'HEAD');

    // The agent's commit while the daemon is stopped: the command says it runs, waits until the
    // daemon is stopped (a file the test makes), commits, and says when it is done; only then
    // does the daemon resume. Nothing here depends on how fast the machine is.
    writeFileSync(join(rt.repo, 'notes.md'), 'notes\nagent\n');
    rt.g('add', 'notes.md');
    const started = join(rt.repo, '.started');
    const go = join(rt.repo, '.go');
    const done = join(rt.repo, '.done');
    const until = async (file: string) => {
      while (!existsSync(file)) await new Promise((r) => setTimeout(r, 50));
    };
    let resumed: Promise<void> | undefined;
    const run = await rt.attack(
      'fail-closed',
      [[terminal(': > .started; while [ ! -f .go ]; do sleep 0.05; done; git commit -qm agent-commit; echo "commit exit $?" > .done; cat .done', 60)]],
      {
        onEvent: (e) => {
          if (e.type !== 'tool_call' || resumed) return;
          resumed = (async () => {
            await until(started);
            process.kill(pid, 'SIGSTOP');
            try {
              writeFileSync(go, '');
              await until(done);
            } finally {
              process.kill(pid, 'SIGCONT');
            }
          })();
        },
      },
    );
    await resumed;
    const said = run.results.join('\n');
    expect(rt.g('rev-parse', 'HEAD'), said).toBe(head);
    expect(said).toMatch(/commit exit [1-9]/);
    expect(said).toContain("it comes from hermesd's sandbox, where every fault refuses");
    for (const f of [started, go, done]) rmSync(f, { force: true });

    // The user's own commit while the daemon is stopped: a daemon that runs but does not answer never lets it through.
    process.kill(pid, 'SIGSTOP');
    let user: { status: number | null; stderr: string };
    try {
      user = spawnSync('git', ['commit', '-qm', 'user commit'], { cwd: rt.repo, env: rt.env, encoding: 'utf8', timeout: 30_000 });
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    expect(user.status, user.stderr).not.toBe(0);
    expect(user.stderr).toContain('did not answer within 1500 ms');
    expect(rt.g('rev-parse', 'HEAD')).toBe(head);

    // No daemon, and none can start (a socket directory whose path is too long for a socket): the
    // user's commit is judged in the hook's own process (a clean one goes through, saying so), never unchecked.
    expect(spawnSync(process.execPath, [CLI, 'stop'], { cwd: rt.repo, env: rt.env }).status).toBe(0);
    const unstartable = { ...rt.env, HERMESD_SOCKET_DIR: join(tmpdir(), 'x'.repeat(120)) };
    const alone = spawnSync('git', ['commit', '-qm', 'user commit'], { cwd: rt.repo, env: unstartable, encoding: 'utf8', timeout: 60_000 });
    expect(alone.status, alone.stderr).toBe(0);
    expect(alone.stderr).toContain('Socket path is');
    expect(alone.stderr).toContain('judging this commit here, without the daemon');
    expect(alone.stderr).not.toContain('UNCHECKED');
    expect(rt.g('rev-parse', 'HEAD')).not.toBe(head);
  }, 120_000);
});
