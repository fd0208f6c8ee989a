/**
 * The dependency rule of hermesd (docs/architecture.md), checked by `npm test`:
 * no import cycles; the plain subsystems never import the layers built on them (the server,
 * the clients, the CLI, the agent); clients never import the server. Type-only imports count:
 * a type that runs up the layers ties the folders together as much as a call does.
 */
const PLAIN = '^src/(config|context|errors|git|githooks|guard|integrations|memory|paths|placement|process|proposals|protocol|review|rules|security|sessions|skills|storage|text|transport/(protocol|runners|build)\\.ts|watcher|version\\.ts)';

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'plain-stays-plain',
      comment: 'Stores and policy code know nothing of the daemon, HTTP, the CLI or the agent: the server composes them (src/server/services).',
      severity: 'error',
      from: { path: PLAIN },
      to: { path: '^src/((server|client|cli|mcp|agent)/|transport/server\\.ts)' },
    },
    {
      name: 'agent-below-server',
      comment: 'The agent loop and its tools are composed by the server and run standalone in tests; they never reach back up.',
      severity: 'error',
      from: { path: '^src/agent/' },
      to: { path: '^src/((server|client|cli|mcp)/|transport/server\\.ts)' },
    },
    {
      name: 'clients-not-server',
      comment: 'The CLI and the MCP bridge talk to the daemon over its socket (src/client); they spawn the daemon by path (DAEMON_ENTRY), never import it.',
      severity: 'error',
      from: { path: '^src/(client|cli|mcp)/' },
      to: { path: '^src/(server/|transport/server\\.ts)' },
    },
    {
      name: 'processes-through-runners',
      comment:
        'git runs through src/git (its raw runner, and simple-git in src/git/simple.ts), shell commands and the daemon process through src/process. The other programs hermesd starts are named here: ' +
        'bubblewrap probes (guard/sandbox), hook managers (githooks/install), the C compiler (transport/build), the hook client and curl (cli doctor), the hook runner (cli hook).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/(git|process)/|^src/guard/sandbox\\.ts$|^src/githooks/install\\.ts$|^src/transport/build\\.ts$|^src/cli/commands/(doctor|hook)\\.ts$' },
      to: { path: '^(node:)?child_process$' },
    },
    {
      name: 'simple-git-in-src-git',
      comment: 'simple-git starts git processes, so like every git run it is set up in src/git (src/git/simple.ts: the environment, which GIT_* variables it keeps).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/git/simple\\.ts$' },
      to: { path: 'node_modules/simple-git/' },
    },
    {
      name: 'simple-git-off-the-hot-paths',
      comment:
        'simple-git (a task queue and a promise chain per git command) is for where its API fits and latency does not matter: the skills repository and doctor. ' +
        'The hooks, the guard, the watcher and the rule engine run git through the raw runner (src/git/run.ts); docs/architecture.md says why.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/git/|^src/skills/git\\.ts$|^src/cli/commands/doctor\\.ts$' },
      to: { path: '^src/git/simple\\.ts$' },
    },
    {
      name: 'no-test-code-in-src',
      comment: 'Shipped code never imports tests or benchmarks.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
