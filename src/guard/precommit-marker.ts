/**
 * The record that the pre-commit hook judged a tree: `<git-dir>/hermesd/precommit-ok`,
 * one `<tree> <epoch-ms>` line per pass. post-commit (and the terminal guard) compare a
 * new commit's tree with it to tell a commit the hook saw from one that skipped it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanGitEnv, gitOut } from './git.js';

/** A pass older than this no longer vouches for a commit (a commit follows its hook within seconds). */
export const PRECOMMIT_PASS_TTL_MS = 60 * 60 * 1000;
/** Lines kept in the marker file: enough for interleaved commits in one worktree. */
const MARKER_MAX_LINES = 50;

export function precommitMarkerPath(gitDir: string): string {
  return join(gitDir, 'hermesd', 'precommit-ok');
}

type Pass = { tree: string; at: number };

function readPasses(gitDir: string): Pass[] {
  let text: string;
  try {
    text = readFileSync(precommitMarkerPath(gitDir), 'utf8');
  } catch {
    return [];
  }
  const out: Pass[] = [];
  for (const line of text.split('\n')) {
    const [tree, at] = line.trim().split(/\s+/);
    if (tree && /^[0-9a-f]{40,64}$/.test(tree) && Number.isFinite(Number(at))) out.push({ tree, at: Number(at) });
  }
  return out;
}

/** Called by the pre-commit hook once the rules (and checks) passed on the final staged tree (`git write-tree`). */
export function recordPrecommitPass(gitDir: string, tree: string, now: number = Date.now()): void {
  const passes = readPasses(gitDir).filter((p) => now - p.at < PRECOMMIT_PASS_TTL_MS);
  passes.push({ tree, at: now });
  mkdirSync(join(gitDir, 'hermesd'), { recursive: true });
  writeFileSync(precommitMarkerPath(gitDir), passes.slice(-MARKER_MAX_LINES).map((p) => `${p.tree} ${p.at}`).join('\n') + '\n');
}

/** Whether the pre-commit hook passed `tree` at or after `sinceMs` (and within the TTL). */
export function precommitPassed(gitDir: string, tree: string, opts: { sinceMs?: number; now?: number } = {}): boolean {
  const now = opts.now ?? Date.now();
  const since = Math.max(opts.sinceMs ?? 0, now - PRECOMMIT_PASS_TTL_MS);
  // Millisecond clocks of two processes: allow a little skew.
  return readPasses(gitDir).some((p) => p.tree === tree && p.at >= since - 1000);
}

/**
 * What the pre-commit hook calls once it lets a commit through: records the tree of the
 * index it judged (`indexFile`, the hook's GIT_INDEX_FILE) as passed.
 */
export function recordStagedPass(root: string, gitDir: string, indexFile?: string, gitBin = 'git'): string | undefined {
  const env = cleanGitEnv();
  if (indexFile) env.GIT_INDEX_FILE = indexFile;
  const tree = gitOut(gitBin, ['write-tree'], root, env);
  if (tree) recordPrecommitPass(gitDir, tree);
  return tree;
}
