/** Built-in memory: two bounded files (MEMORY.md, USER.md) and their prompt snapshot. */
export * from './store.js';
export { ENTRY_SEPARATOR, parseEntries, serializeEntries, roundTrips, usageOf } from './entries.js';
export { renderBlock, sanitizeEntries, blockedEntryNotice, usageHeader, FILE_OF } from './snapshot.js';
