/**
 * The CLI loads only the module of the command asked for (src/cli/commands/index.ts): its table
 * of commands per module must be what each module registers, or a command would be missing (or
 * answered by the wrong module) when asked for by name. And `hermesd --help` still lists them all.
 */
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { COMMAND_MODULES, modulesFor } from '../../src/cli/commands/index.js';
import { makeEnv } from '../helpers/env.js';

describe('the CLI command table', () => {
  it('names, per module, exactly the top-level commands the module registers', async () => {
    for (const m of COMMAND_MODULES) {
      const program = new Command('hermesd');
      (await m.load()).register(program);
      expect(
        program.commands.map((c) => c.name()),
        `src/cli/commands/index.ts says ${m.commands.join(', ')}, the module registers otherwise`,
      ).toEqual(m.commands);
    }
  });

  it('loads the asked command’s module alone; every module for help, no command, or a name it does not know', () => {
    expect(modulesFor(['status']).flatMap((m) => m.commands)).toEqual(['start', 'stop', 'restart', 'status', 'logs']);
    expect(modulesFor(['--json', 'proposals', 'list']).flatMap((m) => m.commands)).toEqual(['remember', 'proposals']);
    for (const args of [[], ['--help'], ['status', '--help'], ['statsu']]) expect(modulesFor(args), args.join(' ')).toBe(COMMAND_MODULES);
    expect(modulesFor(['--version'])).toEqual([]);
  });

  it('hermesd --help lists every command; a misspelt one gets a suggestion; --version answers', async () => {
    const t = makeEnv();
    try {
      const help = await t.cli(['--help']);
      expect(help.code).toBe(0);
      for (const name of COMMAND_MODULES.flatMap((m) => m.commands))
        expect(help.stdout, `--help does not list ${name}`).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
      const typo = await t.cli(['statsu']);
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('(Did you mean status?)');
      expect((await t.cli(['--version'])).stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    } finally {
      await t.cleanup();
    }
  });
});
