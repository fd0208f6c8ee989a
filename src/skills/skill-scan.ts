/**
 * The skill security scan: the shared threat scanner (scope 'skill') plus checks that only
 * make sense for a folder of instructions and scripts — exfiltration and reverse shells,
 * destructive commands, persistence, obfuscation, executables, symlinks out of the folder.
 * A skill is text the model will follow later, with tools, in any repository: a
 * procedure that would be harmful to follow is refused, not merely flagged.
 */
import { lstatSync, readFileSync, realpathSync } from 'node:fs';
import { join, sep } from 'node:path';
import { redactSecrets } from '../security/redact.js';
import { REMEDY, scanText, type ThreatCategory } from '../security/scan.js';
import { listFiles } from './folder-snapshot.js';

export type Verdict = 'safe' | 'caution' | 'dangerous';
export type Finding = { file: string; id: string; category: string; severity: Exclude<Verdict, 'safe'>; description: string; excerpt?: string };
export type ScanReport = { verdict: Verdict; findings: Finding[] };

type SkillPattern = { id: string; category: string; severity: Finding['severity']; description: string; pattern: RegExp };

export const SKILL_PATTERNS: SkillPattern[] = [
  {
    id: 'reverse-shell',
    category: 'exfiltration',
    severity: 'dangerous',
    description: 'opens a reverse shell to a remote host',
    pattern: /(\/dev\/tcp\/|\bnc(at)?\s+[^\n]*-e\s|\bsocat\b[^\n]*exec:|\bbash\s+-i\s*>&)/i,
  },
  {
    id: 'exfil-upload-file',
    category: 'exfiltration',
    severity: 'dangerous',
    description: 'uploads local files or the environment to a remote host',
    pattern:
      /\b(curl\s+[^\n]*(-d|--data(-binary)?|-F|--form|-T|--upload-file)\s+["']?@[^\s"']*(\.env|\.ssh|id_rsa|id_ed25519|credentials|\.netrc|passwd|shadow)|scp\s+[^\n]*(\.ssh|id_rsa|\.aws)[^\n]*\s\S+@\S+:)/i,
  },
  {
    id: 'destructive-git',
    category: 'destructive',
    severity: 'caution',
    description: 'rewrites shared history or discards work (force push, hard reset, clean -x)',
    pattern: /\bgit\s+(push\s+[^\n]*(--force\b|-f\b)|reset\s+--hard|clean\s+-[a-z]*x)/i,
  },
  {
    id: 'destructive-sql',
    category: 'destructive',
    severity: 'caution',
    description: 'drops a database or table',
    pattern: /\b(drop\s+(database|schema|table)\b|truncate\s+table\b)/i,
  },
  {
    id: 'persistence-authorized-keys',
    category: 'persistence',
    severity: 'dangerous',
    description: 'adds a key to authorized_keys (persistent remote access)',
    pattern: /(\b(tee|cp|mv|cat|echo|printf|install)\b[^\n]*authorized_keys|authorized_keys[^\n]*\b(tee|>>))/i,
  },
  {
    id: 'persistence-autostart',
    category: 'persistence',
    severity: 'dangerous',
    description: 'installs something that starts on its own (launchd agent, systemd user unit, cron, git hook of another repository)',
    pattern: /(LaunchAgents\/|LaunchDaemons\/|launchctl\s+load|\.config\/systemd\/user\/|systemctl\s+--user\s+enable|\/etc\/rc\.local|\(crontab\s+-l)/i,
  },
  {
    id: 'obfuscation-exec-decoded',
    category: 'obfuscation',
    severity: 'dangerous',
    description: 'executes decoded or dynamically built code (exec/eval of base64, hex or compressed data)',
    pattern:
      /(\b(exec|eval)\s*\(\s*[^\n]{0,80}(b64decode|base64|decode\(|fromhex|zlib|marshal|codecs)|\beval\s+"?\$\(\s*(echo|printf)[^\n]*\|\s*(base64|xxd)|\bxxd\s+-r\s+-p[^\n]*\|\s*(sh|bash))/i,
  },
  {
    id: 'obfuscation-long-blob',
    category: 'obfuscation',
    severity: 'caution',
    description: 'contains a long encoded blob that a reviewer cannot read',
    pattern: /[A-Za-z0-9+/]{400,}={0,2}/,
  },
];

const EXECUTABLE_MAGIC: Array<{ magic: Buffer; what: string }> = [
  { magic: Buffer.from([0x7f, 0x45, 0x4c, 0x46]), what: 'ELF executable' },
  { magic: Buffer.from([0x4d, 0x5a]), what: 'Windows executable' },
  { magic: Buffer.from([0xcf, 0xfa, 0xed, 0xfe]), what: 'Mach-O executable' },
  { magic: Buffer.from([0xce, 0xfa, 0xed, 0xfe]), what: 'Mach-O executable' },
  { magic: Buffer.from([0xca, 0xfe, 0xba, 0xbe]), what: 'Mach-O universal binary or Java class' },
];

/** A NUL byte in the first 8,000 bytes (git's own test): not text a person or model can review. */
export function isBinary(data: Buffer): boolean {
  return data.subarray(0, 8000).includes(0);
}

export function verdictOf(findings: Finding[]): Verdict {
  if (findings.some((f) => f.severity === 'dangerous')) return 'dangerous';
  return findings.length ? 'caution' : 'safe';
}

/** Scans the text of one skill file. */
export function scanSkillText(text: string, file: string): Finding[] {
  // The shared scanner says which of its hits are cautions in a skill (e.g. "cp .env.example .env").
  const out: Finding[] = scanText(text, 'skill', { cautions: true }).map((h) => ({
    file,
    id: h.id,
    category: h.category,
    severity: h.severity,
    description: h.description,
    excerpt: h.excerpt,
  }));
  const normalised = text.normalize('NFKC');
  for (const p of SKILL_PATTERNS) {
    const m = p.pattern.exec(normalised);
    if (!m) continue;
    const excerpt = normalised
      .slice(Math.max(0, m.index - 20), Math.min(normalised.length, m.index + Math.min(m[0].length, 80) + 20))
      .replace(/\s+/g, ' ')
      .trim();
    out.push({ file, id: p.id, category: p.category, severity: p.severity, description: p.description, excerpt });
  }
  return out;
}

/** Scans the bytes of one file of a skill (text patterns, executables, binary content). */
export function scanSkillFile(data: Buffer, file: string): Finding[] {
  for (const { magic, what } of EXECUTABLE_MAGIC) {
    if (data.length >= magic.length && data.subarray(0, magic.length).equals(magic)) {
      return [
        {
          file,
          id: 'binary-executable',
          category: 'binary',
          severity: 'dangerous',
          description: `is a compiled program (${what}); skills carry readable scripts, not binaries`,
        },
      ];
    }
  }
  if (isBinary(data)) {
    // Images and fonts in assets/ are ordinary; binary data anywhere else cannot be reviewed.
    const severity = file.startsWith('assets/') ? 'caution' : 'dangerous';
    return [{ file, id: 'binary-content', category: 'binary', severity, description: 'contains binary data that cannot be reviewed as text' }];
  }
  return scanSkillText(data.toString('utf8'), file);
}

function inside(root: string, p: string): boolean {
  return p === root || p.startsWith(root + sep);
}

/** Scans every file of a skill folder, including where its symlinks point. */
export function scanSkillDir(dir: string): ScanReport {
  const findings: Finding[] = [];
  let realRoot: string;
  try {
    realRoot = realpathSync(dir);
  } catch {
    return { verdict: 'safe', findings };
  }
  for (const rel of listFiles(dir)) {
    const abs = join(dir, rel);
    const st = lstatSync(abs);
    if (st.isSymbolicLink()) {
      let target: string | undefined;
      try {
        target = realpathSync(abs);
      } catch {
        target = undefined;
      }
      if (!target || !inside(realRoot, target)) {
        findings.push({
          file: rel,
          id: 'symlink-escape',
          category: 'symlink',
          severity: 'dangerous',
          description: 'is a symlink that points outside the skill folder',
        });
        continue;
      }
    }
    if (!st.isFile() && !st.isSymbolicLink()) continue;
    try {
      findings.push(...scanSkillFile(readFileSync(abs), rel));
    } catch {
      // a dangling in-folder link or a vanished file has nothing to scan
    }
  }
  return { verdict: verdictOf(findings), findings };
}

/**
 * Secret-shaped values in the text files of a skill folder, one finding per file and kind
 *. Skills are committed to git and shown to every later session, so a value the
 * guard would redact from a tool result must not be stored in one. The guard's own
 * `redactSecrets` decides, so its look-alikes (`sk-learn`, `API_KEY=changeme`, `${VAR}`)
 * pass here too. Findings carry no excerpt: the value itself must not travel further.
 */
export function secretFindings(dir: string): Finding[] {
  const out: Finding[] = [];
  for (const rel of listFiles(dir)) {
    let data: Buffer;
    try {
      // Symlinks are skipped: one inside the folder points at a file listed here anyway.
      if (!lstatSync(join(dir, rel)).isFile()) continue;
      data = readFileSync(join(dir, rel));
    } catch {
      continue;
    }
    if (isBinary(data)) continue;
    const kinds = [...new Set(redactSecrets(data.toString('utf8')).redactions.map((r) => r.kind))];
    for (const kind of kinds) {
      out.push({ file: rel, id: `secret:${kind}`, category: 'secret', severity: 'dangerous', description: `contains a secret-shaped value (${kind})` });
    }
  }
  return out;
}

/** The refusal for `secretFindings`, worded like memory's: what was found, where, and what to do instead. */
export function describeSecretFindings(findings: Finding[]): string {
  const byFile = new Map<string, string[]>();
  for (const f of findings) byFile.set(f.file, [...(byFile.get(f.file) ?? []), f.id.replace(/^secret:/, '')]);
  const where = [...byFile].map(([file, kinds]) => `${file} contains a secret-shaped value (${kinds.join(', ')})`).join('; ');
  return `Blocked: ${where}; skills are shared and versioned in git — reference an environment variable instead.`;
}

/** One sentence for the model: why the change was refused, and what to do instead. */
export function describeFindings(findings: Finding[]): string {
  return findings
    .filter((f) => f.severity === 'dangerous')
    .map((f) => {
      const remedy = REMEDY[f.category as ThreatCategory];
      return `${f.file} ${f.description} [${f.id}]${f.excerpt ? `: "${f.excerpt.slice(0, 100)}"` : ''}${remedy ? ` (${remedy})` : ''}`;
    })
    .join('; ');
}
