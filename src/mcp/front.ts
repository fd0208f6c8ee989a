/**
 * `hermesd mcp`'s front: the process's stdio, its lifetime, and the answers that need no MCP
 * SDK. Every client (Claude Code, Codex, Gemini CLI) waits for `initialize` and `tools/list`
 * before its first model request, Claude Code for `resources/list` too, and loading the SDK and
 * zod costs a few hundred milliseconds; the answers to `initialize`, `tools/list`, `ping` and
 * `resources/templates/list` are the SDK server's own, recorded at build time
 * (`dist/mcp/answers.json`, answers.ts), and `resources/list` is answered as the SDK server
 * answers it: from the list this repository's last session was given (kept in the daemon's
 * runtime folder, which hermesd's sandbox hides) at once, then from the daemon (line.ts) off the
 * client's path, with `notifications/resources/list_changed` when the two differ; from the
 * daemon alone the first time. The first other message loads the SDK server (server.ts) and is
 * handed to it, after the client's `initialize` is replayed into it so it holds the same state;
 * both share one line to the daemon, reached on the first call.
 *
 * The process ends as soon as its client is gone: stdin closed, stdout or stderr broken (EPIPE),
 * SIGINT, SIGTERM or SIGHUP, or the client process replaced by another parent. Nothing is
 * logged to a broken stderr, so an error while logging can never raise another.
 */
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { repoPaths, resolvePaths, type RepoPaths } from '../paths/index.js';
import { writeRuntimeFileSync } from '../storage/atomic.js';
import { PACKAGE_ROOT, VERSION } from '../version.js';
import { MCP_MESSAGE_MAX_BYTES, MessageLimit } from './stdio.js';
import { ANSWERS_FILE, answerOf, type StaticAnswers } from './answers.js';
import type { DaemonLine } from './line.js';
import type { McpStage } from './sdk-server.js';

/** JSON-RPC "invalid request": the code of the answer to a message over MCP_MESSAGE_MAX_BYTES. */
const INVALID_REQUEST = -32600;
/** JSON-RPC "internal error". */
const INTERNAL_ERROR = -32603;
/** How often the client's pid is compared with ours' parent: a client killed with stdin still held open elsewhere. */
const PARENT_POLL_MS = 500;
/** The id the client's `initialize` is replayed into the SDK server with; its answer is not sent (the client had it). */
const REPLAY_ID = 'hermesd-replayed-initialize';
/** More uncaught errors than this in a second is a loop: the process ends rather than spin. */
const MAX_UNCAUGHT_PER_SECOND = 20;

type Message = { jsonrpc?: unknown; id?: string | number; method?: unknown; params?: unknown };

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

/** The file in the runtime folder that keeps the last `resources/list` answer. */
const KEPT_LIST = 'mcp-resources.json';

type KeptList = { version: string; cwd: string; list: unknown };

/**
 * The last `resources/list` answered in this repository, from the same directory by this
 * version; its JSON text too, to compare with the daemon's. Undefined when there is none, or
 * anyone but this user could write the folder (the kept list is trusted only where the daemon's
 * own files are).
 */
function readKeptList(file: string, cwd: string): { list: unknown; text: string } | undefined {
  try {
    const dir = statSync(dirname(file));
    if (dir.uid !== process.getuid?.() || (dir.mode & 0o022) !== 0) return undefined;
    const kept = JSON.parse(readFileSync(file, 'utf8')) as KeptList;
    if (kept.version !== VERSION || kept.cwd !== resolve(cwd) || !isRecord(kept.list)) return undefined;
    return { list: kept.list, text: JSON.stringify(kept.list) };
  } catch {
    return undefined;
  }
}

/** Keeps `list` for the next session (nothing when the runtime folder is not there: no daemon has run). */
function keepList(file: string, cwd: string, list: unknown): void {
  try {
    if (!statSync(dirname(file)).isDirectory()) return;
    writeRuntimeFileSync(file, JSON.stringify({ version: VERSION, cwd: resolve(cwd), list } satisfies KeptList));
  } catch {
    // a cache: the next session asks the daemon
  }
}

/** The answers recorded at build time, when they are this version's. */
function recordedAnswers(): StaticAnswers | undefined {
  try {
    const answers = JSON.parse(readFileSync(join(PACKAGE_ROOT, ANSWERS_FILE), 'utf8')) as StaticAnswers;
    return answers.version === VERSION ? answers : undefined;
  } catch {
    return undefined;
  }
}

/** An `initialize` whose answer the SDK would give from its recorded answers: its params are of the documented shape. */
function plainInitialize(m: Message): m is Message & { id: string | number; params: { protocolVersion: string; clientInfo: { name: string } } } {
  const p = m.params;
  if (m.id === undefined || !isRecord(p) || typeof p.protocolVersion !== 'string' || !isRecord(p.capabilities) || !isRecord(p.clientInfo)) return false;
  return typeof p.clientInfo.name === 'string' && typeof p.clientInfo.version === 'string';
}

/**
 * The launcher (src/hook-client/runners/mcp.sh) sets NODE_EXTRA_CA_CERTS aside for this process, which
 * makes no TLS connection (reading the certificates slows every Node start); a daemon it
 * starts reaches the model endpoint and gets it back.
 */
const SET_ASIDE_CA_CERTS = 'HERMESD_NODE_EXTRA_CA_CERTS';

/**
 * How long after answering initialize the front waits before it connects to a running daemon:
 * clients send initialized, tools/list and resources/list at once after the answer, and those
 * are answered without the daemon.
 */
const WARM_AFTER_MS = 25;

/**
 * The repository as the launcher found it (the work tree, its git dir and common dir, from the
 * committed stub's place): no git process. Undefined, and git asked instead, when any of them is
 * not a directory.
 */
function knownPaths(opts: { repo?: string; gitDirs?: { gitDir: string; commonDir: string } }): RepoPaths | undefined {
  if (!opts.repo || !opts.gitDirs) return undefined;
  try {
    const [root, gitDir, commonDir] = [opts.repo, opts.gitDirs.gitDir, opts.gitDirs.commonDir].map((p) => realpathSync(resolve(p)));
    if (![root, gitDir, commonDir].every((p) => statSync(p!).isDirectory())) return undefined;
    return repoPaths({ root: root!, gitDir: gitDir!, commonDir: commonDir! });
  } catch {
    return undefined;
  }
}

/** Runs the MCP server on this process's stdin and stdout until the client is gone; never returns. */
export function runMcpFront(opts: { repo?: string; gitDirs?: { gitDir: string; commonDir: string } } = {}): Promise<never> {
  const ca = process.env[SET_ASIDE_CA_CERTS];
  if (ca !== undefined) {
    process.env.NODE_EXTRA_CA_CERTS ??= ca;
    delete process.env[SET_ASIDE_CA_CERTS];
  }
  let stderrOpen = true;
  let closing = false;
  let stage: McpStage | undefined;
  let loading: Promise<McpStage> | undefined;
  /** Messages waiting for the SDK server while it loads, in order. */
  const queued: unknown[] = [];
  let initialize: Message | undefined;
  let initialized = false;
  let clientName: string | undefined;
  const answers = recordedAnswers();
  let paths: RepoPaths | undefined;
  let line: Promise<DaemonLine> | undefined;
  let opened: DaemonLine | undefined;
  /** The line to the daemon, opened once (line.ts): the front's resources/list and the SDK server share it. */
  const daemonLine = (): Promise<DaemonLine> =>
    (line ??= import('./line.js').then(
      ({ openLine }) => (opened = openLine({ paths: served(), start: resolve(opts.repo ?? process.cwd()), write, log, clientName: () => clientName })),
    ));
  /** The repository served, found once (as the launcher found it, else by git); a directory outside any work tree ends the server with the reason. */
  const served = (): RepoPaths => {
    try {
      paths ??= knownPaths(opts) ?? resolvePaths(resolve(opts.repo ?? process.cwd()));
      return paths;
    } catch (err) {
      log((err as Error)?.message ?? String(err));
      shutdown('no repository to serve', 1);
      throw err;
    }
  };

  /** Where the last resources/list of this repository is kept: the daemon's private runtime folder (undefined outside a work tree). */
  const keptListFile = (): string | undefined => {
    try {
      return join(served().runtimeDir, KEPT_LIST);
    } catch {
      return undefined;
    }
  };

  const log = (message: string): void => {
    if (!stderrOpen) return;
    try {
      process.stderr.write(`hermesd mcp: ${message}\n`);
    } catch {
      stderrOpen = false;
      shutdown('stderr closed');
    }
  };

  function shutdown(why: string, code = 0): void {
    if (closing) return;
    closing = true;
    log(`closing (${why})`);
    try {
      opened?.link.close();
    } finally {
      process.exit(code);
    }
  }

  /**
   * A client's signal ends the process as it would end a process that had not listened for it:
   * the signal raised again once the line is logged, with no listener left. process.exit's
   * teardown (the platform's threads joined) would double the time to the end, and a client
   * gives a server little: Claude Code sends SIGTERM 100 ms after its SIGINT and logs that the
   * SIGINT failed. The kernel closes the line to the daemon.
   */
  function endBy(signal: NodeJS.Signals): void {
    if (closing) return;
    closing = true;
    log(`closing (${signal})`);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  }

  const write = (message: unknown): void => {
    if (closing) return;
    if (isRecord(message) && message.id === REPLAY_ID) return;
    try {
      process.stdout.write(JSON.stringify(message) + '\n');
    } catch {
      shutdown('stdout closed');
    }
  };

  const loadStage = (): Promise<McpStage> => {
    loading ??= Promise.all([import('./sdk-server.js'), daemonLine()]).then(([{ startMcpStage }, l]) => {
      const s = startMcpStage({ line: l, root: served().root, write, log });
      if (initialize) s.deliver({ ...initialize, id: REPLAY_ID });
      if (initialized) s.deliver({ jsonrpc: '2.0', method: 'notifications/initialized' });
      return s;
    });
    return loading;
  };

  const toStage = (message: unknown): void => {
    queued.push(message);
    if (queued.length > 1) return;
    void loadStage()
      .then((s) => {
        stage = s;
        while (queued.length) s.deliver(queued.shift());
      })
      .catch((err: unknown) => {
        log((err as Error)?.message ?? String(err));
        shutdown('the server could not start', 1);
      });
  };

  const onMessage = (text: string): void => {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (err) {
      log(`protocol: a line that is not JSON (${(err as Error).message})`);
      return;
    }
    // Once the SDK server runs (or loads), it sees every message, in order.
    if (stage || loading || !answers || !isRecord(message)) return stage ? stage.deliver(message) : toStage(message);
    const m = message as Message;
    const reply = (result: unknown) => write({ jsonrpc: '2.0', id: m.id, result });
    if (m.method === 'initialize' && !initialize && plainInitialize(m)) {
      initialize = m;
      clientName = m.params.clientInfo.name;
      reply(answerOf(answers, m.params.protocolVersion));
      // Said now rather than at the first call: a server outside any work tree ends here.
      setImmediate(() => {
        try {
          served();
        } catch {
          return; // said and ended
        }
        // A daemon that runs is connected to (none is started) once the client's first questions
        // are answered: loading the line to it would hold up the lists that follow initialize,
        // and a resources/list opens it anyway, after its answer.
        setTimeout(() => {
          void daemonLine().then(
            (l) => l.link.warm(),
            () => undefined,
          );
        }, WARM_AFTER_MS);
      });
      return;
    }
    if (m.method === 'notifications/initialized' && initialize) {
      initialized = true;
      const info = isRecord(initialize.params) && isRecord(initialize.params.clientInfo) ? initialize.params.clientInfo : {};
      log(`${String(info.name ?? 'a client')} ${String(info.version ?? '')} connected`.replace(/\s+/g, ' ').trim());
      return;
    }
    if (
      m.id !== undefined &&
      (m.method === 'tools/list' || m.method === 'resources/templates/list') &&
      !(isRecord(m.params) && m.params.cursor !== undefined)
    ) {
      return reply(m.method === 'tools/list' ? answers.tools : answers.templates);
    }
    if (m.id !== undefined && m.method === 'ping') return reply({});
    if (m.id !== undefined && m.method === 'resources/list' && !(isRecord(m.params) && m.params.cursor !== undefined)) {
      // The SDK server's answer without the SDK (answers may pass each other: JSON-RPC matches them by id).
      const keptFile = keptListFile();
      const kept = keptFile ? readKeptList(keptFile, opts.repo ?? process.cwd()) : undefined;
      // The list as this repository's last session was told it: answered at once, then asked of the
      // daemon off the client's path, and list_changed sent when it differs.
      if (kept) reply(kept.list);
      void daemonLine()
        .then(async (l) => (await import('./line.js')).listResources(l, log))
        .then(
          (live) => {
            if (keptFile) keepList(keptFile, opts.repo ?? process.cwd(), live);
            if (!kept) reply(live);
            else if (JSON.stringify(live) !== kept.text) write({ jsonrpc: '2.0', method: 'notifications/resources/list_changed' });
          },
          (err: unknown) => {
            if (!kept) write({ jsonrpc: '2.0', id: m.id, error: { code: INTERNAL_ERROR, message: `hermesd mcp: ${(err as Error)?.message ?? String(err)}` } });
            else log(`could not refresh the resource list: ${(err as Error)?.message ?? String(err)}`);
          },
        );
      return;
    }
    toStage(message);
  };

  // A message over the bound is dropped and answered here; the session goes on.
  const input = new MessageLimit((o) => {
    log(`dropped a message of ${o.bytes} bytes (limit ${MCP_MESSAGE_MAX_BYTES})`);
    if (o.id !== undefined)
      write({
        jsonrpc: '2.0',
        id: o.id,
        error: { code: INVALID_REQUEST, message: `The request is ${o.bytes} bytes; hermesd mcp reads messages up to ${MCP_MESSAGE_MAX_BYTES} bytes.` },
      });
  });
  input.on('data', (chunk: Buffer) => onMessage(chunk.toString('utf8')));

  let uncaught = 0;
  let uncaughtSince = Date.now();
  process.on('uncaughtException', (err) => {
    const code = (err as NodeJS.ErrnoException)?.code;
    if (code === 'EPIPE' || code === 'ERR_STREAM_DESTROYED') return shutdown('the client is gone');
    if (Date.now() - uncaughtSince > 1000) {
      uncaught = 0;
      uncaughtSince = Date.now();
    }
    if (++uncaught > MAX_UNCAUGHT_PER_SECOND) return shutdown('errors in a loop', 1);
    log(`uncaught: ${err?.stack ?? String(err)}`);
  });
  process.on('unhandledRejection', (err) => log(`unhandled rejection: ${(err as Error)?.stack ?? String(err)}`));
  process.stdout.on('error', () => shutdown('stdout closed'));
  process.stderr.on('error', () => {
    stderrOpen = false;
    shutdown('stderr closed');
  });
  process.stdin.on('end', () => shutdown('stdin ended'));
  process.stdin.on('close', () => shutdown('stdin closed'));
  process.stdin.on('error', () => shutdown('stdin closed'));
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, () => endBy(sig));
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) shutdown('the client is gone');
  }, PARENT_POLL_MS).unref();
  process.stdin.pipe(input);
  return new Promise<never>(() => undefined);
}
