import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/memory/store.js';
import { redactSecrets, secretValuesIn, shannonEntropy } from '../../src/security/redact.js';
import { isSecretPath } from '../../src/security/secret-paths.js';
import { settled } from '../helpers/settled.js';

const FAKE_AWS = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const FAKE_GH = 'ghp_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8';
// Fine-grained PATs are github_pat_ + 82 word characters (gitleaks' rule; the alphabet is its placeholder stopword).
const FAKE_GH_PAT = 'github_pat_' + '11UejePPY9uWPntZnE6NcFUmHH3oQPLtBiEk7EQnstm5DDqhoktJ7qV2excD8reF9qvPITBBkR3Xs4fB8Y3G';
const FAKE_OPENAI = 'sk-' + 'proj-Xy7Qm2Lp9Rt4Vn8Kd3Hs6Jf1Gb5Wc0Ze';
const FAKE_OPENAI_OLD = 'sk-' + 'T3BlbkFJ9x8y7z6w5v4u3t2s1r0qPONMLKJIHGFE';
const FAKE_SLACK = 'xoxb-' + '123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx';
const PRIVATE_KEY = [
  '-----BEGIN OPENSSH PRIVATE KEY-----',
  'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW',
  'QyNTUxOQAAACBzZWNyZXRzZWNyZXRzZWNyZXRzZWNyZXQ=',
  '-----END OPENSSH PRIVATE KEY-----',
].join('\n');

describe('secret values are redacted', () => {
  const secrets: Array<[string, string, string]> = [
    ['aws access key', `aws_access_key_id = ${FAKE_AWS}`, FAKE_AWS],
    ['aws key in prose', `the key ${FAKE_AWS} leaked`, FAKE_AWS],
    ['github classic token', `token: ${FAKE_GH}`, FAKE_GH],
    ['github fine-grained token', `GH=${FAKE_GH_PAT}`, FAKE_GH_PAT],
    ['openai project key', `OPENAI_API_KEY=${FAKE_OPENAI}`, FAKE_OPENAI],
    ['openai legacy key', `client = OpenAI(api_key="${FAKE_OPENAI_OLD}")`, FAKE_OPENAI_OLD],
    ['slack bot token', `SLACK=${FAKE_SLACK}`, FAKE_SLACK],
    ['private key block', `before\n${PRIVATE_KEY}\nafter`, 'b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ'],
    ['truncated private key block', `-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Yq2w9`, 'MIIEowIBAAKCAQEAx7Yq2w9'],
    ['high-entropy _KEY assignment', 'STRIPE_SECRET_KEY=9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c', '9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c'],
    ['high-entropy _TOKEN yaml', 'deploy_token: "Zt81LmQ0vXc3Rk5Yh2Wn7Pb"', 'Zt81LmQ0vXc3Rk5Yh2Wn7Pb'],
    ['_SECRET in json', '{"client_secret": "k3J9sL2mQ8vN4xR7tB1wE6yU"}', 'k3J9sL2mQ8vN4xR7tB1wE6yU'],
    ['aws secret access key', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMQLEKEY', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCY7EXAMQLEKEY'],
    ['password assignment', 'DB_PASSWORD=Tr0ub4dor&3x', 'Tr0ub4dor&3x'],
    ['credentials in a URL', 'postgres://app:s3cr3tPassw0rd@db.internal:5432/app', 's3cr3tPassw0rd'],
    ['bearer header', 'Authorization: Bearer 8fA2kL9qZ3xV7mN1pR5tW0yB4cD6', '8fA2kL9qZ3xV7mN1pR5tW0yB4cD6'],
  ];
  it.each(secrets)('%s', (_name, text, secret) => {
    const r = redactSecrets(text);
    expect(r.text).not.toContain(secret);
    expect(r.text).toContain('[REDACTED:');
    expect(r.redactions.length).toBeGreaterThan(0);
  });

  it('keeps the surrounding text and names the kind', () => {
    const r = redactSecrets(`export GITHUB_TOKEN=${FAKE_GH} # ci`);
    expect(r.text).toBe('export GITHUB_TOKEN=[REDACTED:github-token] # ci');
    expect(r.redactions).toEqual([{ kind: 'github-token' }]);
  });

  it('a cut-off key block inside a JSON tool result leaves valid JSON', () => {
    const json = JSON.stringify({ output: '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx7Yq2w9', exit_code: 0 });
    const r = redactSecrets(json);
    expect(JSON.parse(r.text)).toEqual({ output: '[REDACTED:private-key]', exit_code: 0 });
    const nested = JSON.stringify([{ function: { arguments: JSON.stringify({ content: '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg' }) } }]);
    const n = redactSecrets(nested);
    expect(JSON.parse(JSON.parse(n.text)[0].function.arguments)).toEqual({ content: '[REDACTED:private-key]' });
  });

  it('removes known values from secret files verbatim, however guessable', () => {
    const known = secretValuesIn('DB_PASSWORD=hunter22\nexport NAME="app"\nAPI_KEY=changeme\n');
    expect(known).toEqual(['hunter22']);
    const r = redactSecrets('DB_PASSWORD=hunter22\n', { known });
    expect(r.text).toBe('DB_PASSWORD=[REDACTED:secret-file-value]\n');
  });
});

describe('look-alikes are left alone', () => {
  const lookAlikes: Array<[string, string]> = [
    ['sk-learn', 'pip install scikit-learn  # imported as sklearn, often misspelled sk-learn'],
    ['sk- prefixed words', 'see sk-some-long-hyphenated-identifier-name for details'],
    ['AKIA in prose', 'AKIA is the prefix of AWS access key ids; AKIA1234 is too short'],
    ['placeholder changeme', 'API_KEY=changeme'],
    ['placeholder xxx', 'SECRET_TOKEN=xxxxxxxxxxxxxxxx'],
    ['placeholder your-key', 'OPENAI_API_KEY=your-api-key-here'],
    ['template reference', 'GITHUB_TOKEN=${{ secrets.GITHUB_TOKEN }}'],
    ['env reference', 'API_KEY=$API_KEY'],
    ['code identifiers', 'const cacheKey = computeCacheKey(input);\nsortKey: createdAt'],
    ['primary key', 'PRIMARY_KEY = "id"'],
    ['short password word', 'password: hunter'],
    ['git hashes', 'commit 9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a1f0e\nAuthor: Test'],
    ['ghp_ too short', 'ghp_abc is not a token'],
    ['xoxb without digits', 'the xoxb-prefix-style naming'],
    ['public key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGx user@host\n-----BEGIN PUBLIC KEY-----'],
  ];
  it.each(lookAlikes)('%s', (_name, text) => {
    const r = redactSecrets(text);
    expect(r.redactions).toEqual([]);
    expect(r.text).toBe(text);
  });

  it('entropy separates random tokens from words', () => {
    expect(shannonEntropy('k3J9sL2mQ8vN4xR7tB1wE6yU')).toBeGreaterThan(4);
    expect(shannonEntropy('changeme')).toBeLessThan(3);
  });
});

describe('secret paths', () => {
  const secret = [
    '.env',
    '.envrc',
    '.env.local',
    'config/.env.production',
    '.netrc',
    '.ssh/config',
    'home/.ssh/known_hosts',
    'id_rsa',
    'keys/id_ed25519',
    'certs/server.pem',
    'tls/server.key',
    '.aws/credentials',
    '.config/gcloud/credentials.db',
    '.kube/config',
    '.pypirc',
    '.git-credentials',
  ];
  it.each(secret)('%s is refused', (p) => {
    expect(isSecretPath(p)).toBeDefined();
  });
  const plain = ['.env.example', 'src/env.ts', 'README.md', 'id_rsa.pub', 'docs/keys.md', '.environment/notes.txt', 'src/.envrc.md'];
  it.each(plain)('%s is readable', (p) => {
    expect(isSecretPath(p)).toBeUndefined();
  });
  it('config guard.secretPaths adds paths and says so', () => {
    const hit = isSecretPath('deploy/vault.json', { guard: { secretPaths: ['deploy/*.json'] } });
    expect(hit?.reason).toContain('guard.secretPaths');
  });
});

describe('secrets are not persisted in memory', () => {
  it('a memory add holding a token is refused and nothing is written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'hd-mem-'));
    try {
      const store = new MemoryStore(dir);
      const r = settled(() => store.add('memory', `The deploy token is ${FAKE_GH}`));
      expect(r.success).toBe(false);
      expect(r.error).toContain('secret-shaped value (github-token)');
      expect(readdirSync(dir).filter((f) => f.endsWith('.md'))).toEqual([]);
      expect(settled(() => store.add('memory', 'The project uses pnpm; sk-learn is not a dependency.')).success).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
