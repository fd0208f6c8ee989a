/**
 * The text a placement proposes, written from the sentence without a model: a declarative
 * USER.md entry (the seed's MEMORY_GUIDANCE: "User prefers concise responses" ✓ — "Always
 * respond concisely" ✗), a repository fact as said, a rule line for the authority file, and
 * a SKILL.md for a procedure.
 */
import { SKILL_NAME_MAX_CHARS } from '../skills/validate.js';

/** "Remember that …", "Note: …", "please …" are how a sentence is handed over, not what it says. */
export function stripLead(sentence: string): string {
  return sentence
    .trim()
    .replace(/^(please\s+)?(remember( that| how to)?|note( that)?|fyi|for the record|keep in mind( that)?|just so you know)\s*[:,-]?\s*/i, (m) =>
      /how to/i.test(m) ? 'How to ' : '',
    )
    .trim();
}

function sentenceCase(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  if (!t) return t;
  const ended = /[.!?)`'"]$/.test(t) ? t : `${t}.`;
  return ended[0]!.toUpperCase() + ended.slice(1);
}

function lowerFirst(text: string): string {
  return /^[A-Z][a-z]/.test(text) ? text[0]!.toLowerCase() + text.slice(1) : text;
}

/** Second and first person turned to the third, for a fact about the user. */
function thirdPerson(text: string): string {
  return text
    .replace(/\bI'm\b/g, 'they are')
    .replace(/\bI am\b/g, 'they are')
    .replace(/\bI've\b/g, 'they have')
    .replace(/\bI'd\b/g, 'they would')
    .replace(/\bI\b/g, 'they')
    .replace(/\bmyself\b/gi, 'themselves')
    .replace(/\bmy\b/gi, 'their')
    .replace(/\bmine\b/gi, 'theirs')
    .replace(/\bme\b/gi, 'them')
    .replace(/\byour\b/gi, "the agent's")
    .replace(/\byou\b/gi, 'the agent');
}

const FIRST_PERSON_VERB = /^I\s+(prefer|like|love|hate|dislike|want|use|review|read|work|speak|live|need|write|run|always|never|usually)\b/i;

/** One declarative USER.md entry for a preference. */
export function userEntry(sentence: string): string {
  const text = stripLead(sentence).replace(/[.!]+$/, '');
  if (/^(the )?user\b/i.test(text)) return sentenceCase(text.replace(/^the user\b/i, 'User'));
  let m = /^call me\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User wants to be called ${m[1]}`);
  m = /^my\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User's ${thirdPerson(m[1]!)}`);
  m = /^(I'm|I am)\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User is ${thirdPerson(m[2]!)}`);
  m = /^I'd (like|rather)\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User would ${m[1]!.toLowerCase()} ${thirdPerson(m[2]!)}`);
  m = FIRST_PERSON_VERB.exec(text);
  if (m) {
    const verb = m[1]!.toLowerCase();
    const third = ['always', 'never', 'usually'].includes(verb) ? verb : verb.endsWith('s') ? verb : `${verb}s`;
    return sentenceCase(`User ${third} ${thirdPerson(text.slice(m[0].length).trim())}`);
  }
  m = /^(never|don't|do not|no need to)\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User does not want the agent to ${thirdPerson(m[2]!)}`);
  m = /^no\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User wants no ${thirdPerson(m[1]!)}`);
  m = /^always\s+(.+)$/i.exec(text);
  if (m) return sentenceCase(`User wants the agent to always ${thirdPerson(m[1]!)}`);
  // An imperative ("Reply in German", "Use bullet points …"): what the user wants the agent to do.
  return sentenceCase(`User wants the agent to ${thirdPerson(lowerFirst(text))}`);
}

/** A repository fact, as said (already declarative: the classifier placed it as a fact). */
export function repoEntry(sentence: string): string {
  return sentenceCase(stripLead(sentence));
}

/** The line the authority file gets: the rule as said, one bullet. */
export function ruleLine(sentence: string): string {
  return `- ${sentenceCase(stripLead(sentence))}`;
}

const STOP = new Set([
  'the',
  'a',
  'an',
  'this',
  'that',
  'our',
  'my',
  'your',
  'of',
  'for',
  'to',
  'in',
  'on',
  'with',
  'and',
  'how',
  'steps',
  'when',
  'whenever',
  'you',
  'it',
  'is',
  'are',
  'works',
  'like',
]);

/** A skill name from the sentence's opener ("To release: …" → "release"; "Deploying to staging: …" → "deploying-staging"). */
export function skillName(sentence: string): string {
  const text = stripLead(sentence);
  const head = (/^(.*?)[:,—]/.exec(text)?.[1] ?? text).replace(
    /^(to|how to|steps to|the procedure for|procedure for|workflow for|process for|for a new|for|when(ever)?( you)?)\s+/i,
    '',
  );
  const words = head
    .toLowerCase()
    .replace(/[^a-z0-9\s-]/g, ' ')
    .split(/\s+/)
    .filter((w) => w && !STOP.has(w))
    .slice(0, 4);
  const name = words.join('-').slice(0, SKILL_NAME_MAX_CHARS).replace(/-+$/, '');
  return /^[a-z0-9]/.test(name) ? name : `procedure-${words.length}`;
}

/** The steps of a procedure: a numbered list, or the clauses after its opener. */
export function stepsOf(sentence: string): string[] {
  const text = stripLead(sentence);
  const numbered = text
    .split(/\s(?=\d+[.)]\s)|^(?=\d+[.)]\s)/)
    .map((s) => s.replace(/^\d+[.)]\s*/, '').trim())
    .filter(Boolean);
  if (numbered.length >= 2) return numbered.map((s) => sentenceCase(s.replace(/[,;]$/, '')));
  const body = /^[^:]{1,80}:\s*(.+)$/.exec(text)?.[1] ?? text.replace(/^[^,]{1,80},\s*/, '');
  return body
    .split(/,\s*(?:and\s+)?(?:then\s+)?|;\s*|\s+then\s+|\s*→\s*|\s+and then\s+/i)
    .map((s) => s.replace(/^(and|then|first|finally)\s+/i, '').trim())
    .filter(Boolean)
    .map((s) => sentenceCase(s));
}

/** A SKILL.md for a procedure given in one sentence. */
export function skillDraft(sentence: string, name = skillName(sentence)): { name: string; description: string; content: string } {
  const text = sentenceCase(stripLead(sentence));
  // The index shows the description: the whole procedure in one line says when it applies and what it does.
  const description = text.replace(/\s+/g, ' ').slice(0, 200);
  const steps = stepsOf(sentence);
  const title = name.replace(/-/g, ' ').replace(/^./, (c) => c.toUpperCase());
  const body = [`# ${title}`, '', ...steps.map((s, i) => `${i + 1}. ${s}`), ''].join('\n');
  // A plain one-line description keeps the front matter in the form every reader parses the same way.
  const plain = description
    .replace(/:\s*/g, ' — ')
    .replace(/#/g, ' ')
    .replace(/\s+/g, ' ')
    .replace(/^[^A-Za-z0-9]+/, '')
    .trim();
  return { name, description: plain, content: `---\nname: ${name}\ndescription: ${plain}\n---\n\n${body}` };
}
