/**
 * A server's bare repository and a developer's clone of it, for the tests of what the server's
 * pre-receive hook judges: push from the clone, commit there, read the server's refs. The
 * places are read when each call is made (tests set them up in beforeAll).
 */
import { spawnSync } from 'node:child_process';
import { gitIn, writeFiles, type TestEnv } from './env.js';

export type ServerSide = {
  /** `git push …` from the clone: its exit code and what git said on stderr. */
  push(...args: string[]): { code: number; err: string };
  /** Writes `files` in the clone, stages everything and commits; the new commit's id. */
  commit(files: Record<string, string>, message: string): string;
  /** The commit the server's `ref` names, or '' when it has none. */
  serverTip(ref?: string): string;
};

export function serverSide(t: () => TestEnv, places: () => { server: string; clone: string }): ServerSide {
  return {
    push(...args) {
      const r = spawnSync('git', ['push', ...args], { cwd: places().clone, env: t().env, encoding: 'utf8', timeout: 60_000 });
      return { code: r.status ?? -1, err: r.stderr };
    },
    commit(files, message) {
      const { clone } = places();
      writeFiles(clone, files);
      gitIn(t(), clone, 'add', '-A');
      gitIn(t(), clone, 'commit', '-qm', message);
      return gitIn(t(), clone, 'rev-parse', 'HEAD').trim();
    },
    serverTip(ref = 'refs/heads/main') {
      return spawnSync('git', ['rev-parse', '--verify', '-q', ref], { cwd: places().server, env: t().env, encoding: 'utf8' }).stdout.trim();
    },
  };
}
