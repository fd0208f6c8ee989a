/**
 * What another agent's confined shell command was refused, recorded where the command ran: a
 * small library (refused-writes.c) loaded into each of its processes records every write the
 * confinement refused, so the model is told the rule even when the command threw its own
 * error away (`… >/dev/null 2>&1 &`) or wrote after its call returned. The library is this
 * package's build (dist/client/, `npm run build`) where it loads here, else compiled by the
 * daemon once; where neither works, nothing is recorded and the command's own output is read
 * as before. Each session records into its own file in a folder only this user can enter.
 */
import { closeSync, constants, copyFileSync, existsSync, fstatSync, lstatSync, mkdirSync, mkdtempSync, openSync, readSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { compileC, loadsHere } from '../hook-client/build.js';
import type { Logger } from '../storage/log.js';
import { sha256 } from '../text/hash.js';
import { PACKAGE_ROOT } from '../version.js';

/** The library's source in this package. */
export const PRELOAD_SOURCE = join(PACKAGE_ROOT, 'src', 'guard', 'refused-writes.c');
/** The library this package built (npm run build). */
export const PREBUILT_PRELOAD = join(PACKAGE_ROOT, 'dist', 'client', 'hermesd-refused.so');
/** Paths read from one session's record at most (a `cp -r` into a protected folder is refused once per file). */
const MAX_RECORDED = 200;
/**
 * Bytes read from one session's record at most: the folder is writable inside the confinement,
 * so a command may fill a record; the post-tool answer never reads more than this.
 */
const MAX_RECORD_BYTES = 64 * 1024;

/** Compiles the library into `out`; why, when it could not. */
export function compilePreload(out: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return compileC(PRELOAD_SOURCE, out, ['-shared', '-fPIC', '-O2'], { env, mode: 0o644, libs: ['-ldl'] });
}

/** The file name a session's refusals are recorded under: a hash of the agent and its session. */
export function recordName(session: string): string {
  return sha256(session).slice(0, 16);
}

export class RefusedRecord {
  private libState: { lib?: string; why?: string } | undefined;
  /** null: it could not be made. */
  private folder: string | null | undefined;

  /** `dir`: where the library goes, readable inside the confinement (the confine scripts' folder). */
  constructor(
    private readonly dir: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly log: Logger,
    private readonly prebuilt = PREBUILT_PRELOAD,
  ) {}

  /** Why nothing is recorded, once the library was looked for and could not load (status says it); undefined otherwise. */
  problem(): string | undefined {
    return this.libState?.why;
  }

  /** The library to preload, put in place once per daemon (and again where it went); undefined where it cannot load here (the log says why, once). */
  lib(): string | undefined {
    if (this.libState?.lib && !existsSync(this.libState.lib)) this.libState = undefined;
    if (!this.libState) {
      const out = join(this.dir, 'refused.so');
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      let why: string | undefined;
      try {
        // A new file, renamed into place: the one there may be mapped by a command still running (from the daemon before).
        const tmp = `${out}.${process.pid}.tmp`;
        copyFileSync(this.prebuilt, tmp);
        renameSync(tmp, out);
        if (!loadsHere(out)) why = 'the built library does not load here';
      } catch {
        why = 'not built';
      }
      if (why) why = compilePreload(out, this.env) ?? (loadsHere(out) ? undefined : 'the compiled library does not load here');
      this.libState = why ? { why } : { lib: out };
      if (why) {
        rmSync(out, { force: true });
        this.log.warn("confined shell calls: a write refused without output is not recorded (it is told only where the command's output shows it)", { why });
      }
    }
    return this.libState.lib;
  }

  /**
   * The folder the commands record into: in /tmp (writable inside every confinement, Codex's
   * sandbox's too), 0700; undefined where it cannot be made (nothing is recorded then).
   */
  folderPath(): string | undefined {
    // Made again where it is gone or not ours any more (/tmp is everyone's: a cleaner removes it, another user takes the name).
    if (this.folder && !ownPrivateFolder(this.folder)) this.folder = undefined;
    if (this.folder === undefined) {
      try {
        this.folder = mkdtempSync('/tmp/hermesd-refused-');
      } catch {
        this.folder = null;
      }
    }
    return this.folder ?? undefined;
  }

  /** The absolute paths `session`'s commands were refused since the last take, each once, the record emptied. */
  take(session: string): string[] {
    if (!this.folder) return [];
    const file = join(this.folder, recordName(session));
    const taken = `${file}.${process.pid}.taken`;
    try {
      renameSync(file, taken);
    } catch {
      return [];
    }
    try {
      // The folder is writable inside the confinement: what lies there may be a FIFO (an open that
      // would wait for a writer forever) or a link to another file. Only a file of its own is read.
      const fd = openSync(taken, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
      const buf = Buffer.alloc(MAX_RECORD_BYTES);
      let n = 0;
      try {
        if (!fstatSync(fd).isFile()) return [];
        n = readSync(fd, buf, 0, buf.length, 0);
      } finally {
        closeSync(fd);
      }
      // Whole lines only, absolute paths without control characters (a record is written by the command's own processes).
      const lines = buf
        .toString('utf8', 0, n)
        .split('\n')
        .slice(0, n === buf.length ? -1 : undefined);
      return [...new Set(lines.filter((l) => l.startsWith('/') && !/[\u0000-\u001f\u007f]/.test(l)))].slice(0, MAX_RECORDED);
    } catch {
      return [];
    } finally {
      rmSync(taken, { recursive: true, force: true });
    }
  }

  /** The daemon stops: the records go (the library goes with the confine scripts' folder). */
  close(): void {
    if (this.folder) rmSync(this.folder, { recursive: true, force: true });
    this.folder = undefined;
  }
}

/** Whether `path` is a folder (not a link) of this user's that no one else may enter. */
function ownPrivateFolder(path: string): boolean {
  try {
    const st = lstatSync(path);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o077) === 0;
  } catch {
    return false;
  }
}
