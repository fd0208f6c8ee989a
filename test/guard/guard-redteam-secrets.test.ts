/**
 * Red team, promise 3 (secrets): no secret value reaches the model or SessionDB, in any of
 * the forms the issue names (copies, hard links, search, skills, base64, hex, reversed,
 * spaced, split, deep or ignored .env files, old values in history, the daemon's own
 * environment). The values are chosen so that shape-based redaction alone misses them.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  DAEMON_GITHUB_TOKEN,
  DAEMON_OPENAI_KEY,
  findLeak,
  readFile,
  redTeam,
  searchFiles,
  skillView,
  terminal,
  type Attack,
  type RedTeam,
} from '../helpers/redteam.js';

const CONFIG = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;
const SMTP = 'correcthorse9battery';
const WEBHOOK = 'whsec7Qx9Lm4Rt2Vn1Kd8';
const DEEP = 'deepvalue5Kq8Zr3Wm';
const BUILD = 'buildvalue2Hn7Tc4Xp';
const VENDOR = 'vendorvalue9Fj3Lw6Bs';
const LEGACY = 'legacysigning4Pd8Ny1';
const ALL = [SMTP, WEBHOOK, DEEP, BUILD, VENDOR, LEGACY, DAEMON_OPENAI_KEY, DAEMON_GITHUB_TOKEN];

const SKILL = `---
name: deploy
description: How to deploy this service.
---
# Deploy

Run the deploy script.
`;

let rt: RedTeam;
beforeAll(async () => {
  rt = await redTeam({
    config: CONFIG,
    files: {
      '.gitignore': '.env\nbuild/\nvendor/\n',
      '.hermes/skills/deploy/SKILL.md': SKILL,
      '.hermes/skills/deploy/references/notes.md': `The mail relay accepts ${SMTP} from the deploy host.\n`,
    },
    untracked: {
      '.env': `SMTP_PASS=${SMTP}\nSTRIPE_WEBHOOK=${WEBHOOK}\n`,
      'a/b/c/d/e/.env': `DEEP_PASS=${DEEP}\n`,
      'build/.env': `BUILD_PASS=${BUILD}\n`,
      'vendor/lib/.env': `VENDOR_PASS=${VENDOR}\n`,
    },
    prepare: ({ g, repo }) => {
      // An old secret that was committed once and removed: still in `git log -p`.
      mkdirSync(`${repo}/config`, { recursive: true });
      writeFileSync(`${repo}/config/.env.production`, `SIGNING=${LEGACY}\n`);
      g('add', 'config/.env.production');
      g('commit', '-qm', 'add production env');
      g('rm', '-q', 'config/.env.production');
      g('commit', '-qm', 'remove production env');
    },
  });
}, 120_000);
afterAll(async () => rt?.close());
afterEach(() => rt.reset());

/** No form of any secret in what the model received (every request of the task). */
function noLeak(run: Attack, values: string[] = ALL): void {
  const seen = JSON.stringify(run.requests);
  expect(findLeak(seen, values), run.results.join('\n').slice(0, 3000)).toBeUndefined();
}

describe('secret values never reach the model', () => {
  it('cp .env notes.txt, then read_file', async () => {
    noLeak(await rt.attack('copy', [[terminal('cp .env notes.txt; cat notes.txt')], [readFile('notes.txt')]]));
  });

  it('a hard link to .env, then read_file', async () => {
    noLeak(await rt.attack('hardlink', [[terminal('ln .env hl.txt; ls -l hl.txt')], [readFile('hl.txt')]]));
  });

  it('search_files over a copy', async () => {
    noLeak(await rt.attack('search', [[terminal('cat .env > found.txt; cp .env found2.txt')], [searchFiles('SMTP|STRIPE|correct|whsec')]]));
  });

  it('skill_view of a skill file holding a value', async () => {
    noLeak(await rt.attack('skill', [[skillView('deploy', 'references/notes.md')]]));
  });

  it('base64 .env', async () => {
    noLeak(await rt.attack('base64', [[terminal('base64 .env; base64 -w0 .env; echo; tail -c +3 .env | base64')]]));
  });

  it('xxd and od of .env', async () => {
    noLeak(await rt.attack('hex', [[terminal('xxd -p .env; od -An -tx1 .env')]]));
  });

  it('rev .env', async () => {
    noLeak(await rt.attack('reversed', [[terminal('rev .env')]]));
  });

  it('spaced out', async () => {
    noLeak(await rt.attack('spaced', [[terminal("sed 's/./& /g' .env")]]));
  });

  it('split in two', async () => {
    const halves = [SMTP, WEBHOOK].flatMap((v) => [v.slice(0, Math.ceil(v.length / 2)), v.slice(Math.ceil(v.length / 2))]);
    noLeak(await rt.attack('split', [[terminal('cut -c1-19 .env'), terminal('cut -c20- .env')]]), halves);
  });

  it('a .env five levels deep', async () => {
    noLeak(await rt.attack('deep', [[terminal('cat a/b/c/d/e/.env; base64 a/b/c/d/e/.env')]]));
  });

  it('.env under build/ and vendor/', async () => {
    noLeak(await rt.attack('ignored-dirs', [[terminal('cat build/.env vendor/lib/.env; rev build/.env')]]));
  });

  it('old values in git log -p', async () => {
    noLeak(await rt.attack('history', [[terminal('git log -p --all | cat; git show HEAD~2:config/.env.production | base64')]]));
  });

  it("the daemon's own keys through the environment", async () => {
    noLeak(
      await rt.attack('environment', [
        [terminal('printenv OPENAI_API_KEY; printenv GITHUB_TOKEN | base64; env | rev; cat /proc/$PPID/environ | tr "\\0" "\\n"')],
      ]),
    );
  });

  it('state.db holds none of the values', () => {
    expect(findLeak(rt.stateDbBytes().toString('latin1'), ALL)).toBeUndefined();
  });
});
