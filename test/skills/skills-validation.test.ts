import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SkillStore } from '../../src/skills/store.js';
import { skillMd, tempHome } from '../helpers/skills.js';
import { settled } from '../helpers/settled.js';

describe('skill validation messages', () => {
  let h: ReturnType<typeof tempHome>;
  let store: SkillStore;
  beforeAll(async () => {
    h = tempHome();
    store = new SkillStore({ home: h.home });
    expect((await settled(() => store.manage({ action: 'create', name: 'base', content: skillMd('base') }, { sessionId: 't' }))).success).toBe(true);
  });
  afterAll(() => h.cleanup());

  const cases: Array<[string, Record<string, unknown>, RegExp]> = [
    ['name pattern', { action: 'create', name: 'Bad Name', content: skillMd('Bad Name') }, /name "Bad Name" is not allowed: use lower-case letters/],
    ['name leading dot', { action: 'create', name: '.hidden', content: skillMd('.hidden') }, /not allowed/],
    ['name length', { action: 'create', name: 'a'.repeat(65), content: skillMd('a'.repeat(65)) }, /65 characters; the limit is 64/],
    ['category one segment', { action: 'create', name: 'x', category: 'a/b', content: skillMd('x') }, /category "a\/b" must be a single folder name/],
    ['category pattern', { action: 'create', name: 'x', category: 'Dev Ops', content: skillMd('x') }, /category "Dev Ops" is not allowed/],
    ['missing content', { action: 'create', name: 'x' }, /content is required/],
    ['no front matter', { action: 'create', name: 'x', content: '# just a body\n' }, /must start with YAML front matter/],
    ['unclosed front matter', { action: 'create', name: 'x', content: '---\nname: x\ndescription: d\nbody' }, /front matter is not closed/],
    ['invalid yaml', { action: 'create', name: 'x', content: '---\nname: [x\ndescription: d\n---\nbody\n' }, /front matter is not valid YAML/],
    ['not a mapping', { action: 'create', name: 'x', content: '---\n- a\n- b\n---\nbody\n' }, /must be a YAML mapping/],
    ['missing name', { action: 'create', name: 'x', content: '---\ndescription: d\n---\nbody\n' }, /needs a 'name'/],
    ['missing description', { action: 'create', name: 'x', content: '---\nname: x\n---\nbody\n' }, /needs a 'description'/],
    ['description length', { action: 'create', name: 'x', content: skillMd('x', 'd'.repeat(1025)) }, /description is 1025 characters; the limit is 1024/],
    ['empty body', { action: 'create', name: 'x', content: '---\nname: x\ndescription: d\n---\n\n' }, /has no body/],
    ['name mismatch', { action: 'create', name: 'x', content: skillMd('y') }, /name "y" does not match the skill name "x"/],
    ['SKILL.md size', { action: 'create', name: 'x', content: skillMd('x', 'd', 'b'.repeat(100_001)) }, /characters; the limit is 100000/],
    [
      'supporting dir',
      { action: 'write_file', name: 'base', file_path: 'notes.md', file_content: 'x' },
      /must be a file under references\/, templates\/, scripts\/, assets\//,
    ],
    ['dot-dot', { action: 'write_file', name: 'base', file_path: 'references/../../escape.md', file_content: 'x' }, /contains '\.\.'/],
    ['absolute', { action: 'write_file', name: 'base', file_path: '/etc/passwd', file_content: 'x' }, /is absolute/],
    [
      'supporting size',
      { action: 'write_file', name: 'base', file_path: 'assets/big.txt', file_content: 'x'.repeat(1024 * 1024 + 1) },
      /1048577 bytes; supporting files are limited to 1048576 bytes/,
    ],
    ['unknown action', { action: 'rename', name: 'base' }, /Invalid skill_manage arguments: action/],
    ['patch without old_string', { action: 'patch', name: 'base', new_string: 'x' }, /old_string is required/],
    ['exists', { action: 'create', name: 'base', content: skillMd('base') }, /already exists/],
    ['unknown skill', { action: 'edit', name: 'nope', content: skillMd('nope') }, /No user skill named "nope"/],
    [
      'patch breaking front matter',
      { action: 'patch', name: 'base', old_string: 'description: Use base when the task needs it.\n', new_string: '' },
      /would break SKILL.md.*needs a 'description'/,
    ],
  ];

  it.each(cases)('%s', async (_label, args, message) => {
    const before = await store.commitCount();
    const r = await settled(() => store.manage(args, { sessionId: 't' }));
    expect(r.success).toBe(false);
    expect(!r.success && r.error).toMatch(message);
    expect(await store.commitCount()).toBe(before);
  });
});
