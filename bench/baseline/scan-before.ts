/**
 * FROZEN COPY, for comparison only: src/security/scan.ts as it was before (commit
 * decb608). `npm run bench -- detectors` measures it beside the current scanner on the same
 * inputs. Not used by hermesd itself.
 */
/**
 * The threat scanner: named patterns for prompt injection, role hijack, exfiltration and
 * invisible Unicode, run on everything that enters a prompt. Scopes pick which patterns
 * apply: context files (repository authority), memory (stricter: also reading secrets),
 * skills (stricter still: destructive commands, persistence, obfuscation).
 * Matching is case-insensitive on NFKC-normalised text.
 */
export type ThreatScope = 'context' | 'memory' | 'skill';

export type ThreatPattern = {
  id: string;
  category: 'injection' | 'role-hijack' | 'exfiltration' | 'secret-read' | 'invisible-unicode' | 'destructive' | 'persistence' | 'obfuscation';
  description: string;
  scopes: ThreatScope[];
  pattern: RegExp;
};

export type ThreatHit = { id: string; category: ThreatPattern['category']; description: string; excerpt: string };

const ALL: ThreatScope[] = ['context', 'memory', 'skill'];
const STRICT: ThreatScope[] = ['memory', 'skill'];

export const THREAT_PATTERNS: ThreatPattern[] = [
  {
    id: 'ignore-previous-instructions',
    category: 'injection',
    description: 'asks the model to ignore or override its earlier instructions',
    scopes: ALL,
    pattern:
      /\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(the\s+)?(previous|prior|above|earlier|preceding|system)\s+(instructions?|prompts?|rules?|directions?|context)\b/i,
  },
  {
    id: 'ignore-your-instructions',
    category: 'injection',
    description: "asks the model to drop its own instructions ('ignore your instructions')",
    scopes: ALL,
    // Only "your": "ignore these rules in generated code" is an ordinary linter note.
    pattern:
      /\b(ignore|disregard|forget|override)\s+(all\s+(of\s+)?)?your\s+(previous\s+|prior\s+|original\s+|system\s+|current\s+)?(instructions|rules|guidelines|programming|directives|system\s+prompt)\b/i,
  },
  {
    id: 'new-instructions',
    category: 'injection',
    description: 'announces replacement instructions for the model',
    scopes: ALL,
    pattern: /\b(new|updated|real|actual)\s+system\s+(prompt|instructions?)\s*[:：]/i,
  },
  {
    id: 'fake-role-marker',
    category: 'role-hijack',
    description: 'contains chat-template role markers that fake a system or assistant turn',
    scopes: ALL,
    pattern: /(<\|im_start\|>|<\|im_end\|>|<\|system\|>|\[INST\]|<<SYS>>|^\s*(system|assistant)\s*:\s*you\s+(are|must|will)\b)/im,
  },
  {
    id: 'role-hijack',
    category: 'role-hijack',
    description: 'tries to give the model a new identity that drops its rules',
    scopes: ALL,
    pattern:
      /\byou\s+are\s+(now|no\s+longer)\s+(a|an|in|the|my)?\s*(unrestricted|jailbroken|dan\b|developer\s+mode|evil|uncensored|free\s+from|without\s+(any\s+)?(rules|restrictions|limits))/i,
  },
  {
    id: 'hide-from-user',
    category: 'injection',
    description: 'asks the model to hide actions or content from the user',
    scopes: ALL,
    pattern: /\b(do\s+not|don'?t|never)\s+(tell|inform|reveal\s+to|show|mention\s+(this\s+)?to)\s+the\s+user\b/i,
  },
  {
    id: 'reveal-system-prompt',
    category: 'exfiltration',
    description: 'asks the model to disclose its system prompt or secrets',
    scopes: ALL,
    pattern: /\b(print|reveal|output|repeat|send|leak)\s+(your|the)\s+(full\s+|entire\s+)?(system\s+prompt|hidden\s+instructions|api\s+keys?|credentials)\b/i,
  },
  {
    id: 'exfil-send-conversation',
    category: 'exfiltration',
    description: 'asks the model to send the conversation, its prompt or secrets to an outside address',
    scopes: ALL,
    // Needs an address: "share the project context with the team" names no destination.
    pattern:
      /\b(send|post|upload|forward|exfiltrate|transmit)\b[^\n]{0,60}\b(conversation|chat\s+history|transcript|system\s+prompt|context\s+window|memory|secrets?|credentials|tokens?|api\s+keys?)\b[^\n]{0,60}\b(to|at)\s+(https?:\/\/|[\w.+-]+@[\w-]+\.[\w.]+|webhook)/i,
  },
  {
    id: 'exfil-curl-secret',
    category: 'exfiltration',
    description: 'sends environment secrets or credential files to a remote host with curl/wget',
    scopes: ALL,
    pattern:
      /\b(curl|wget|nc|ncat|http)\b[^\n]{0,200}(\$\{?[A-Z_]*(KEY|TOKEN|SECRET|PASSWORD|PASS|CREDENTIALS?)\b|\.env\b|\.netrc|id_rsa|id_ed25519|\.aws\/credentials|\/etc\/passwd)/i,
  },
  {
    id: 'exfil-env-pipe',
    category: 'exfiltration',
    description: 'pipes the environment or secret files into a network command',
    scopes: ALL,
    pattern: /\b(env|printenv|cat\s+[^\n|]*(\.env|\.netrc|id_rsa|credentials))\b[^\n]{0,80}\|\s*(curl|wget|nc|ncat|base64)\b/i,
  },
  {
    id: 'read-secret-file',
    category: 'secret-read',
    description: 'reads a credential file (.env, .netrc, SSH keys, cloud credentials)',
    scopes: STRICT,
    pattern:
      /\b(cat|less|more|head|tail|type|read|open|source|cp|scp)\s+[^\n]{0,40}(~\/|\$HOME\/|\/home\/[^/\s]+\/|\/root\/)?(\.env(\.[a-z]+)?\b|\.netrc\b|\.ssh\/|id_rsa|id_ed25519|\.aws\/credentials|\.config\/gcloud|\.kube\/config|\.npmrc|\.pypirc)/i,
  },
  {
    id: 'destructive-rm',
    category: 'destructive',
    description: 'deletes the file system root, home or the repository wholesale',
    scopes: ['skill'],
    pattern:
      /\brm\s+(-[a-z]*r[a-z]*f?[a-z]*|-[a-z]*f[a-z]*r[a-z]*|--recursive|--force)\s+(--no-preserve-root\s+)?(\/|~|\$HOME|\/\*|~\/\*|\.\/?\*?|\*)(\s|$|;|&)/i,
  },
  {
    id: 'destructive-disk',
    category: 'destructive',
    description: 'overwrites a disk or formats a file system',
    scopes: ['skill'],
    pattern: /\b(mkfs(\.[a-z0-9]+)?\s|dd\s+[^\n]*of=\/dev\/(sd|nvme|hd|disk)|:\(\)\s*\{\s*:\|:&\s*\};:|chmod\s+-R\s+777\s+\/(\s|$))/i,
  },
  {
    id: 'persistence-ssh-keys',
    category: 'persistence',
    description: 'writes to authorized_keys or shell start-up files to persist access',
    scopes: ['skill'],
    pattern: /(>>?\s*~?[^\n]*(authorized_keys|\.bashrc|\.zshrc|\.profile|\.bash_profile)\b|\bcrontab\s+-[a-z]*\s|\/etc\/cron\.|systemctl\s+enable\b)/i,
  },
  {
    id: 'obfuscated-exec',
    category: 'obfuscation',
    description: 'decodes and executes hidden content (base64/hex piped to a shell or eval)',
    scopes: ['skill'],
    pattern:
      /(base64\s+(-d|--decode)[^\n]{0,60}\|\s*(sh|bash|zsh|python3?|node|perl)\b|\beval\s*\(\s*(atob|Buffer\.from|base64)|\bcurl\b[^\n|]{0,200}\|\s*(sudo\s+)?(sh|bash|zsh)\b|\\x[0-9a-f]{2}(\\x[0-9a-f]{2}){15,})/i,
  },
];

// --- Memory (strict scope) additions, kept in their own block: memory sits in every future
// prompt, so secret uploads are refused even when phrased as a "fact". Each needs an upload,
// a pipe into a network command or an outside address, so a fact that merely names a path
// ("the SSH key is at ~/.ssh/id_ed25519") still passes.
const SECRET_PATHS = String.raw`(\/etc\/shadow|\.ssh\/|\.ssh\b|id_(rsa|ed25519|ecdsa|dsa)\b|\.netrc\b|\.git-credentials\b|\.docker\/config\.json|\.pgpass\b|\.kube\/config|\.aws\/credentials|\.env\b)`;
THREAT_PATTERNS.push(
  {
    id: 'exfil-upload-secret',
    category: 'exfiltration',
    description: 'uploads a credential file with curl/wget (-d @file, -F x=@file, -T, --post-file)',
    scopes: STRICT,
    pattern: new RegExp(
      String.raw`\b(curl|wget)\b[^\n]{0,200}(-d\s*@|--data(-binary|-urlencode|-raw)?[=\s]+@|-F\s*['"]?[\w.-]*=@|-T\s+|--upload-file[=\s]+|--post-file[=\s]+|--body-file[=\s]+)['"]?[^\s'"]*${SECRET_PATHS}`,
      'i',
    ),
  },
  {
    id: 'exfil-secret-pipe',
    category: 'exfiltration',
    description: 'pipes credential files or the process environment into a network command',
    scopes: STRICT,
    pattern: new RegExp(
      String.raw`(\b(tar|zip|cat|base64|gpg|xxd|gzip|Get-Content)\b[^\n|]{0,120}${SECRET_PATHS}|os\.environ|process\.env\b|Get-ChildItem\s+env:)[^\n]{0,120}\|\s*(curl|wget|nc|ncat|socat|ssh|Invoke-WebRequest|Invoke-RestMethod|iwr|irm)\b`,
      'i',
    ),
  },
  {
    id: 'exfil-send-secret-file',
    category: 'exfiltration',
    description: 'asks to send a credential file to an outside address',
    scopes: STRICT,
    pattern: new RegExp(
      String.raw`\b(send|upload|post|e-?mail|mail|forward|transmit|exfiltrate)\b[^\n]{0,60}${SECRET_PATHS}[^\n]{0,60}\b(to|at)\s+(https?:\/\/|[\w.+-]+@[\w-]+\.[\w.]+|webhook)`,
      'i',
    ),
  },
);

/** Zero-width and bidirectional-control characters that hide text from a human reviewer. */
const INVISIBLE = /[\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u00AD\u180E\u{E0000}-\u{E007F}]/u;

/** Joins emoji into one glyph (👩‍💻): legitimate between two pictographs, hidden text anywhere else. */
const EMOJI_ZWJ = /(?<=[\p{Extended_Pictographic}\u{1F3FB}-\u{1F3FF}]\uFE0F?)\u200D(?=\p{Extended_Pictographic})/gu;

/** The first invisible character that is not a leading BOM or an emoji joiner. */
function firstInvisible(text: string): { index: number; 0: string } | undefined {
  // A BOM at the very start is an encoding artefact, not a hidden instruction.
  const body = text.startsWith('\uFEFF') ? ' ' + text.slice(1) : text;
  const cleaned = body.replace(EMOJI_ZWJ, ' ');
  const m = INVISIBLE.exec(cleaned);
  return m ? { index: m.index, 0: m[0] } : undefined;
}

function excerpt(text: string, index: number, length: number): string {
  const start = Math.max(0, index - 20);
  return text
    .slice(start, Math.min(text.length, index + length + 20))
    .replace(/\s+/g, ' ')
    .trim();
}

/** Returns every named pattern of `scope` that `text` matches (empty when clean). */
export function scanText(text: string, scope: ThreatScope): ThreatHit[] {
  const hits: ThreatHit[] = [];
  const inv = firstInvisible(text);
  if (inv) {
    hits.push({
      id: 'invisible-unicode',
      category: 'invisible-unicode',
      description: `contains invisible Unicode character U+${inv[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`,
      excerpt: excerpt(text, inv.index, 1),
    });
  }
  const normalised = text.normalize('NFKC');
  for (const p of THREAT_PATTERNS) {
    if (!p.scopes.includes(scope)) continue;
    const m = p.pattern.exec(normalised);
    if (m) hits.push({ id: p.id, category: p.category, description: p.description, excerpt: excerpt(normalised, m.index, m[0].length) });
  }
  return hits;
}

/** The one-line notice that replaces blocked content in a prompt. */
export function blockedNotice(what: string, hits: ThreatHit[]): string {
  const ids = [...new Set(hits.map((h) => h.id))].join(', ');
  return `[BLOCKED: ${what} contained potential prompt injection (${ids}); its content was not loaded. Review and fix the file, then start a new session.]`;
}
