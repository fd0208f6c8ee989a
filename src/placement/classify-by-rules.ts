/**
 * The rule-based classifier: what answers when no model endpoint is configured (or the model
 * failed). It walks the seed's four questions in their order — scope first, then lifetime,
 * then type, then read timing — with word patterns, and says which pattern decided:
 *
 *   1. one-off task state    a marker of the current task or moment ("for this task", "right now",
 *                            "this time", "I'm working on…"), or a request with no word of
 *                            generality ("fix the failing test") → nothing durable
 *   2. a procedure           an opener ("to X:", "how to", "steps", "workflow", "when X, …") and
 *                            two or more actions in sequence, or three actions, or a numbered
 *                            list → a skill
 *   3. the user, everywhere  an explicit cross-project marker ("in all my projects", "everywhere",
 *                            "for me"), a first-person preference ("I prefer", "call me", "my
 *                            timezone"), or how the agent should talk ("reply in", "be concise",
 *                            "no emojis") → USER.md
 *   4. a repository rule     normative words (never, always, must, don't, avoid, only, prefer)
 *                            or a convention (style, naming, commit messages) → the authority
 *                            file, or a config rule when it is enforceable (enforce.ts)
 *   5. a repository fact     a declarative sentence about the repository's environment (what it
 *                            uses, needs, runs on, where things live) → the repository's MEMORY.md
 *   6. anything else         → nothing durable (the seed: "remember" is not itself permission to
 *                            write long-term state)
 *
 * A bare code convention with no scope marker is taken as the repository's: a repository
 * rule wrongly put in USER.md leaks into every project (the seed's named cost), while one
 * wrongly put in the authority file is a reviewable patch the user can reject.
 */
import type { Reasons } from '../protocol/owners.js';

export type RuleOwner = 'authority' | 'user' | 'repo-memory' | 'skill' | 'none';
export type RuleClassification = { owner: RuleOwner; reasons: Reasons; rule: string };

/** Words a task request or task state is made of: the current task, this moment, this change. */
const ONE_OFF =
  /\b(for (this|the current|the) (task|change|pr|pull request|commit|session|ticket|issue|bug|fix|run|branch)|just for this|this time|for now|right now|today|tonight|at the moment|currently|temporarily|in this (pr|pull request|change|diff|commit|session|function|file)|on this branch|(not|don't|do not) \w+ yet|next step|so far|halfway|about to|the (failing|current|last|latest) (test|error|build|run|commit|output|failure)|(i'?m|i am|we'?re|we are) (now |still |currently )?\w+ing)\b/i;
/** Openers that ask for something now, whatever follows. */
const ASK = /^(please\s+)?(can you|could you|would you|will you|let'?s|try|tell me|show me|go ahead|continue|summari[sz]e)\b/i;
/**
 * A verb that starts an imperative. Followed by a determiner ("fix the failing test", "revert
 * this commit") it is a request about one thing; followed by a kind of thing ("write comments
 * as full sentences", "use mocks sparingly") it is a standing rule.
 */
const VERB_START =
  /^(please\s+)?(only\s+|always\s+|never\s+|just\s+)?(fix|add|rename|revert|update|implement|refactor|create|remove|delete|move|debug|look at|check|investigate|make|show|explain|find|write|change|run|use|ignore|skip|keep|stay|prefer|avoid|follow|put|name|document|log|commit|record|declare|wrap|test|type|import|export|return|throw|validate|call|place|store|read|build|lint|format|compile|ask|reply|respond|answer|speak|talk|treat|consider|catch|handle|pass|mark|tag|push|merge|rebase|review|give|include|list|leave|open|close|start|stop|split|limit|pin|bump)\b/i;
const DETERMINER = /^(the|this|that|these|those|a|an|it|them|my|our|your|his|her|its|their|\w+'s)\b/i;
/** Words that make an imperative a standing rule rather than a request. */
const GENERAL =
  /\b(always|never|every|any|all|whenever|each time|every time|must|should|shouldn'?t|don'?t|do not|avoid|unless|before \w+ing|after \w+ing|in this (repo|repository|project|codebase)|here|conventions?|by hand)\b/i;

const PROCEDURE_OPENER =
  /^(to\s+\w+|how to|steps?\b|the (procedure|process|workflow|recipe|way) (for|to)|(the )?(release|deploy|publish|setup|set-up|hotfix|review|upgrade|migration|rollback)\w*( process| workflow| procedure)?\s*[:—-]|(releasing|deploying|publishing|upgrading|updating|setting up|reviewing|bisecting|profiling|debugging|reproducing|rotating|regenerating)\b.*:|for a new \w+|when(ever)? (you )?\w+(ing)?\b.*,|workflow for|procedure for|process for|remember how to)/i;
/** Verbs a step of a procedure starts with. */
const ACTION =
  /^(first,?\s+|then,?\s+|next,?\s+|finally,?\s+|and\s+|and then\s+|after that,?\s+)*(run|update|add|create|bump|tag|push|commit|check|review|build|deploy|export|delete|start|stop|open|hit|enable|disable|download|load|read|mark|cherry-pick|branch|declare|document|leave|capture|rerun|redeploy|revoke|install|restart|fetch|merge|rebase|copy|generate|regenerate|change|fix|edit|make|write|set|apply|upgrade|publish|checkout|check out|clone|compile|test|verify|wait|record|remove|rename|move|call|use|pick|release|upload|sign|clean|reset|restore|seed|migrate|rebuild|lint|format|export|import|drop|kill|close|click|paste|replace|confirm|ensure|inspect|look|hit|send|notify|announce|re-run|bisect|revert|squash|cut)\b/i;

const USER_SCOPE =
  /\b(my (requests?|questions?|messages?|descriptions?|bug reports?)|in (all|every|any) (of )?my (projects?|repos?|repositories|code|work)|in any (project|repo|repository)|across (all )?(my )?(projects|repos|repositories)|every(where| project| repo(sitory)?)|all my (projects|repos|repositories|code)|my own projects|globally|(for|with|to) me\b|unless i ask|when i ask|if i ask|i read|i review)\b/i;
const FIRST_PERSON =
  /^((the )?user('s)? (prefers|likes|wants|is|uses|works|reads|speaks|dislikes|hates|needs|reviews|lives)|i am|i'm|i use|i prefer|i like|i love|i hate|i dislike|i want|i'd like|i'd rather|i would rather|i need|i work|i review|i read|i speak|i live|call me|my (name|timezone|time zone|editor|shell|os|preference|preferences|role|job|pronouns|language|native language|team|keyboard|laptop|machine|setup))\b/i;
const COMMUNICATION =
  /\b(answers?|respond|responses?|reply|replies|explain(ing)?|explanations?|be (concise|brief|direct|verbose|terse|short|thorough)|tone|emojis?|bullet points?|summar(y|ies|ize|ise)|jargon|preambles?|clarifying questions?|ask (me|before)|rephrase|sugar-?coat|talk|speak|in (english|german|french|spanish|japanese|chinese|portuguese|italian|dutch)|british english|american english|spelling)\b/i;

const REPO_SCOPE =
  /\b(this (repo|repository|project|codebase|package|monorepo|service|app)|in this (repo|repository|project|codebase)|here\b|our (repo|repository|project|codebase|ci|tests?|build))\b/i;
const NORMATIVE =
  /\b(never|always|must|mustn'?t|should|shouldn'?t|do not|don'?t|avoid|prefer|preferred|have to|has to|are not allowed|is not allowed|forbidden|make sure|ensure|keep|required|need to be|needs to be|instead of|rather than|no new)\b/i;
/** "always"/"never" before a third-person verb after a subject describe what happens ("the server always starts on 3000"), not a rule. */
const FREQUENCY = /\b\w+\s+(always|never)\s+\w+s\b/i;
/** Talk-style words about code artifacts are the repository's conventions, not how to talk to the user. */
const CODE_ARTIFACT =
  /\b(strings?|comments?|code|docstrings?|identifiers?|variables?|functions?|class(es)?|tests?|commit messages?|logs?|errors?|messages in)\b/i;
const CONVENTION =
  /\b(conventions?|style|naming|indent(ation|ed)?|tabs|spaces|format(ted|ting)?|commit messages?|docstrings?|follow(s)? (the )?[\w-]+ (convention|style|standard|format|guide))\b/i;

/** Words of a repository's environment: what a fact about it talks about. */
const ENVIRONMENT =
  /\b(repo|repository|project|codebase|monorepo|package|packages|tests?|test suite|suite|ci|build|server|database|db|port|docker|compose|container|redis|postgres|mysql|sqlite|branch|fixtures?|linter|lint|env|environment variables?|migrations?|api|docs|endpoint|staging|production|deploy|python|node|go|rust|java|version|pinned|workspaces?|dependencies|script|scripts|makefile|make|npm|pnpm|yarn|pytest|vitest|jest|cargo|gradle|maven|generated|generator|schema|cache|cluster|service|services|bucket|queue|cron|flaky|slow|takes|listens?|runs? on|lives? in|located|uses|requires?|needs?)\b/i;
const FACT_VERB =
  /\b(is|are|was|were|uses|use|runs|run on|listens|lives|live|takes|take|needs|need|requires|require|has|have|loads|load|lives in|sits|sit|exists|exist|contains|contain|points|point|depends|depend|only exist|is called|are called|are generated|is generated|are fetched|is reset|are copied|is pinned|defaults?|starts|binds|serves|stores|writes|reads|builds|deploys|pins|caches|expects|returns|fails|passes|times out)\b/i;

const PATHISH = /[\w-]+\/[\w./*-]*|`[^`]+`|\b[\w-]+\.(json|md|toml|ya?ml|ts|js|py|go|rs|lock|cfg|ini|sh)\b|:\d{2,5}\b|\bport \d+/i;

function stripLead(sentence: string): string {
  return sentence
    .trim()
    .replace(/^(please\s+)?(remember( that)?|note( that)?|fyi|for the record|keep in mind( that)?|just so you know)\s*[:,-]?\s*/i, '')
    .replace(/^please\s+(?=[a-z])/i, (m) => m)
    .trim();
}

function firstMatch(re: RegExp, text: string): string {
  return (re.exec(text)?.[0] ?? '').trim();
}

/** A short label before a colon ("Formatting:", "Async testing:", "docs/:") is a heading, not part of the sentence. */
function withoutLabel(text: string): string {
  const m = /^([^:]{1,30}):\s+(\S.*)$/.exec(text);
  return m && m[1]!.trim().split(/\s+/).length <= 3 && !/^(to|how|when|steps?)\b/i.test(m[1]!) ? m[2]! : text;
}

function normativeMarker(text: string): string {
  const limit = new RegExp(`\\bonly\\s+${VERB_START.source.slice(VERB_START.source.indexOf('(fix'))}`, 'i').exec(text);
  const m = firstMatch(NORMATIVE, text) || (limit ? limit[0] : '');
  if (!m) return '';
  // "The server always starts on port 3000": frequency, unless another normative word says more.
  if (/^(always|never)$/i.test(m) && FREQUENCY.test(text) && !new RegExp(`^${m}\\b`, 'i').test(text.trim())) {
    return firstMatch(new RegExp(NORMATIVE.source.replace('never|always|', ''), 'i'), text);
  }
  return m;
}

/** How an imperative sentence reads: a request about one thing now, a standing rule, or not an imperative. */
function imperativeKind(text: string): 'request' | 'rule' | undefined {
  if (ASK.test(text)) return 'request';
  const m = VERB_START.exec(text);
  if (!m) return undefined;
  if (GENERAL.test(text)) return 'rule';
  // "Only update the docs when asked": a limit on what may be done is a standing rule.
  if (m[2]) return 'rule';
  const rest = text.slice(m[0].length).trim();
  return DETERMINER.test(rest) || rest === '' ? 'request' : 'rule';
}

/** Actions in sequence: clauses (split on commas, "then", "and", ";", "→", numbers) that start with a verb. */
export function actionCount(text: string): number {
  const body = text.includes(':') ? text.slice(text.indexOf(':') + 1) : text;
  return body
    .split(/,|;|→|->|\bthen\b|\band then\b|\band\b|\s\d+[.)]\s|^\d+[.)]\s|\.\s+/i)
    .map((c) => c.trim().replace(/^\d+[.)]\s*/, ''))
    .filter((c) => ACTION.test(c)).length;
}

function numberedList(text: string): boolean {
  return /(^|\s)1[.)]\s.+\s2[.)]\s/.test(text);
}

const reasonsOf = {
  none: (marker: string): Reasons => ({
    scope: marker
      ? `only the current task ("${marker}")`
      : 'no one beyond the current task: the sentence names no repository rule, preference, fact or procedure',
    lifetime: 'until the task ends',
    type: 'one-off task state or a request',
    readTiming: 'never again as always-on material; the transcript keeps the words and session_search finds them later',
  }),
  skill: (opener: string, steps: number): Reasons => ({
    scope: 'whoever does this job again, in this or another repository',
    lifetime: 'until the procedure changes',
    type: `a method: ${steps} steps in sequence${opener ? ` ("${opener}")` : ''}`,
    readTiming: 'only when a matching task occurs (the skill index names it; skill_view loads it)',
  }),
  user: (marker: string): Reasons => ({
    scope: `this user, in every project ("${marker}")`,
    lifetime: 'durable: until the user changes their mind',
    type: 'a preference (a fact about the user)',
    readTiming: 'at the start of every session in every repository (USER.md, volatile tier)',
  }),
  authority: (marker: string, scopeMarker: string): Reasons => ({
    scope: scopeMarker
      ? `this repository ("${scopeMarker}"): every contributor and task here`
      : 'this repository (no cross-project marker): every contributor and task here',
    lifetime: 'as long as the repository keeps the rule',
    type: `a rule ("${marker}")`,
    readTiming: 'at the start of every session in this repository (the authority file, context tier)',
  }),
  repo: (verb: string, marker: string): Reasons => ({
    scope: `this repository's environment${marker ? ` ("${marker}")` : ''}`,
    lifetime: 'until it stops being true',
    type: `a fact (declarative: "${verb}")`,
    readTiming: "at the start of every session in this repository (the repository's MEMORY.md, volatile tier)",
  }),
};

export function classifyByRules(raw: string): RuleClassification {
  const text = stripLead(raw);
  const lower = text.toLowerCase();

  // 1. Lifetime first where the sentence itself says it ends with the task.
  const oneOff = firstMatch(ONE_OFF, text);
  if (oneOff && !USER_SCOPE.test(text)) return { owner: 'none', reasons: reasonsOf.none(oneOff), rule: 'one-off marker' };
  if (/\?\s*$/.test(text)) return { owner: 'none', reasons: reasonsOf.none('a question'), rule: 'question' };

  // 2. A method: an opener and actions in sequence.
  const steps = numberedList(text) ? Math.max(2, actionCount(text)) : actionCount(text);
  const opener = firstMatch(PROCEDURE_OPENER, text);
  if ((opener && steps >= 2) || steps >= 3 || numberedList(text)) {
    return { owner: 'skill', reasons: reasonsOf.skill(opener.replace(/[:,]\s*$/, ''), Math.max(steps, 2)), rule: 'procedure' };
  }

  const body = withoutLabel(text);
  const imperative = imperativeKind(body);
  // A request about one thing, with no word of scope, is the current task, whatever it asks.
  if (imperative === 'request' && !USER_SCOPE.test(body) && !(COMMUNICATION.test(body) && !CODE_ARTIFACT.test(body))) {
    return { owner: 'none', reasons: reasonsOf.none(firstMatch(ASK, body) || firstMatch(VERB_START, body)), rule: 'request' };
  }

  // 3. Scope: the user in every project.
  const repoScoped = REPO_SCOPE.test(body);
  const userMarker = firstMatch(USER_SCOPE, body) || firstMatch(FIRST_PERSON, body);
  if (userMarker && !repoScoped) return { owner: 'user', reasons: reasonsOf.user(userMarker), rule: 'user scope' };
  const talk = firstMatch(COMMUNICATION, body);
  if (talk && !repoScoped && !CONVENTION.test(body) && !CODE_ARTIFACT.test(body) && (normativeMarker(body) || imperative || /^no\b/i.test(body))) {
    return { owner: 'user', reasons: reasonsOf.user(talk), rule: 'how to talk to the user' };
  }

  // 4. A rule of this repository.
  const normative = normativeMarker(body) || firstMatch(CONVENTION, body);
  if (normative || imperative === 'rule' || /^no\b/i.test(body)) {
    return {
      owner: 'authority',
      reasons: reasonsOf.authority(normative || firstMatch(VERB_START, body) || 'no …', firstMatch(REPO_SCOPE, body)),
      rule: 'repository rule',
    };
  }

  // 5. A fact about the repository's environment.
  const verb = firstMatch(FACT_VERB, body);
  if ((verb && (ENVIRONMENT.test(lower) || PATHISH.test(body))) || repoScoped) {
    return {
      owner: 'repo-memory',
      reasons: reasonsOf.repo(verb || 'a statement about it', firstMatch(REPO_SCOPE, body) || firstMatch(PATHISH, body)),
      rule: 'environment fact',
    };
  }

  // 6. Nothing says it should outlive the task.
  return { owner: 'none', reasons: reasonsOf.none(''), rule: 'no durable signal' };
}
