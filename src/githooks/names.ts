/** The git hooks hermesd installs. A module of its own so the CLI can name them without loading the installer. */
export const HERMESD_HOOKS = ['pre-commit', 'commit-msg', 'post-commit', 'post-merge', 'post-checkout', 'post-rewrite'] as const;
export type HookName = (typeof HERMESD_HOOKS)[number];
