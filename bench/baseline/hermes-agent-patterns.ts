/**
 * The reference implementation's threat patterns, as DATA, for comparison in
 * `npm run bench -- detectors` only (not used by hermesd). Copied from Hermes Agent
 * (https://github.com/NousResearch/hermes-agent, MIT licence below):
 * - CONTEXT: agent/prompt_builder.py `_CONTEXT_THREAT_PATTERNS` (context files);
 * - MEMORY: tools/memory_tool.py `_MEMORY_THREAT_PATTERNS` (memory writes);
 * - SKILL: tools/skills_guard.py `THREAT_PATTERNS` (commit 00067189), the text patterns of
 *   severity critical or high (a community skill with either is not installed), minus the
 *   ones about code (subprocess, sudo, network) that have no counterpart in hermesd's scan.
 * Python `re` syntax used here is valid JavaScript; all are matched case-insensitively.
 *
 * MIT License — Copyright (c) 2025 Nous Research; Copyright (c) 2026 Kenneth C. Walker Jr.
 * Permission is hereby granted, free of charge, to any person obtaining a copy of this
 * software and associated documentation files (the "Software"), to deal in the Software
 * without restriction, including without limitation the rights to use, copy, modify, merge,
 * publish, distribute, sublicense, and/or sell copies of the Software, and to permit persons
 * to whom the Software is furnished to do so, subject to the following conditions: The above
 * copyright notice and this permission notice shall be included in all copies or substantial
 * portions of the Software. THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND,
 * EXPRESS OR IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS
 * FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
 * HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 * CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR
 * THE USE OR OTHER DEALINGS IN THE SOFTWARE.
 */
export type ReferencePattern = [source: string, id: string];

export const REFERENCE_INVISIBLE = /[\u200b\u200c\u200d\u2060\ufeff\u202a\u202b\u202c\u202d\u202e]/;

export const CONTEXT: ReferencePattern[] = [
  [String.raw`ignore\s+(previous|all|above|prior)\s+instructions`, 'prompt_injection'],
  [String.raw`do\s+not\s+tell\s+the\s+user`, 'deception_hide'],
  [String.raw`system\s+prompt\s+override`, 'sys_prompt_override'],
  [String.raw`disregard\s+(your|all|any)\s+(instructions|rules|guidelines)`, 'disregard_rules'],
  [String.raw`act\s+as\s+(if|though)\s+you\s+(have\s+no|don't\s+have)\s+(restrictions|limits|rules)`, 'bypass_restrictions'],
  [String.raw`<!--[^>]*(?:ignore|override|system|secret|hidden)[^>]*-->`, 'html_comment_injection'],
  [String.raw`<\s*div\s+style\s*=\s*["'][\s\S]*?display\s*:\s*none`, 'hidden_div'],
  [String.raw`translate\s+.*\s+into\s+.*\s+and\s+(execute|run|eval)`, 'translate_execute'],
  [String.raw`curl\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)`, 'exfil_curl'],
  [String.raw`cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass)`, 'read_secrets'],
];

export const MEMORY: ReferencePattern[] = [
  [String.raw`ignore\s+(previous|all|above|prior)\s+instructions`, 'prompt_injection'],
  [String.raw`you\s+are\s+now\s+`, 'role_hijack'],
  [String.raw`do\s+not\s+tell\s+the\s+user`, 'deception_hide'],
  [String.raw`system\s+prompt\s+override`, 'sys_prompt_override'],
  [String.raw`disregard\s+(your|all|any)\s+(instructions|rules|guidelines)`, 'disregard_rules'],
  [String.raw`act\s+as\s+(if|though)\s+you\s+(have\s+no|don't\s+have)\s+(restrictions|limits|rules)`, 'bypass_restrictions'],
  [String.raw`curl\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)`, 'exfil_curl'],
  [String.raw`wget\s+[^\n]*\$\{?\w*(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL|API)`, 'exfil_wget'],
  [String.raw`cat\s+[^\n]*(\.env|credentials|\.netrc|\.pgpass|\.npmrc|\.pypirc)`, 'read_secrets'],
  [String.raw`authorized_keys`, 'ssh_backdoor'],
  [String.raw`\$HOME/\.ssh|\~/\.ssh`, 'ssh_access'],
  [String.raw`\$HOME/\.hermes/\.env|\~/\.hermes/\.env`, 'hermes_env'],
];

export const SKILL: ReferencePattern[] = [
  [String.raw`ignore\s+(?:\w+\s+)*(previous|all|above|prior)\s+instructions`, 'prompt_injection_ignore'],
  [String.raw`you\s+are\s+(?:\w+\s+)*now\s+`, 'role_hijack'],
  [String.raw`do\s+not\s+(?:\w+\s+)*tell\s+(?:\w+\s+)*the\s+user(?!.*\b(?:unless|except|until|confirm|diagnose|verify|check)\b)`, 'deception_hide'],
  [String.raw`system\s+(?:\w+\s+)*prompt\s+(?:\w+\s+)*override`, 'sys_prompt_override'],
  [String.raw`pretend\s+(?:\w+\s+)*(you\s+are|to\s+be)\s+`, 'role_pretend'],
  [String.raw`disregard\s+(?:\w+\s+)*(your|all|any)\s+(?:\w+\s+)*(instructions|rules|guidelines)`, 'disregard_rules'],
  [String.raw`output\s+(?:\w+\s+)*(system|initial)\s+prompt`, 'leak_system_prompt'],
  [String.raw`(when|if)\s+no\s*one\s+is\s+(watching|looking)`, 'conditional_deception'],
  [String.raw`act\s+as\s+(if|though)\s+(?:\w+\s+)*you\s+(?:\w+\s+)*(have\s+no|don't\s+have)\s+(?:\w+\s+)*(restrictions|limits|rules)`, 'bypass_restrictions'],
  [String.raw`translate\s+.*\s+into\s+.*\s+and\s+(execute|run|eval)`, 'translate_execute'],
  [String.raw`<!--[^>]*(?:ignore|override|system|secret|hidden)[^>]*-->`, 'html_comment_injection'],
  [String.raw`<\s*div\s+style\s*=\s*["'][\s\S]*?display\s*:\s*none`, 'hidden_div'],
  [String.raw`rm\s+-rf\s+/(?!tmp(?:\b|/)|var/tmp(?:\b|/)|dev/shm(?:\b|/)|run(?:\b|/))`, 'destructive_root_rm'],
  [String.raw`rm\s+(-[^\s]*)?r.*\$HOME|\brmdir\s+.*\$HOME`, 'destructive_home_rm'],
  [String.raw`>\s*/etc/`, 'system_overwrite'],
  [String.raw`\bmkfs\b`, 'format_filesystem'],
  [String.raw`\bdd\s+.*if=.*of=/dev/`, 'disk_overwrite'],
  [String.raw`authorized_keys`, 'ssh_backdoor'],
  [String.raw`/etc/sudoers|visudo`, 'sudoers_mod'],
  [String.raw`\bDAN\s+mode\b|Do\s+Anything\s+Now`, 'jailbreak_dan'],
  [String.raw`\bdeveloper\s+mode\b.*\benabled?\b`, 'jailbreak_dev_mode'],
  [String.raw`hypothetical\s+scenario.*(?:ignore|bypass|override)`, 'hypothetical_bypass'],
  [String.raw`(respond|answer|reply)\s+without\s+(?:\w+\s+)*(restrictions|limitations|filters|safety)`, 'remove_filters'],
  [String.raw`you\s+have\s+been\s+(?:\w+\s+)*(updated|upgraded|patched)\s+to`, 'fake_update'],
  [String.raw`(send|post|upload|transmit)\s+.*\s+(to|at)\s+https?://`, 'send_to_url'],
  [String.raw`base64\s+(-d|--decode)\s*\|`, 'base64_decode_pipe'],
  [String.raw`curl\s+[^\n]*\|\s*(ba)?sh`, 'curl_pipe_shell'],
  [String.raw`echo\s+[^\n]*\|\s*(bash|sh|python|perl|ruby|node)`, 'echo_pipe_exec'],
];

const compiled = new Map<ReferencePattern[], RegExp[]>();
/** Ids of the reference's patterns of `set` that `text` matches (invisible characters first). */
export function referenceHits(set: ReferencePattern[], text: string): string[] {
  let res = compiled.get(set);
  if (!res) compiled.set(set, (res = set.map(([s]) => new RegExp(s, 'i'))));
  const hits = REFERENCE_INVISIBLE.test(text) ? ['invisible_unicode'] : [];
  res.forEach((re, i) => {
    if (re.test(text)) hits.push(set[i]![1]);
  });
  return hits;
}
