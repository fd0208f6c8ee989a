/**
 * Red team, promise 3: the hooks cannot be switched off from a task. An include that sets
 * core.hooksPath, a line sourced by every hook, husky's user init file, and stopping or
 * shutting down the daemon so that hooks time out: none of them sticks.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { redTeam, terminal, type RedTeam } from '../helpers/redteam.js';

const CONFIG = `rules:
  - id: generated-files
    message: Do not edit generated files; change the schema and run the generator.
    protect: ["src/generated/**"]
`;

let rt: RedTeam;
beforeAll(async () => {
  rt = await redTeam({
    config: CONFIG,
    files: { 'src/generated/api.ts': 'export const v = 1;\n', 'team.gitconfig': '[pull]\n\trebase = true\n' },
    // A team config the repository's .git/config includes from the work tree (as some teams do).
    afterInit: ({ g }) => g('config', 'include.path', '../team.gitconfig'),
  });
}, 120_000);
afterAll(async () => rt?.close());
afterEach(() => rt.reset());

const hooksPath = () => {
  try {
    return rt.g('config', '--get', 'core.hooksPath');
  } catch {
    return '';
  }
};

/** Process state letter from /proc (T = stopped), or '' when gone. */
function procState(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
  } catch {
    return '';
  }
}

describe('hooks stay on', () => {
  it('an [include] in .git/config that sets core.hooksPath', async () => {
    const config = readFileSync(join(rt.repo, '.git', 'config'), 'utf8');
    const effective = hooksPath();
    const run = await rt.attack('include', [
      [
        terminal(
          `printf '[core]\\n\\thooksPath = /dev/null\\n' > .git/rt-extra; printf '[include]\\n\\tpath = rt-extra\\n' >> .git/config; git config --get core.hooksPath`,
        ),
      ],
    ]);
    expect(readFileSync(join(rt.repo, '.git', 'config'), 'utf8'), run.results.join('\n')).toBe(config);
    expect(hooksPath()).toBe(effective);
  });

  it('a work-tree file .git/config includes, edited to set core.hooksPath', async () => {
    const effective = hooksPath();
    const team = readFileSync(join(rt.repo, 'team.gitconfig'), 'utf8');
    const run = await rt.attack('included-file', [
      [terminal(`printf '[core]\\n\\thooksPath = /dev/null\\n' >> team.gitconfig; git config --get core.hooksPath`)],
    ]);
    expect(readFileSync(join(rt.repo, 'team.gitconfig'), 'utf8'), run.results.join('\n')).toBe(team);
    expect(hooksPath()).toBe(effective);
  });

  it('`exit 0` appended to <git-dir>/hermesd/settings (what the runners source)', async () => {
    const file = join(rt.repo, '.git', 'hermesd', 'settings');
    const before = readFileSync(file, 'utf8');
    const run = await rt.attack('hook-settings', [[terminal(`echo 'exit 0' >> .git/hermesd/settings; cat .git/hermesd/settings`)]]);
    expect(readFileSync(file, 'utf8'), run.results.join('\n')).toBe(before);
  });

  it('HUSKY=0 in ~/.config/husky/init.sh', async () => {
    await rt.attack('husky-init', [
      [
        terminal(
          `mkdir -p ~/.config/husky "\${XDG_CONFIG_HOME:-$HOME/.config}/husky"; echo 'export HUSKY=0' | tee -a ~/.config/husky/init.sh "\${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh"`,
        ),
      ],
    ]);
    expect(existsSync(join(rt.userHome, '.config', 'husky', 'init.sh'))).toBe(false);
  });

  it('kill -STOP of the daemon from a background process', async () => {
    const pid = rt.daemonPid();
    try {
      await rt.attack('sigstop', [
        [
          terminal(
            `pid=$(sed -n 's/.*"pid": *\\([0-9]*\\).*/\\1/p' .git/hermesd/daemon.json); setsid sh -c "sleep 0.3; kill -STOP $pid" >/dev/null 2>&1 & kill -STOP $pid; echo "tried $pid"`,
          ),
        ],
      ]);
      // The background process had its chance; a stopped daemon shows as T.
      await new Promise((r) => setTimeout(r, 800));
      expect(procState(pid)).not.toBe('T');
      expect((await rt.client.call<{ pid: number }>('GET', '/v1/status', undefined, { timeoutMs: 2_000 })).pid).toBe(pid);
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone
      }
    }
  });

  it('POST /v1/shutdown to the daemon from terminal', async () => {
    const pid = rt.daemonPid();
    const socket = JSON.parse(readFileSync(join(rt.repo, '.git', 'hermesd', 'daemon.json'), 'utf8')).socket as string;
    await rt.attack('shutdown', [[terminal(`curl -s --unix-socket ${socket} -X POST http://x/v1/shutdown; echo; kill -TERM ${pid}; echo done`)]]);
    await new Promise((r) => setTimeout(r, 500));
    expect(procState(pid)).not.toBe('');
    expect((await rt.client.call<{ pid: number }>('GET', '/v1/status', undefined, { timeoutMs: 2_000 })).pid).toBe(pid);
  });
});
