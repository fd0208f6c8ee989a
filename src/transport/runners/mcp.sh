# hermesd MCP launcher (POSIX sh). `hermesd init --agents` writes this file after a header of
# baked settings (HERMESD_NODE, HERMESD_CLI: this install's node and CLI) to
# <git-common-dir>/hermesd/mcp, local to this clone. The committed stub `.hermes/mcp`, which
# the agents' MCP configs run, finds the work tree with builtins, sets hermesd_root, and
# sources this file. stdout is the MCP protocol: anything this file says goes to stderr.

hermesd_n=${HERMESD_NODE:-}
[ -x "$hermesd_n" ] || hermesd_n=$(command -v node 2>/dev/null)
if [ -n "$hermesd_n" ] && [ -f "${HERMESD_CLI:-}" ]; then
  exec "$hermesd_n" "$HERMESD_CLI" mcp --repo "${hermesd_root:-.}"
fi
if command -v hermesd >/dev/null 2>&1; then
  exec hermesd mcp --repo "${hermesd_root:-.}"
fi
printf '%s\n' "hermesd: cannot find hermesd (not at ${HERMESD_CLI:-?}, not on PATH), so the hermesd MCP server cannot start: install hermesd, then run \`hermesd init --agents\` again in this clone." >&2
exit 1
