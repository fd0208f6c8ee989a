/**
 * The SessionDB schema, as an ordered list of migrations. `PRAGMA user_version` records how
 * many have been applied; a database is migrated inside one `BEGIN IMMEDIATE` transaction,
 * so two daemons opening a fresh file at once cannot both apply the same step. A new
 * database runs every migration in order, so an old step stays exactly as it shipped.
 *
 * The README (Sessions › Schema) shows the resulting schema for people who open state.db with sqlite3 or
 * Datasette; keep the two in step.
 */

/**
 * Tool-call arguments as plain text, for the search index: the `arguments` strings of an
 * OpenAI-style `tool_calls` array joined by spaces. v1 computed it in the view and triggers;
 * since v2 SessionDB stores it in `messages.tool_args` (toolArgsText in db.ts computes the
 * same) and this is only the backfill of rows written before v2. No v1 row has a bare string
 * among its calls (json_extract throws "malformed JSON" on one, so v1's trigger refused it).
 */
const TOOL_ARGS_SQL = (col: string) =>
  `(SELECT group_concat(coalesce(json_extract(value, '$.function.arguments'), json_extract(value, '$.arguments'), ''), ' ') FROM json_each(CASE WHEN json_valid(${col}) THEN ${col} ELSE '[]' END))`;

const TOOL_CALL_COUNT_SQL = (col: string) => `(CASE WHEN json_valid(${col}) AND json_type(${col}) = 'array' THEN json_array_length(${col}) ELSE 0 END)`;

/** v1, as shipped: its view over json_each broke the FTS5 'rebuild' and 'integrity-check' commands. */
export const V1 = `
CREATE TABLE prompts (
  sha256      TEXT PRIMARY KEY,
  text        TEXT NOT NULL,
  created_at  TEXT NOT NULL
);

CREATE TABLE sessions (
  id                    TEXT PRIMARY KEY,
  repo                  TEXT,
  source                TEXT NOT NULL,
  model                 TEXT,
  system_prompt_sha256  TEXT REFERENCES prompts(sha256),
  parent_session_id     TEXT REFERENCES sessions(id),
  title                 TEXT,
  started_at            TEXT NOT NULL,
  ended_at              TEXT,
  end_reason            TEXT,
  message_count         INTEGER NOT NULL DEFAULT 0,
  tool_call_count       INTEGER NOT NULL DEFAULT 0,
  input_tokens          INTEGER NOT NULL DEFAULT 0,
  output_tokens         INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_repo_started ON sessions(repo, started_at);
CREATE INDEX sessions_by_started ON sessions(started_at);
CREATE INDEX sessions_by_parent ON sessions(parent_session_id);

CREATE TABLE messages (
  id            INTEGER PRIMARY KEY,
  session_id    TEXT NOT NULL REFERENCES sessions(id),
  role          TEXT NOT NULL,
  content       TEXT NOT NULL DEFAULT '',
  api_content   TEXT,
  tool_calls    TEXT,
  tool_name     TEXT,
  tool_call_id  TEXT,
  created_at    TEXT NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_id, id);

-- What the search indexes see of a message. Both FTS tables are external-content tables over
-- this view: the text is stored once (in messages), the indexes hold only tokens.
CREATE VIEW messages_search AS
  SELECT id, content, tool_name, ${TOOL_ARGS_SQL('tool_calls')} AS tool_args FROM messages;

CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, tool_name, tool_args,
  content = 'messages_search', content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2'
);
-- detail=none: rowids only, which LIKE '%substring%' needs (the row is re-checked against the
-- text), at a third of the write cost of positional trigram lists.
CREATE VIRTUAL TABLE messages_trigram USING fts5(
  content,
  content = 'messages_search', content_rowid = 'id',
  tokenize = 'trigram', detail = none
);
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, 'row');

CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content, tool_name, tool_args)
    VALUES (new.id, new.content, new.tool_name, ${TOOL_ARGS_SQL('new.tool_calls')});
  INSERT INTO messages_trigram(rowid, content) VALUES (new.id, new.content);
  UPDATE sessions SET message_count = message_count + 1,
                      tool_call_count = tool_call_count + ${TOOL_CALL_COUNT_SQL('new.tool_calls')}
    WHERE id = new.session_id;
END;

CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_args)
    VALUES ('delete', old.id, old.content, old.tool_name, ${TOOL_ARGS_SQL('old.tool_calls')});
  INSERT INTO messages_trigram(messages_trigram, rowid, content) VALUES ('delete', old.id, old.content);
  UPDATE sessions SET message_count = message_count - 1,
                      tool_call_count = tool_call_count - ${TOOL_CALL_COUNT_SQL('old.tool_calls')}
    WHERE id = old.session_id;
END;

CREATE TRIGGER messages_au AFTER UPDATE OF content, tool_name, tool_calls ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_args)
    VALUES ('delete', old.id, old.content, old.tool_name, ${TOOL_ARGS_SQL('old.tool_calls')});
  INSERT INTO messages_trigram(messages_trigram, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content, tool_name, tool_args)
    VALUES (new.id, new.content, new.tool_name, ${TOOL_ARGS_SQL('new.tool_calls')});
  INSERT INTO messages_trigram(rowid, content) VALUES (new.id, new.content);
END;
`;

/**
 * v2: the searchable tool-call text becomes a real column, `messages.tool_args`, and both FTS
 * tables read from `messages` itself. FTS5 reads an external content table as
 * `main.<table>`, and inside v1's view that qualifier reached the json_each table-valued
 * function ("no such table: main.json_each"), so `INSERT INTO messages_fts(messages_fts)
 * VALUES ('rebuild')` and FTS5's 'integrity-check' failed. A plain table has no such problem.
 *
 * SQLite cannot change a virtual table's content option, so v1's triggers, indexes and view
 * are dropped; the column is added and backfilled (json_each in an UPDATE is fine), and the
 * indexes are recreated and rebuilt from the table, all in the migration's one transaction.
 */
export const V2 = `
DROP TRIGGER messages_ai;
DROP TRIGGER messages_ad;
DROP TRIGGER messages_au;
DROP TABLE messages_vocab;
DROP TABLE messages_fts;
DROP TABLE messages_trigram;
DROP VIEW messages_search;

ALTER TABLE messages ADD COLUMN tool_args TEXT;
UPDATE messages SET tool_args = ${TOOL_ARGS_SQL('tool_calls')} WHERE tool_calls IS NOT NULL;

CREATE VIRTUAL TABLE messages_fts USING fts5(
  content, tool_name, tool_args,
  content = 'messages', content_rowid = 'id',
  tokenize = 'unicode61 remove_diacritics 2'
);
-- detail=none: rowids only, which LIKE '%substring%' needs (the row is re-checked against the
-- text), at a third of the write cost of positional trigram lists.
CREATE VIRTUAL TABLE messages_trigram USING fts5(
  content,
  content = 'messages', content_rowid = 'id',
  tokenize = 'trigram', detail = none
);
CREATE VIRTUAL TABLE messages_vocab USING fts5vocab(messages_fts, 'row');

CREATE TRIGGER messages_ai AFTER INSERT ON messages BEGIN
  INSERT INTO messages_fts(rowid, content, tool_name, tool_args) VALUES (new.id, new.content, new.tool_name, new.tool_args);
  INSERT INTO messages_trigram(rowid, content) VALUES (new.id, new.content);
  UPDATE sessions SET message_count = message_count + 1,
                      tool_call_count = tool_call_count + ${TOOL_CALL_COUNT_SQL('new.tool_calls')}
    WHERE id = new.session_id;
END;

CREATE TRIGGER messages_ad AFTER DELETE ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_args) VALUES ('delete', old.id, old.content, old.tool_name, old.tool_args);
  INSERT INTO messages_trigram(messages_trigram, rowid, content) VALUES ('delete', old.id, old.content);
  UPDATE sessions SET message_count = message_count - 1,
                      tool_call_count = tool_call_count - ${TOOL_CALL_COUNT_SQL('old.tool_calls')}
    WHERE id = old.session_id;
END;

-- hermesd never updates a message; this keeps a hand edit of content, tool_name or tool_args
-- indexed (tool_args is not recomputed from a hand-edited tool_calls).
CREATE TRIGGER messages_au AFTER UPDATE OF content, tool_name, tool_args ON messages BEGIN
  INSERT INTO messages_fts(messages_fts, rowid, content, tool_name, tool_args) VALUES ('delete', old.id, old.content, old.tool_name, old.tool_args);
  INSERT INTO messages_trigram(messages_trigram, rowid, content) VALUES ('delete', old.id, old.content);
  INSERT INTO messages_fts(rowid, content, tool_name, tool_args) VALUES (new.id, new.content, new.tool_name, new.tool_args);
  INSERT INTO messages_trigram(rowid, content) VALUES (new.id, new.content);
END;

INSERT INTO messages_fts(messages_fts) VALUES ('rebuild');
INSERT INTO messages_trigram(messages_trigram) VALUES ('rebuild');
`;

/**
 * Tool calls as searchable text since v3: per call its function name, a space, its
 * `arguments` (either left out when empty), calls joined by spaces. Must agree with
 * toolArgsText in db.ts, which computes it for new rows.
 */
const TOOL_TEXT_SQL = (col: string) => {
  const name = `coalesce(json_extract(value, '$.function.name'), json_extract(value, '$.name'), '')`;
  const args = `coalesce(json_extract(value, '$.function.arguments'), json_extract(value, '$.arguments'), '')`;
  return `(SELECT group_concat(CASE WHEN ${name} = '' THEN ${args} WHEN ${args} = '' THEN ${name} ELSE ${name} || ' ' || ${args} END, ' ')
    FROM json_each(CASE WHEN json_valid(${col}) THEN ${col} ELSE '[]' END))`;
};

/**
 * v3: tool-call function names become searchable. `tool_args` is recomputed with each call's
 * name before its arguments; the v2 update trigger re-indexes each changed row, so only rows
 * with tool calls are touched.
 */
export const V3 = `
UPDATE messages SET tool_args = ${TOOL_TEXT_SQL('tool_calls')} WHERE tool_calls IS NOT NULL;
`;

/**
 * v4: other agents' transcripts (src/other-agents/ingest.ts). `agent_transcripts` remembers, per
 * transcript file, the session its messages went to and how far the file was read;
 * `agent_transcript_keys` holds the key of every record stored, so a re-read file or a
 * re-appended record adds nothing twice. Both are written in the transaction that stores
 * the messages.
 */
export const V4 = `
CREATE TABLE agent_transcripts (
  path              TEXT PRIMARY KEY,
  agent             TEXT NOT NULL,
  session_id        TEXT NOT NULL REFERENCES sessions(id),
  agent_session_id  TEXT,
  repo              TEXT,
  offset            INTEGER NOT NULL DEFAULT 0,
  head              TEXT,
  size              INTEGER NOT NULL DEFAULT 0,
  mtime_ms          INTEGER NOT NULL DEFAULT 0,
  lines             INTEGER NOT NULL DEFAULT 0,
  stored            INTEGER NOT NULL DEFAULT 0,
  skipped           INTEGER NOT NULL DEFAULT 0,
  updated_at        TEXT NOT NULL
);
CREATE INDEX agent_transcripts_by_repo ON agent_transcripts(repo, updated_at);

CREATE TABLE agent_transcript_keys (
  session_id  TEXT NOT NULL,
  key         TEXT NOT NULL,
  PRIMARY KEY (session_id, key)
) WITHOUT ROWID;
`;

/** Migration i (0-based) takes the database from user_version i to i + 1. */
export const MIGRATIONS: readonly string[] = [V1, V2, V3, V4];

export const SCHEMA_VERSION = MIGRATIONS.length;
