/**
 * The dependency rule of hermesd (docs/architecture.md), checked by `npm test`: the folders of
 * src/ in layers, lowest first. A module imports only from its own folder and from folders
 * below it: no folder imports one above it, so no two folders can import each other, and
 * there is no exemption for any file. Type-only imports count: a type that runs up the layers
 * ties the folders together as much as a call does. docs/architecture.md lists the same layers
 * (test/architecture/layers-are-the-documented-ones.test.ts compares the two).
 */
const LAYERS = [
  '(root)', // src/version.ts: this install's version and paths
  'errors',
  'text',
  'storage',
  'protocol',
  'git',
  'paths',
  'hook-client',
  'process',
  'config',
  'model',
  'security',
  'rules',
  'context',
  'memory',
  'sessions',
  'skills',
  'proposals',
  'placement',
  'guard',
  'githooks',
  'other-agents',
  'review',
  'watcher',
  'agent',
  'server',
  'client',
  'mcp',
  'cli',
];

/** A folder's path pattern (the root layer is the files directly in src/). */
const pathOf = (layer) => (layer === '(root)' ? '^src/[^/]+\\.ts$' : `^src/${layer}/`);

const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer}`,
  comment: `${layer} sits below ${LAYERS.slice(i + 1).join(', ')}: it imports none of them (docs/architecture.md).`,
  severity: 'error',
  from: { path: pathOf(layer) },
  to: {
    path: LAYERS.slice(i + 1)
      .map(pathOf)
      .join('|'),
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment: 'A cycle makes two modules one: neither can be read, tested or moved alone.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    {
      name: 'clients-not-server',
      comment:
        'The daemon and its clients sit side by side at the top: the CLI and the MCP bridge talk to the daemon over its socket (src/client) and start it by path (DAEMON_ENTRY), never import it.',
      severity: 'error',
      from: { path: '^src/(client|cli|mcp)/' },
      to: { path: '^src/server/' },
    },
    {
      name: 'processes-through-runners',
      comment:
        'git runs through src/git (its raw runner, and simple-git in src/git/simple.ts), shell commands and the daemon process through src/process. The other programs hermesd starts are named here: ' +
        'bubblewrap probes (guard/sandbox), hook managers (githooks/install), the C compiler (hook-client/build), the hook client and curl (cli doctor), the hook runner (cli hook).',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot: '^src/(git|process)/|^src/guard/sandbox\\.ts$|^src/githooks/install\\.ts$|^src/hook-client/build\\.ts$|^src/cli/commands/(doctor|hook)\\.ts$',
      },
      to: { path: '^(node:)?child_process$' },
    },
    {
      name: 'simple-git-in-src-git',
      comment:
        'simple-git starts git processes, so like every git run it is set up in src/git (src/git/simple.ts: the environment, which GIT_* variables it keeps).',
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

// For the test that compares them with docs/architecture.md; not part of the configuration depcruise reads.
Object.defineProperty(module.exports, 'LAYERS', { value: LAYERS, enumerable: false });
