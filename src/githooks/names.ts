/** The git hooks hermesd installs. A module of its own so the CLI can name them without loading the installer. */
export const HERMESD_HOOKS = ['pre-commit', 'commit-msg', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'] as const;
/** What the daemon answers: those, and the re-check at the end of a hook manager's pre-commit chain (lefthook's prepare-commit-msg). */
export const ANSWERED_HOOKS = [...HERMESD_HOOKS, 'pre-commit-final'] as const;
export type HookName = (typeof ANSWERED_HOOKS)[number];
