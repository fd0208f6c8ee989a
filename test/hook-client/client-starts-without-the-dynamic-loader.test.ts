/**
 * Every hook of every agent and of git starts hermesd's client, so it is linked statically where
 * the machine's C library can be (no dynamic loader resolving libc at each start: the
 * agent-hooks benchmark has the figures), position-independent (its addresses random: it reads
 * what an agent's model wrote), and as the system links where it cannot — a compiler that
 * refuses `-static-pie` still builds a client that works.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileC, compileClient, PREBUILT_CLIENT } from '../../src/hook-client/build.js';
import { PROTOCOL } from '../../src/protocol/ask.js';
import { VERSION } from '../../src/version.js';

const dir = mkdtempSync(join(tmpdir(), 'hd-client-link-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Whether an ELF executable names a program interpreter (PT_INTERP): the dynamic loader that starts it. */
function hasInterpreter(file: string): boolean {
  const b = readFileSync(file);
  if (b.readUInt32BE(0) !== 0x7f454c46 || b[4] !== 2) throw new Error(`${file} is not a 64-bit ELF file`);
  const phoff = Number(b.readBigUInt64LE(0x20));
  const phentsize = b.readUInt16LE(0x36);
  const phnum = b.readUInt16LE(0x38);
  for (let i = 0; i < phnum; i++) if (b.readUInt32LE(phoff + i * phentsize) === 3) return true;
  return false;
}

/** Whether an ELF file is position-independent (ET_DYN), so that its addresses are random at each start. */
const positionIndependent = (file: string) => readFileSync(file).readUInt16LE(0x10) === 3;

/** Whether this machine's compiler links a program statically, position-independent (its addresses random). */
function linksStatically(): boolean {
  const src = join(dir, 'probe.c');
  writeFileSync(src, 'int main(void) { return 0; }\n');
  return compileC(src, join(dir, 'probe'), ['-static-pie']) === undefined;
}

/** What `client -V` prints, or how it failed. */
function answers(client: string): string {
  try {
    return execFileSync(client, ['-V'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    return `(${client} -V failed: ${(err as Error).message.split('\n')[0]})`;
  }
}

describe("hermesd's client", () => {
  it('is linked statically where the C library can be, in the package and when compiled in a clone', () => {
    const statically = linksStatically();
    const here = join(dir, 'client');
    expect(compileClient(here), 'the client did not compile').toBeUndefined();
    for (const client of [PREBUILT_CLIENT, here]) {
      expect(hasInterpreter(client), `${client}: starts through the dynamic loader (this machine links statically: ${statically})`).toBe(!statically);
      expect(positionIndependent(client), `${client}: not position-independent`).toBe(true);
      expect(answers(client)).toBe(`hermesd-client ${VERSION} protocol ${PROTOCOL}`);
    }
  });

  it('is linked as the system links where the compiler refuses to link statically', () => {
    const cc = join(dir, 'cc-without-static');
    writeFileSync(cc, `#!/bin/sh\nfor a; do case $a in -static*) echo "ld: cannot find -lc" >&2; exit 1 ;; esac; done\nexec cc "$@"\n`, { mode: 0o755 });
    const out = join(dir, 'client-dynamic');
    expect(compileClient(out, { ...process.env, HERMESD_CC: cc }), 'the client did not compile without static linking').toBeUndefined();
    expect(hasInterpreter(out), 'a client linked without static linking names the dynamic loader').toBe(true);
    expect(answers(out)).toBe(`hermesd-client ${VERSION} protocol ${PROTOCOL}`);
  });

  it('is linked as the system links where the static one builds but does not run here', () => {
    const cc = join(dir, 'cc-static-broken');
    // With -static-pie, "links" a program that fails at once, as a broken static C library would.
    writeFileSync(
      cc,
      `#!/bin/sh
for a; do case $a in -static*) while [ "$1" != -o ]; do shift; done; printf '#!/bin/sh\\nexit 1\\n' > "$2"; exit 0 ;; esac; done
exec cc "$@"
`,
      { mode: 0o755 },
    );
    const out = join(dir, 'client-after-broken-static');
    expect(compileClient(out, { ...process.env, HERMESD_CC: cc }), 'the client did not compile').toBeUndefined();
    expect(answers(out), 'the client kept is not one that runs').toBe(`hermesd-client ${VERSION} protocol ${PROTOCOL}`);
    expect(hasInterpreter(out), 'the client kept is not the one linked as the system links').toBe(true);
    expect(
      readdirSync(dir).filter((n) => n.startsWith('client-after-broken-static.')),
      'the static trial was left beside the client',
    ).toEqual([]);
  });
});
