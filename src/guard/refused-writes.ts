/**
 * A write the sandbox refused reaches the command as "Read-only file system" (EROFS): true,
 * but not why, nor what to do instead. This reads a command's output for those refusals and
 * names, for each path, what keeps it read-only — the repository rule that protects it (its id
 * and message: "run the generator"), hermesd's guard (its config, hook managers', agents'
 * files), or git's directory — so the model gets the rule beside the command's own output,
 * as the file tools give it.
 */
import { relativeTo, resolvePhysical } from '../rules/protected-paths.js';
import { protectMatcher, type GuardConfig } from './guard-config.js';
import { guardOwnedPath } from './sandbox-plan.js';

export type RefusedWrite = { path: string; why: string; rule?: string };

/** A line that reports a refused write: the shells', coreutils', git's, Python's and Node's wordings. */
const READ_ONLY = /read-only file system|\bEROFS\b/i;
/**
 * What a confined command prints as it ends where it left a process in the background: the
 * sandbox ends that process with the call (agent-shell.ts), so a write it was about to make is
 * never tried, nor recorded; the protected paths the command's text names are named instead.
 */
export const BACKGROUND_ENDED = 'hermesd: this command left a process in the background, which the sandbox ends with the call; run it in the foreground.';

/** Quoted paths as the tools print them: 'x', "x", ‘x’, “x”, `x'. */
const QUOTED = /'([^'\n]+)'|"([^"\n]+)"|‘([^’\n]+)’|“([^”\n]+)”|`([^'`\n]+)'/g;
/** Paths reported per command, at most (a `cp -r` into a protected folder fails once per file). */
const MAX_REPORTED = 10;

/** Candidate paths on one output line: quoted strings, and the words and colon-separated parts that look like paths. */
function candidates(line: string): string[] {
  const out: string[] = [];
  for (const m of line.matchAll(QUOTED)) out.push(m.slice(1).find((g) => g !== undefined)!);
  for (const part of line.replace(QUOTED, ' ').split(/:\s|,\s|\s+/)) {
    const p = part.replace(/^[([{<]+|[)\]}>:;,.]+$/g, '');
    if (p && /[/.]/.test(p) && !/^\d/.test(p) && !/^https?:/.test(p)) out.push(p);
  }
  return out;
}

/**
 * The refused writes `output` reports, each with what keeps its path read-only. `cwd`: where
 * the command ran (relative paths are its); paths outside `root` are left out. `command`: the
 * command's text, read only where the output reports a refused write without naming a path
 * hermesd knows (perl's `die` prints "Read-only file system at -e line 1."): the protected
 * paths the text names are then the ones named; so they are where the command left a process in
 * the background that the confinement ended (BACKGROUND_ENDED).
 */
export function refusedWrites(output: string, opts: { root: string; cwd?: string; config: GuardConfig; gitDirs?: string[]; command?: string }): RefusedWrite[] {
  const ended = output.includes(BACKGROUND_ENDED);
  if (!ended && !READ_ONLY.test(output)) return [];
  const found = namer(opts);
  for (const line of output.split('\n')) if (READ_ONLY.test(line) && !found.consider(candidates(line))) return found.out;
  // The command's words, split at the shell's and the interpreters' quotes and operators (`open(F, ">gen/a.ts")`).
  if ((found.out.length === 0 || ended) && opts.command)
    found.consider(
      opts.command.split(/[\s'"`<>|&;=(),]+/).filter((w) => /[/.]/.test(w) && !/^https?:/.test(w)),
      true,
    );
  return found.out;
}

/**
 * The refused writes among absolute `paths` a confined command's processes recorded
 * (refused-preload.ts), each with what keeps it read-only; paths nothing of hermesd's keeps
 * read-only (a write the user's own permissions refused) are left out.
 */
export function refusedPaths(paths: string[], opts: { root: string; config: GuardConfig; gitDirs?: string[] }): RefusedWrite[] {
  const found = namer(opts);
  found.consider(paths);
  return found.out;
}

/** Names what keeps each path read-only, once per path and at most MAX_REPORTED. */
function namer(opts: { root: string; cwd?: string; config: GuardConfig; gitDirs?: string[] }) {
  const matcher = protectMatcher(opts.config);
  const seen = new Set<string>();
  const out: RefusedWrite[] = [];
  // From the command's text, not git's directory: a confined command names its confine script there.
  const consider = (paths: string[], fromCommand = false): boolean => {
    for (const c of paths) {
      // The path as open(2) reached it (through the links where they stand: rules/protected-paths.ts).
      const abs = resolvePhysical(c, opts.cwd ?? opts.root).path;
      const rel = relativeTo(opts.root, abs);
      if (!rel || seen.has(rel)) continue;
      const rule = matcher.ruleFor(rel);
      let found: RefusedWrite | undefined;
      if (rule) found = { path: rel, rule: rule.id, why: `protected by rule ${rule.id}: ${rule.message}` };
      else if (guardOwnedPath(rel))
        found = { path: rel, why: "hermesd's guard reads it (the repository config, hook managers' and agents' files): only the user changes it" };
      else if (fromCommand) continue;
      else if (rel === '.git' || rel.startsWith('.git/') || opts.gitDirs?.some((d) => abs === d || abs.startsWith(d + '/'))) {
        found = { path: rel, why: "in the git directory only git's own state (objects, refs, the index…) is writable: use git commands, not file writes" };
      }
      if (!found) continue;
      seen.add(rel);
      out.push(found);
      if (out.length >= MAX_REPORTED) return false;
    }
    return true;
  };
  return { out, consider };
}

/** One line per refused write, for the tool result. */
export function describeRefusedWrites(refused: RefusedWrite[]): string {
  return refused.map((r) => `${r.path} is read-only in the sandbox: ${r.why}`).join('\n');
}
