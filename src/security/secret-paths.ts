/**
 * Secret files: which repository paths no tool reads, and why (`.env`, keys, credential
 * stores, an `.npmrc` with a token, and the paths `guard.secretPaths` adds). The guard and
 * the file tools enforce it; the sandbox masks the same files.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { GLOB_OPTIONS } from '../config/schema.js';

/** The configuration key that adds secret paths (a HermesConfig, or the guard's partial view of one). */
export type SecretPathsConfig = { guard?: { secretPaths?: string[] } };

export type SecretPathHit = { kind: string; reason: string };

/** Committed templates of .env files: they exist to be read and hold placeholders. */
const ENV_TEMPLATE = /^\.env\.(example|sample|template|dist|defaults)$/i;

const BUILTIN_SECRET_PATHS: Array<{ kind: string; test: (rel: string, base: string) => boolean; reason: string }> = [
  {
    kind: 'env-file',
    test: (_r, b) => (b === '.env' || b === '.envrc' || b.startsWith('.env.')) && !ENV_TEMPLATE.test(b),
    reason: '.env files hold credentials',
  },
  { kind: 'netrc', test: (_r, b) => b === '.netrc' || b === '_netrc', reason: '.netrc holds login passwords' },
  { kind: 'git-credentials', test: (_r, b) => b === '.git-credentials', reason: '.git-credentials holds tokens' },
  { kind: 'ssh', test: (r) => r.includes('.ssh/') && /(^|\/)\.ssh\//.test(r), reason: '.ssh/ holds SSH keys' },
  { kind: 'ssh-key', test: (_r, b) => /^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$/.test(b), reason: 'SSH private keys are secret' },
  { kind: 'private-key', test: (_r, b) => /\.(pem|key|p12|pfx|jks|keystore)$/i.test(b), reason: 'key and certificate stores hold private keys' },
  { kind: 'aws', test: (r) => r.includes('.aws/') && /(^|\/)\.aws\/(credentials|config)$/.test(r), reason: 'AWS credential files hold access keys' },
  {
    kind: 'gcloud',
    test: (r, b) => (r.includes('gcloud/') && /(^|\/)(\.config\/)?gcloud\//.test(r)) || b === 'application_default_credentials.json',
    reason: 'gcloud credential files hold tokens',
  },
  { kind: 'kube', test: (r) => r.endsWith('.kube/config') && /(^|\/)\.kube\/config$/.test(r), reason: 'kubeconfig holds cluster credentials' },
  { kind: 'docker', test: (r) => r.endsWith('.docker/config.json') && /(^|\/)\.docker\/config\.json$/.test(r), reason: 'Docker config holds registry auth' },
  { kind: 'pypirc', test: (_r, b) => b === '.pypirc', reason: '.pypirc holds package index passwords' },
];

/** `.npmrc` is only secret when it carries auth; a registry URL alone is fine to read. */
const NPMRC_AUTH = /(_authToken|_auth|_password)\s*=|\/\/[^\s]*:_/;

const matchers = new Map<string, (p: string) => boolean>();
function globMatcher(g: string): (p: string) => boolean {
  let m = matchers.get(g);
  if (!m) matchers.set(g, (m = picomatch(g, GLOB_OPTIONS)));
  return m;
}

const isNpmrcGlob = (g: string) => /(^|\/)\.npmrc$/.test(g);

/**
 * A test of a path's last segment that every path a glob matches passes (a literal name, a
 * `prefix*` or a `*suffix`): the glob's own matcher runs only for a path that passes, so the
 * paths of a whole history go through a string comparison each, not a matcher per glob.
 * Undefined where the last segment is any other pattern (then the matcher always runs).
 */
const lastSegmentTests = new Map<string, ((base: string) => boolean) | undefined>();
function lastSegmentTest(g: string): ((base: string) => boolean) | undefined {
  if (lastSegmentTests.has(g)) return lastSegmentTests.get(g);
  const last = g.slice(g.lastIndexOf('/') + 1);
  const literal = (x: string) => x !== '' && !/[*?[\]{}()!+@\\]/.test(x);
  let test: ((base: string) => boolean) | undefined;
  if (literal(last)) test = (b) => b === last;
  else if (last.startsWith('*') && literal(last.slice(1))) test = (b) => b.endsWith(last.slice(1));
  else if (last.endsWith('*') && literal(last.slice(0, -1))) test = (b) => b.startsWith(last.slice(0, -1));
  lastSegmentTests.set(g, test);
  return test;
}

function normalise(rel: string): string {
  if (!rel.includes('\\') && !rel.startsWith('./')) return rel;
  return rel.replace(/\\/g, '/').replace(/^\.\//, '');
}

/**
 * Whether a repository-relative path is a secret file no tool may read, and why.
 * `root` lets `.npmrc` be judged on its content (auth tokens or not).
 */
export function isSecretPath(rel: string, config?: SecretPathsConfig, opts: { root?: string } = {}): SecretPathHit | undefined {
  const path = normalise(rel);
  const base = path.slice(path.lastIndexOf('/') + 1);
  for (const p of BUILTIN_SECRET_PATHS) {
    if (p.test(path, base)) return { kind: p.kind, reason: p.reason };
  }
  if (base === '.npmrc') {
    if (!opts.root) return { kind: 'npmrc', reason: '.npmrc may hold registry tokens' };
    try {
      if (NPMRC_AUTH.test(readFileSync(join(opts.root, path), 'utf8'))) return { kind: 'npmrc', reason: '.npmrc holds registry auth tokens' };
    } catch {
      // unreadable or missing: nothing secret to protect
    }
  }
  const extra = config?.guard?.secretPaths ?? [];
  if (extra.length > 0) {
    for (const g of extra) {
      // `.npmrc` in the config defaults is content-checked above, not refused outright.
      if (base === '.npmrc' && isNpmrcGlob(g)) continue;
      if (lastSegmentTest(g)?.(base) === false) continue;
      if (globMatcher(g)(path)) return { kind: 'config', reason: `listed in guard.secretPaths (${g})` };
    }
  }
  return undefined;
}

/** The sentence a file tool answers with when it refuses a secret path. */
export function secretPathMessage(rel: string, hit: SecretPathHit): string {
  return (
    `Refused: ${rel} is a secret file (${hit.reason}); hermesd tools do not read secret files. ` +
    `Ask the user for the value you need, or read a template such as .env.example. ` +
    `(Loosen with guard.secretPaths in .hermes/config.yaml for configured paths.)`
  );
}
