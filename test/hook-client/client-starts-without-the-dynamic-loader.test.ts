/**
 * Every hook of every agent and of git starts hermesd's client, so it is linked statically where
 * the machine's C library can be (no dynamic loader resolving libc at each start: the
 * agent-hooks benchmark has the figures), position-independent (its addresses random: it reads
 * what an agent's model wrote), and as the system links where it cannot — a compiler that
 * refuses `-static-pie` still builds a client that works.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

const answers = (client: string) => execFileSync(client, ['-V'], { encoding: 'utf8' }).trim();

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
});
