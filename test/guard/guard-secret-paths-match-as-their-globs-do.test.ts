/**
 * isSecretPath tests a path's last segment before a glob's own matcher (every path in a
 * history goes through it). That shortcut must never change a verdict: for every path of a
 * generated set and every glob of guard.secretPaths (the defaults and other shapes), the
 * verdict is picomatch's, with the options the config is validated with.
 */
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { GLOB_OPTIONS } from '../../src/config/schema.js';
import { isSecretPath } from '../../src/security/secret-paths.js';

const GLOBS = [
  '.env',
  '.env.*',
  '**/*.pem',
  '**/*.key',
  '**/id_rsa*',
  '**/id_ed25519*',
  '**/.netrc',
  'secrets/**',
  '**/*.{pem,crt}',
  'config/*secret*',
  '**/.env',
  'id_rsa*',
  '*.key',
  'deploy/prod.yaml',
  '**/cert?.pem',
  'keys/[ab]*.json',
  '**/.envrc.local',
  'a/**/token',
  // Suffixes, prefixes and names the builtin secret paths do not cover (they answer first).
  '**/*.crt',
  'keys/*.json',
  '**/my-*',
  'tok*',
  '**/secret',
];

const NAMES = ['.env', '.env.prod', 'x.pem', 'x.pem.bak', '.pem', 'k.key', 'id_rsa', 'id_rsa.pub', 'id_ed25519', '.netrc', 'prod.yaml'];
const MORE = ['cert1.pem', 'cert12.pem', 'a.json', 'b1.json', 'c.json', 'my-secret-file', 'token', 'x.crt', 'index.ts', '.envrc.local', 'secret'];
const DIRS = ['', 'a/', 'a/b/', 'secrets/', 'config/', 'deploy/', 'keys/', 'a/x/y/', '.hidden/', 'secrets/deep/'];

describe('guard.secretPaths', () => {
  it("gives picomatch's verdict for every path and glob", () => {
    const paths = DIRS.flatMap((d) => [...NAMES, ...MORE].map((n) => d + n));
    const differ: string[] = [];
    let matched = 0;
    for (const g of GLOBS) {
      const glob = picomatch(g, GLOB_OPTIONS);
      const config = { guard: { secretPaths: [g] } };
      for (const p of paths) {
        // A builtin secret path answers first, whatever the config says.
        if (isSecretPath(p)) continue;
        const hit = isSecretPath(p, config)?.kind === 'config';
        if (glob(p)) matched++;
        if (hit !== glob(p)) differ.push(`${g} ${p}: isSecretPath ${hit}, picomatch ${glob(p)}`);
      }
    }
    expect(differ, 'a glob of guard.secretPaths judged a path otherwise than picomatch').toEqual([]);
    // The set holds matches of every kind of glob, not only misses.
    expect(matched, 'the generated paths match too few of the globs to prove anything').toBeGreaterThan(40);
  });
});
