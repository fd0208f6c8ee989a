/**
 * hermesd's Codex permission profile as `.codex/config.toml` holds it: written by `init --agents
 * codex` (install.ts, in its two blocks: `default_permissions` first, the profile's tables after
 * the user's), and read back by the daemon, which runs a command as written only where Codex
 * runs this profile and the profile as written holds every path the confinement would make
 * read-only (guard/agent-shell.ts codexProfileCovers). Read as written, not as `init` would
 * write it now: that is what Codex enforces.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { CodexProfile } from '../guard/agent-shell.js';
import { tomlString } from './toml-edit.js';

/** The profile's line among the top-level keys. */
export const codexProfileDefault = (profile: CodexProfile): string => `default_permissions = ${tomlString(profile.name)}\n`;

/** The profile's tables: Codex's :workspace, and each path read-only in the work tree. */
export function codexProfileTables(profile: CodexProfile): string[] {
  return [
    `[permissions.${profile.name}]`,
    'extends = ":workspace"',
    '',
    `[permissions.${profile.name}.filesystem.":workspace_roots"]`,
    ...profile.paths.map((p) => `${tomlString(p)} = "read"`),
  ];
}

/** The hermesd profile a `.codex/config.toml` makes Codex's default, with the paths it lists read-only; undefined when it makes none. */
function writtenCodexProfile(text: string): CodexProfile | undefined {
  const name = /^default_permissions = "(hermesd-[0-9a-f]{12})"\r?$/m.exec(text)?.[1];
  if (!name) return undefined;
  const header = `[permissions.${name}.filesystem.":workspace_roots"]`;
  const at = text.indexOf(header);
  if (at < 0) return undefined;
  const paths: string[] = [];
  for (const line of text.slice(at + header.length).split(/\r?\n/)) {
    if (line.startsWith('[') || line.startsWith('#')) break;
    const m = /^("(?:[^"\\]|\\.)*") = "read"\s*$/.exec(line);
    if (m) paths.push(JSON.parse(m[1]!) as string);
  }
  return { name, paths };
}

/** The `.codex/config.toml` of the work tree at `root`. */
export const codexConfigFile = (root: string): string => join(root, '.codex', 'config.toml');

/** hermesd's profile as the work tree's `.codex/config.toml` holds it; undefined when it holds none, or cannot be read. */
export function readCodexProfile(root: string): CodexProfile | undefined {
  try {
    return writtenCodexProfile(readFileSync(codexConfigFile(root), 'utf8'));
  } catch {
    return undefined;
  }
}
