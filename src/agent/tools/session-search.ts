import { sessionSearchToolArgsSchema } from '../../sessions/search-tool.js';
import { defineTool } from './types.js';

export const sessionSearch = defineTool({
  name: 'session_search',
  description:
    'Search the record of earlier sessions in this repository (every user message, answer, tool call and ' +
    'result, stored as it happened). With `query`: full-text search, each hit with a window of the ' +
    'surrounding messages. With `session_id` and `around_message_id`: the messages around one message ' +
    "(`window` each side). With only `session_id`: that session's messages. With nothing: recent sessions. " +
    'Sessions people had come before hook and job records. Use it for evidence ("what ' +
    'failed last time?"), not for preferences (memory) or procedures (skills).',
  // The fields and bounds of POST /v1/sessions/tool; a limit or window past its maximum is clamped, not refused.
  parameters: sessionSearchToolArgsSchema,
  execute(args, ctx) {
    return ctx.services.sessionSearch(args, { repo: ctx.root, sessionId: ctx.sessionId });
  },
});
