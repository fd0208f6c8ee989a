/** Configuration: one schema, user and repository files, environment overrides. */
export * from './schema.js';
export { loadConfig, loadConfigWithOrigins, mergeLayers, redacted, repoConfigPath, userConfigPath, ENV_OVERRIDES } from './load.js';
export type { ConfigFile, ConfigIssue, ConfigScope, LoadedConfig, LoadOptions, Origin } from './load.js';
