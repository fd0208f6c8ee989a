# hermesd MCP launcher (POSIX sh). `hermesd init --agents` writes this file after a header of
# baked settings (HERMESD_NODE, HERMESD_CLI: this install's node and CLI) to
# <git-common-dir>/hermesd/mcp, local to this clone. The committed stub `.hermes/mcp`, which
# the agents' MCP configs run, finds the work tree with builtins, sets hermesd_root, and
# sources this file. stdout is the MCP protocol: anything this file says goes to stderr.
# The server's own bundle (dist/mcp/main.cjs, beside the CLI's dist/cli) starts faster than
# `hermesd mcp` through the CLI: every agent waits for it before its first model request.

# NODE_EXTRA_CA_CERTS makes every Node start read certificates, and the server
# makes no TLS connection: it is set aside, and put back for the daemon the server may start.
if [ -n "${NODE_EXTRA_CA_CERTS:-}" ]; then
  HERMESD_NODE_EXTRA_CA_CERTS=$NODE_EXTRA_CA_CERTS
  export HERMESD_NODE_EXTRA_CA_CERTS
  unset NODE_EXTRA_CA_CERTS
fi
hermesd_n=${HERMESD_NODE:-}
[ -x "$hermesd_n" ] || hermesd_n=$(command -v node 2>/dev/null)
if [ -n "$hermesd_n" ] && [ -f "${HERMESD_CLI:-}" ]; then
  # dist/cli/main.js (the CLI's bundle) or dist/src/cli/main.js (an install before it): the server is dist/mcp/main.cjs.
  hermesd_m=${HERMESD_CLI%/cli/main.js}
  hermesd_m=${hermesd_m%/src}/mcp/main.cjs
  # The git dir and common dir the stub found with builtins: the server needs no `git rev-parse` on its clients' path.
  [ -f "$hermesd_m" ] && exec "$hermesd_n" "$hermesd_m" --repo "${hermesd_root:-.}" ${hermesd_gd:+--git-dir "$hermesd_gd"} ${hermesd_cd:+--common-dir "$hermesd_cd"}
  exec "$hermesd_n" "$HERMESD_CLI" mcp --repo "${hermesd_root:-.}"
fi
if command -v hermesd >/dev/null 2>&1; then
  exec hermesd mcp --repo "${hermesd_root:-.}"
fi
printf '%s\n' "hermesd: cannot find hermesd (not at ${HERMESD_CLI:-?}, not on PATH), so the hermesd MCP server cannot start: install hermesd, then run \`hermesd init --agents\` again in this clone." >&2
exit 1
