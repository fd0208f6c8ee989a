import type { Bench } from './table.js';

export const bench: Bench = { name: 'daemon', run: async () => {} };
