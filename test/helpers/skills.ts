/** Fixtures for skill tests: a temp home, SKILL.md text, and a byte-exact picture of the skills folder. */
import { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function tempHome(): { home: string; skills: string; cleanup: () => void } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-sk-')));
  return { home: base, skills: join(base, 'skills'), cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

export function skillMd(name: string, description = `Use ${name} when the task needs it.`, body = 'Step 1: read the docs.\nStep 2: do the work.\n'): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

/** Every path under `dir` (except .git) with its bytes, mode or link target. */
export function pictureOf(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const rec = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(rel ? join(dir, rel) : dir);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      if (!rel && name === '.git') continue;
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(dir, r));
      if (st.isSymbolicLink()) out[r] = `link:${readlinkSync(join(dir, r))}`;
      else if (st.isDirectory()) {
        out[r] = `dir:${(st.mode & 0o777).toString(8)}`;
        rec(r);
      } else out[r] = `file:${(st.mode & 0o777).toString(8)}:${readFileSync(join(dir, r)).toString('base64')}`;
    }
  };
  rec('');
  return out;
}
