/**
 * SkillStore: procedures the agent keeps for itself, as `[category/]name/SKILL.md` folders.
 * User skills live in `$HERMES_HOME/skills`, a git repository this store owns: every
 * accepted change is exactly one commit naming the action, the skill and the session.
 * Every change is security-scanned after it is written; a dangerous verdict, or a
 * secret-shaped value in any text file of the folder, puts every byte back and commits
 * nothing. Project skills (`<repo>/.hermes/skills`) are shown as [project], win name
 * collisions, and are read-only here (they change through the repository's own commits).
 * Several daemons share one home, so each change holds a cross-process lock from the first
 * read to the commit.
 */
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
  chmodSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { Conflict, HermesError, NotFound, Refused } from '../errors/index.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { LockTimeout, withLock } from '../storage/lock.js';
import { fuzzyFindAndReplace } from '../text/fuzzy-replace.js';
import { isSkillFile, SKILL_FILE, type SkillScope } from './catalog.js';
import { SkillRepo, type Commit } from './git.js';
import { bumpGeneration, invalidateCatalog, loadCatalog, type CatalogPaths } from './index-cache.js';
import { skillManageArgs, type SkillManageArgs } from './schema.js';
import { describeFindings, describeSecretFindings, isBinary, scanSkillDir, secretFindings, verdictOf, type Finding, type Verdict } from './skill-scan.js';
import { removeEmptyDirs, restoreTree, snapshotTree, listFiles, type TreeSnapshot } from './folder-snapshot.js';
import {
  checkCategory,
  checkName,
  checkSkillMd,
  checkSupportingContent,
  checkSupportingPath,
  parseSkillMd,
  SkillValidationError,
  SUPPORTING_DIRS,
} from './validate.js';
import { projectSkillsDir, userSkillsDir } from '../paths/index.js';

/** A change waits this long for another daemon's change to finish before giving up. */
export const SKILL_LOCK_TIMEOUT_MS = 30_000;
/** Where archived skills go: inside the skills repository (so history keeps them), hidden from the index (dot folder). */
export const ARCHIVE_DIR = '.archive';
/** A skill's last view is rewritten at most this often: the curator counts days, and a view must stay a read. */
const USAGE_RESOLUTION_MS = 60 * 60 * 1000;

export type ManageSuccess = {
  success: true;
  action: string;
  name: string;
  message: string;
  /** The commit made, or null when the change left every file as it was. */
  commit: string | null;
  verdict: Verdict;
  /** Caution-level scan findings: accepted, but worth a look. */
  findings?: Finding[];
  path?: string;
  strategy?: string;
  replacements?: number;
};
export type ManageResult = ManageSuccess;

export type SkillSummary = { name: string; category: string | null; description: string; scope: SkillScope };

export type SkillView = {
  success: true;
  name: string;
  category: string | null;
  scope: SkillScope;
  description: string;
  frontMatter: Record<string, unknown>;
  body: string;
  /** Supporting files by folder, as paths relative to the skill (pass one as file_path). */
  files: Record<(typeof SUPPORTING_DIRS)[number], string[]>;
};
/** A skill file: `content` for text; for a binary file `binary` and, when asked for, its bytes as `base64`. */
export type SkillFileView = { success: true; name: string; filePath: string; content?: string; binary?: boolean; base64?: string; bytes: number };

export type SkillStoreOptions = {
  /** $HERMES_HOME */
  home: string;
  /** The work tree whose `.hermes/skills` are the project skills (none when omitted). */
  repoRoot?: string;
  lockTimeoutMs?: number;
};

type Located = { dir: string; category: string | null; scope: SkillScope };

/**
 * The store refuses by throwing hermesd's named errors: invalid input is a UsageError
 * (SkillValidationError), a missing skill or file NotFound, a clash Conflict, a read-only
 * project skill or a dangerous scan Refused (with the scan's findings as details).
 */
const refused = (message: string, findings?: Finding[]) => new Refused(message, findings ? { findings } : undefined);

function isDir(p: string): boolean {
  try {
    return lstatSync(p).isDirectory();
  } catch {
    return false;
  }
}

function isFile(p: string): boolean {
  try {
    return lstatSync(p).isFile();
  } catch {
    return false;
  }
}

/** Finds `name` in a skills root laid out as [category/]name/SKILL.md. */
function locate(root: string, name: string, scope: SkillScope): Located | undefined {
  if (isFile(join(root, name, SKILL_FILE))) return { dir: join(root, name), category: null, scope };
  let tops: string[];
  try {
    tops = readdirSync(root).sort();
  } catch {
    return undefined;
  }
  for (const top of tops) {
    if (top.startsWith('.')) continue;
    if (isFile(join(root, top, name, SKILL_FILE))) return { dir: join(root, top, name), category: top, scope };
  }
  return undefined;
}

/** Refuses a path that would pass through a symlink inside the skill folder (it could lead out). */
function checkNoSymlinkOnPath(skillDir: string, rel: string): void {
  let p = skillDir;
  for (const part of rel.split('/')) {
    p = join(p, part);
    try {
      if (lstatSync(p).isSymbolicLink())
        throw new SkillValidationError(`${rel} passes through the symlink ${relative(skillDir, p)}; skill files cannot be written through links.`);
    } catch (err) {
      if (err instanceof HermesError) throw err;
      return;
    }
  }
}

export class SkillStore {
  readonly userRoot: string;
  readonly projectRoot: string | undefined;
  readonly lockFile: string;
  /** `$HERMES_HOME/.skills-usage.json`: when each skill was last viewed (by the agent, an MCP client, the CLI). */
  private readonly usageFile: string;
  private readonly repo: SkillRepo;
  private readonly paths: CatalogPaths;
  private readonly lockTimeoutMs: number;

  constructor(opts: SkillStoreOptions) {
    this.userRoot = userSkillsDir(opts.home);
    this.projectRoot = opts.repoRoot ? projectSkillsDir(opts.repoRoot) : undefined;
    this.lockFile = join(opts.home, '.skills.lock');
    this.usageFile = join(opts.home, '.skills-usage.json');
    this.repo = new SkillRepo(this.userRoot);
    this.lockTimeoutMs = opts.lockTimeoutMs ?? SKILL_LOCK_TIMEOUT_MS;
    this.paths = {
      userRoot: this.userRoot,
      projectRoot: this.projectRoot,
      snapshotDir: join(opts.home, '.skills-index'),
      generationFile: join(opts.home, '.skills-generation'),
    };
  }

  // ------------------------------------------------------------------ reading

  /** The index for the volatile prompt tier (empty when there are no skills). */
  indexText(): string {
    return loadCatalog(this.paths).text;
  }

  list(): SkillSummary[] {
    return loadCatalog(this.paths).skills.map((s) => ({ name: s.name, category: s.category, description: s.description, scope: s.scope }));
  }

  /** Skills left out of the index (unparseable, dangerous by hand edit, duplicates), for status and doctor. */
  warnings(): string[] {
    return loadCatalog(this.paths).warnings;
  }

  /** Forgets the cached index (after a change seen by the watcher). */
  invalidate(): void {
    invalidateCatalog(this.paths);
  }

  private find(name: string): Located | undefined {
    return (this.projectRoot && locate(this.projectRoot, name, 'project')) || locate(this.userRoot, name, 'user');
  }

  /** When each skill was last viewed (ISO times), as far as this home recorded it. */
  lastViews(): Record<string, string> {
    try {
      const raw = JSON.parse(readFileSync(this.usageFile, 'utf8')) as unknown;
      return raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, string>) : {};
    } catch {
      return {};
    }
  }

  /** Records a view of `name` (best effort: a view never fails because its record could not be written). */
  private noteView(name: string): void {
    try {
      const views = this.lastViews();
      const last = Date.parse(views[name] ?? '');
      if (Number.isFinite(last) && Date.now() - last < USAGE_RESOLUTION_MS) return;
      views[name] = new Date().toISOString();
      writeFileAtomicSync(this.usageFile, JSON.stringify(views, null, 2) + '\n', 0o600);
    } catch {
      // a read-only or vanished home: the curator then goes by the skill's last commit
    }
  }

  /** skill_view: the body and front matter, or one supporting file with `filePath`. */
  view(name: string, filePath?: string): SkillView | SkillFileView {
    const found = this.loadable(name);
    this.noteView(name);
    if (!isSkillFile(filePath, name)) return readSkillFile(found.dir, name, checkSupportingPath(filePath));
    const text = readFileSync(join(found.dir, SKILL_FILE), 'utf8');
    const parsed = parseSkillMd(text);
    const all = supportingFiles(found.dir);
    const files = Object.fromEntries(SUPPORTING_DIRS.map((d) => [d, all.filter((f) => f.startsWith(d + '/'))])) as SkillView['files'];
    return {
      success: true,
      name,
      category: found.category,
      scope: found.scope,
      description: parsed.frontMatter.description,
      frontMatter: parsed.frontMatter,
      body: parsed.body,
      files,
    };
  }

  /**
   * One file of a skill as it is on disk, SKILL.md included: skill_view hands the model a
   * parsed SKILL.md, a client that addresses files one by one (MCP resources) wants the bytes.
   */
  readFile(name: string, filePath: string, opts: { base64?: boolean } = {}): SkillFileView {
    const found = this.loadable(name);
    return readSkillFile(found.dir, name, isSkillFile(filePath, name) ? SKILL_FILE : checkSupportingPath(filePath), opts.base64);
  }

  /** The files of a skill that `readFile` serves: SKILL.md, then its supporting files. */
  files(name: string): string[] {
    return [SKILL_FILE, ...supportingFiles(this.loadable(name).dir)];
  }

  /** The skill `name`, refused when it is missing or scans dangerous (then nothing of it is served). */
  private loadable(name: string): Located {
    checkName(name);
    const found = this.find(name);
    if (!found) throw new NotFound(`No skill named "${name}". The available skills: the skills_list tool, or \`hermesd skills list\`.`);
    const report = scanSkillDir(found.dir);
    if (report.verdict === 'dangerous') {
      throw refused(`Skill "${name}" scans dangerous and is not loaded: ${describeFindings(report.findings)}.`, report.findings);
    }
    return found;
  }

  /**
   * Commits that changed the user skill `name` (or one of that name since deleted), newest first.
   * NotFound for a name no user skill has had; a project skill's history is its repository's.
   */
  async history(name: string): Promise<{ commits: Commit[] }> {
    const commits = await this.commitsOf(name);
    if (commits.length > 0 || locate(this.userRoot, name, 'user')) return { commits };
    const project = this.projectSkill(name);
    if (project) throw new NotFound(`"${name}" is a project skill (${project}): its history is the repository's own (git log -- ${project}).`);
    throw new NotFound(`No skill named "${name}" has a history in the user skills (\`hermesd skills list\` names the skills).`);
  }

  /** The commits that changed the user skill `name` (or a skill of that name since deleted), newest first. */
  private async commitsOf(name: string): Promise<Commit[]> {
    checkName(name);
    if (!existsSync(join(this.userRoot, '.git'))) return [];
    const found = locate(this.userRoot, name, 'user');
    const specs = found ? [relative(this.userRoot, found.dir)] : [`:(glob)${name}/**`, `:(glob)*/${name}/**`];
    return await this.repo.log(specs);
  }

  async commitCount(): Promise<number> {
    return this.repo.commitCount();
  }

  // ------------------------------------------------------------------ changing

  /** skill_manage: one change, one commit, or a refusal that leaves every file as it was. */
  async manage(rawArgs: unknown, opts: { sessionId?: string } = {}): Promise<ManageResult> {
    const parsed = skillManageArgs.safeParse(rawArgs);
    if (!parsed.success) {
      const msg = parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
      throw new SkillValidationError(`Invalid skill_manage arguments: ${msg}.`);
    }
    const args = parsed.data;
    const session = opts.sessionId ?? 'unknown';
    try {
      checkName(args.name);
      checkCategory(args.category);
      return await withLock(this.lockFile, () => this.change(args, session), this.lockTimeoutMs);
    } catch (err) {
      throw busyOr(err);
    }
  }

  /**
   * Moves the user skill `name` into `.archive/` as one commit: it leaves the index and the
   * prompt, nothing is deleted, and `revert <name> <the commit before>` brings it back.
   */
  async archive(name: string, opts: { sessionId?: string; reason?: string } = {}): Promise<ManageResult> {
    try {
      checkName(name);
      return await withLock(
        this.lockFile,
        async () => {
          await this.repo.ensure();
          const found = this.userSkill(name);
          const rel = relative(this.userRoot, found.dir);
          const dest = join(this.userRoot, ARCHIVE_DIR, rel);
          const mutate = () => {
            rmSync(dest, { recursive: true, force: true });
            mkdirSync(dirname(dest), { recursive: true });
            renameSync(found.dir, dest);
            removeEmptyDirs(dirname(found.dir), this.userRoot);
          };
          const why = opts.reason ? ` (${opts.reason})` : '';
          const result = await this.transact([found.dir, dest], mutate, `archive ${name}${why} (session ${opts.sessionId ?? 'unknown'})`, false);
          return {
            success: true,
            action: 'archive',
            name,
            path: relative(this.userRoot, dest),
            ...result,
            message: result.commit
              ? `Archived skill "${name}" to ${ARCHIVE_DIR}/${rel}; committed ${result.commit.slice(0, 12)}. Undo: hermesd skills revert ${name} ${result.commit.slice(0, 12)}~1`
              : `Skill "${name}" was already archived; nothing committed.`,
          } satisfies ManageSuccess;
        },
        this.lockTimeoutMs,
      );
    } catch (err) {
      throw busyOr(err);
    }
  }

  /** Archived copies of `name` (`.archive/[category/]name`). */
  private archived(name: string): string[] {
    const root = join(this.userRoot, ARCHIVE_DIR);
    const found = locate(root, name, 'user');
    return found ? [found.dir] : [];
  }

  /** When the user skill `name` last changed (its newest commit), or undefined before its first commit. */
  async lastChanged(name: string): Promise<string | undefined> {
    return (await this.commitsOf(name))[0]?.date;
  }

  /** Restores the user skill `name` as it was at `rev`, as a new commit (after scanning it). */
  async revert(name: string, rev: string, opts: { sessionId?: string } = {}): Promise<ManageResult> {
    try {
      checkName(name);
      return await withLock(this.lockFile, () => this.revertLocked(name, rev, opts.sessionId ?? 'unknown'), this.lockTimeoutMs);
    } catch (err) {
      throw busyOr(err);
    }
  }

  /** The project skill `name`'s folder as a path in the repository (`.hermes/skills/…`), or undefined when there is none. */
  private projectSkill(name: string): string | undefined {
    const found = this.projectRoot ? locate(this.projectRoot, name, 'project') : undefined;
    return found && relative(dirname(dirname(this.projectRoot!)), found.dir);
  }

  private userSkill(name: string): Located {
    const project = this.projectSkill(name);
    if (project) throw refused(`"${name}" is a project skill (${project}) and is read-only to the agent; it changes through the repository's own commits.`);
    const found = locate(this.userRoot, name, 'user');
    if (!found) throw new NotFound(`No user skill named "${name}". Create it with action "create".`);
    return found;
  }

  private async change(args: SkillManageArgs, session: string): Promise<ManageResult> {
    await this.repo.ensure();
    const { action, name } = args;
    let dir: string;
    let detail = '';
    let mutate: () => void;
    const extra: Partial<ManageSuccess> = {};

    switch (action) {
      case 'create': {
        if (this.projectRoot && locate(this.projectRoot, name, 'project')) {
          throw refused(`A project skill named "${name}" exists and would hide a user skill of that name; choose another name.`);
        }
        const existing = locate(this.userRoot, name, 'user');
        if (existing) throw new Conflict(`Skill "${name}" already exists (${relative(this.userRoot, existing.dir)}); use edit or patch to change it.`);
        const category = checkCategory(args.category);
        if (isDir(join(this.userRoot, name))) throw new Conflict(`"${name}" is already a category folder; choose another skill name.`);
        if (category && isFile(join(this.userRoot, category, SKILL_FILE)))
          throw new Conflict(`Category "${category}" is the name of a skill; choose another category.`);
        const content = args.content;
        checkSkillMd(content, name);
        dir = category ? join(this.userRoot, category, name) : join(this.userRoot, name);
        mutate = () => {
          mkdirSync(dir, { recursive: true });
          writeFileAtomicSync(join(dir, SKILL_FILE), content!, 0o644);
        };
        break;
      }
      case 'edit': {
        dir = this.userSkill(name).dir;
        const content = args.content;
        checkSkillMd(content, name);
        mutate = () => writeFileAtomicSync(join(dir, SKILL_FILE), content!, 0o644);
        break;
      }
      case 'patch': {
        dir = this.userSkill(name).dir;
        if (args.old_string === undefined) throw new SkillValidationError('old_string is required for patch.');
        if (args.new_string === undefined) throw new SkillValidationError('new_string is required for patch (use "" to delete the text).');
        const rel = isSkillFile(args.file_path, name) ? SKILL_FILE : checkSupportingPath(args.file_path);
        if (rel !== SKILL_FILE) checkNoSymlinkOnPath(dir, rel);
        const target = join(dir, rel);
        if (!isFile(target)) throw new NotFound(`Skill "${name}" has no file ${rel}.`);
        const before = readFileSync(target, 'utf8');
        const r = fuzzyFindAndReplace(before, args.old_string, args.new_string, args.replace_all ?? false);
        if ('error' in r) throw new SkillValidationError(`patch of ${rel}: ${r.error}`);
        if (rel === SKILL_FILE) {
          try {
            checkSkillMd(r.content, name);
          } catch (err) {
            throw new SkillValidationError(`The patch would break SKILL.md, so it was not applied: ${(err as Error).message}`);
          }
        } else checkSupportingContent(r.content, rel);
        detail = ` ${rel}`;
        extra.strategy = r.strategy;
        extra.replacements = r.count;
        mutate = () => writeFileAtomicSync(target, r.content, statSync(target).mode & 0o777);
        break;
      }
      case 'delete': {
        dir = this.userSkill(name).dir;
        mutate = () => {
          rmSync(dir, { recursive: true, force: true });
          removeEmptyDirs(dirname(dir), this.userRoot);
        };
        break;
      }
      case 'write_file': {
        dir = this.userSkill(name).dir;
        const rel = checkSupportingPath(args.file_path);
        const content = checkSupportingContent(args.file_content, rel);
        checkNoSymlinkOnPath(dir, rel);
        const target = join(dir, rel);
        if (isDir(target)) throw new Conflict(`${rel} is a folder.`);
        detail = ` ${rel}`;
        mutate = () => {
          mkdirSync(dirname(target), { recursive: true });
          writeFileAtomicSync(target, content, rel.startsWith('scripts/') ? 0o755 : 0o644);
        };
        break;
      }
      case 'remove_file': {
        dir = this.userSkill(name).dir;
        const rel = checkSupportingPath(args.file_path);
        checkNoSymlinkOnPath(dir, dirname(rel));
        const target = join(dir, rel);
        let st;
        try {
          st = lstatSync(target);
        } catch {
          throw new NotFound(`Skill "${name}" has no file ${rel}.`);
        }
        if (st.isDirectory()) throw new SkillValidationError(`${rel} is a folder; remove its files one by one.`);
        detail = ` ${rel}`;
        mutate = () => {
          unlinkSync(target);
          removeEmptyDirs(dirname(target), dir);
        };
        break;
      }
    }

    const rel = relative(this.userRoot, dir);
    const message = `${action} ${name}${detail} (session ${session})`;
    const result = await this.transact([dir], mutate, message, action !== 'delete');
    return {
      success: true,
      action,
      name,
      path: rel,
      ...extra,
      ...result,
      message: result.commit
        ? `${describe(action, name)}; committed ${result.commit.slice(0, 12)}.`
        : `${describe(action, name)}: no file changed, nothing committed.`,
    };
  }

  private async revertLocked(name: string, revArg: string, session: string): Promise<ManageResult> {
    await this.repo.ensure();
    if (this.projectRoot && locate(this.projectRoot, name, 'project')) {
      throw refused(`"${name}" is a project skill and is read-only to the agent; revert it with git in the repository.`);
    }
    const rev = await this.repo.resolve(revArg);
    if (!rev) throw new NotFound(`"${revArg}" is not a commit of the skills repository (see hermesd skills history ${name}).`);
    const skillFiles = (await this.repo.treeDirs(rev)).length ? await this.findAt(rev, name) : undefined;
    if (!skillFiles) throw new NotFound(`Skill "${name}" did not exist at ${rev.slice(0, 12)}.`);
    const current = locate(this.userRoot, name, 'user');
    const target = join(this.userRoot, skillFiles.prefix);
    // An archived copy goes in the same commit: a revert of an archive leaves one skill, not two.
    const dirs = [...new Set([target, ...(current ? [current.dir] : []), ...this.archived(name)])];
    const files = await Promise.all(skillFiles.files.map(async (f) => ({ ...f, data: await this.repo.blob(f.blob) })));
    const mutate = () => {
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
      for (const f of files) {
        const abs = join(this.userRoot, f.path);
        mkdirSync(dirname(abs), { recursive: true });
        if (f.mode === '120000') symlinkSync(f.data.toString('utf8'), abs);
        else {
          writeFileSync(abs, f.data);
          chmodSync(abs, f.mode === '100755' ? 0o755 : 0o644);
        }
      }
    };
    const result = await this.transact(dirs, mutate, `revert ${name} to ${rev.slice(0, 12)} (session ${session})`, true);
    return {
      success: true,
      action: 'revert',
      name,
      path: skillFiles.prefix,
      ...result,
      message: result.commit
        ? `Reverted skill "${name}" to ${rev.slice(0, 12)}; committed ${result.commit.slice(0, 12)}.`
        : `Skill "${name}" already matches ${rev.slice(0, 12)}; nothing committed.`,
    };
  }

  private async findAt(rev: string, name: string): Promise<{ prefix: string; files: Array<{ path: string; mode: string; blob: string }> } | undefined> {
    const top = await this.repo.filesAt(rev, name);
    if (top.some((f) => f.path === `${name}/${SKILL_FILE}`)) return { prefix: name, files: top };
    for (const cat of await this.repo.treeDirs(rev)) {
      const files = await this.repo.filesAt(rev, `${cat}/${name}`);
      if (files.some((f) => f.path === `${cat}/${name}/${SKILL_FILE}`)) return { prefix: `${cat}/${name}`, files };
    }
    return undefined;
  }

  /**
   * Snapshot → change → secret check → scan → commit. A secret-shaped value, a dangerous
   * scan, or any failure before the commit lands, restores every snapshotted folder byte
   * for byte and removes folders it created.
   */
  private async transact(
    dirs: string[],
    mutate: () => void,
    message: string,
    scan: boolean,
  ): Promise<{ commit: string | null; verdict: Verdict; findings?: Finding[] }> {
    const snaps: TreeSnapshot[] = dirs.map(snapshotTree);
    const rels = dirs.map((d) => relative(this.userRoot, d));
    const undo = async () => {
      for (const s of snaps) restoreTree(s);
      for (const d of dirs) if (!existsSync(d)) removeEmptyDirs(dirname(d), this.userRoot);
      await this.repo.unstage(rels);
    };
    let verdict: Verdict = 'safe';
    let findings: Finding[] = [];
    try {
      mutate();
      if (scan) {
        // Secret values first: whatever lands in the folder is committed, so the whole folder is checked.
        const secrets = dirs.flatMap((d) => (existsSync(d) ? secretFindings(d) : []));
        if (secrets.length > 0) {
          await undo();
          throw refused(`${describeSecretFindings(secrets)} The change was rolled back (files restored, nothing committed).`, secrets);
        }
        for (const d of dirs) {
          if (!existsSync(d)) continue;
          const r = scanSkillDir(d);
          findings.push(...r.findings);
        }
        verdict = verdictOf(findings);
        if (verdict === 'dangerous') {
          await undo();
          throw refused(
            `Security scan verdict: dangerous — ${describeFindings(findings)}. The change was rolled back (files restored, nothing committed). Rewrite the procedure without it.`,
            findings,
          );
        }
      }
      const pathspecs = rels.filter((r, i) => existsSync(dirs[i]!) || snaps[i]!.entries !== undefined);
      const commit = await this.repo.commitPaths(pathspecs, message);
      if (commit) {
        bumpGeneration(this.paths.generationFile);
        invalidateCatalog(this.paths);
      }
      return { commit: commit ?? null, verdict, ...(findings.length ? { findings } : {}) };
    } catch (err) {
      if (!(err instanceof HermesError)) await undo().catch(() => undefined);
      throw err;
    }
  }
}

function describe(action: string, name: string): string {
  switch (action) {
    case 'create':
      return `Created skill "${name}"`;
    case 'edit':
      return `Rewrote SKILL.md of "${name}"`;
    case 'patch':
      return `Patched skill "${name}"`;
    case 'delete':
      return `Deleted skill "${name}"`;
    case 'write_file':
      return `Wrote a file of skill "${name}"`;
    default:
      return `Removed a file of skill "${name}"`;
  }
}

/** Files under the supporting folders (references/, templates/, …), relative to the skill. */
function supportingFiles(dir: string): string[] {
  return listFiles(dir).filter((f) => SUPPORTING_DIRS.some((d) => f.startsWith(d + '/')));
}

/** Reads `rel` (already checked) of a skill folder, refusing a link that leads out of it. */
function readSkillFile(dir: string, name: string, rel: string, base64 = false): SkillFileView {
  let real: string;
  try {
    real = realpathSync(join(dir, rel));
  } catch {
    throw new NotFound(`Skill "${name}" has no file ${rel}.`);
  }
  if (!real.startsWith(realpathSync(dir) + sep)) throw refused(`${rel} points outside the skill folder.`);
  if (!statSync(real).isFile()) throw new NotFound(`${rel} in skill "${name}" is a folder, not a file; skill_view lists the files.`);
  const data = readFileSync(real);
  if (isBinary(data)) return { success: true, name, filePath: rel, binary: true, bytes: data.length, ...(base64 ? { base64: data.toString('base64') } : {}) };
  return { success: true, name, filePath: rel, content: data.toString('utf8'), bytes: data.length };
}

/** Another daemon held the skills lock for the whole timeout: busy, not broken. */
function busyOr(err: unknown): unknown {
  return err instanceof LockTimeout ? new Conflict(`Skills are busy: ${err.message} Try again.`) : err;
}
