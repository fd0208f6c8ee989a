/**
 * HEAD read without starting git: the commit it names, for keys that must change when HEAD
 * moves. Only the plain layouts are read (a branch in a loose file or packed-refs, or a
 * detached HEAD); anything else (reftable, a symbolic ref in a ref file) is undefined, and
 * the caller asks git.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const OID = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

function read(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** The commit HEAD names, `unborn <ref>` on a branch without commits, undefined when it cannot be read this way. */
export function headCommitOf(gitDir: string, commonDir: string): string | undefined {
  const head = read(join(gitDir, 'HEAD'))?.trim();
  if (!head) return undefined;
  if (OID.test(head)) return head;
  if (!head.startsWith('ref: refs/heads/')) return undefined;
  const ref = head.slice('ref: '.length);
  // reftable's HEAD points here; its refs are not files
  if (ref === 'refs/heads/.invalid') return undefined;
  const loose = read(join(commonDir, ref));
  if (loose !== undefined) {
    const oid = loose.trim();
    return OID.test(oid) ? oid : undefined;
  }
  const packed = read(join(commonDir, 'packed-refs'));
  if (packed !== undefined) {
    const suffix = ` ${ref}`;
    for (const line of packed.split('\n')) {
      if (line.endsWith(suffix)) {
        const oid = line.slice(0, line.length - suffix.length);
        return OID.test(oid) ? oid : undefined;
      }
    }
  }
  return `unborn ${ref}`;
}
