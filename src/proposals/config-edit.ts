/**
 * A rule added to `.hermes/config.yaml` without disturbing the rest of the file: the YAML
 * document is edited in place (comments, order and the user's other keys kept) and the
 * result must still pass the config schema.
 */
import { isMap, isSeq, parseDocument } from 'yaml';
import { ConfigError } from '../errors/index.js';
import { configSchema } from '../config/schema.js';

export type NewRule = { id: string; message: string; protect?: string[]; forbid?: string };

/** The file text with `rule` appended to `rules:` (created when missing); throws ConfigError when the result would not load. */
export function withRule(text: string | undefined, rule: NewRule): string {
  const plain = {
    id: rule.id,
    message: rule.message,
    ...(rule.protect ? { protect: rule.protect } : {}),
    ...(rule.forbid !== undefined ? { forbid: rule.forbid } : {}),
  };
  let out: string;
  if (text === undefined || text.trim() === '') {
    const doc = parseDocument('{}');
    doc.contents = doc.createNode({ rules: [plain] }) as never;
    out = doc.toString();
  } else {
    const doc = parseDocument(text);
    if (doc.errors.length > 0) throw new ConfigError(`.hermes/config.yaml does not parse (${doc.errors[0]!.message}); fix it before adding a rule.`);
    if (!isMap(doc.contents)) throw new ConfigError('.hermes/config.yaml is not a mapping of keys; fix it before adding a rule.');
    const rules = doc.get('rules', true);
    if (rules === undefined || rules === null) doc.set('rules', doc.createNode([plain]));
    else if (isSeq(rules)) rules.add(doc.createNode(plain));
    else throw new ConfigError('`rules` in .hermes/config.yaml is not a list; fix it before adding a rule.');
    out = doc.toString();
  }
  const parsed = configSchema().safeParse(parseDocument(out).toJS() ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`The rule would not load in .hermes/config.yaml (${issue.path.join('.')}: ${issue.message}).`);
  }
  return out;
}

/** Rule ids already in the file, so a new rule gets one of its own. */
export function ruleIdsIn(text: string | undefined): string[] {
  if (!text) return [];
  const js = parseDocument(text).toJS() as { rules?: Array<{ id?: unknown }> } | null;
  return (js?.rules ?? []).flatMap((r) => (typeof r?.id === 'string' ? [r.id] : []));
}
