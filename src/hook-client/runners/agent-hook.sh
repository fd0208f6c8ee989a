# hermesd agent hook runner (POSIX sh). `hermesd init --agents` writes this file to
# <git-common-dir>/hermesd/agent-hook after a header of baked settings (src/hook-client/runners.ts)
# and curl.sh. Claude Code, Codex, Cursor and Gemini CLI run `.hermes/agent-hook <agent> <event>`
# (a stub committed with their hook configs), which finds the work tree and git dir with
# builtins, sets hermesd_root and hermesd_gd, and sources this file. The agent's hook payload
# (JSON) is on stdin; hermesd's client sends it to the daemon as it is and prints the answer.
#
# The client owns the bound (agents.timeoutMs), starts a daemon that is down, and decides
# what a fault means: a tool call is refused unless agents.onUnavailable is "allow" and no
# daemon could be started; any other event goes on. Exit codes are 0 (go on) or 2 (refused):
# Gemini CLI refuses a tool call on any other non-zero exit with text, Claude Code and Codex on 2.

hermesd_agent=${1:-}
hermesd_event=${2:-}
[ "${HERMESD_SKIP:-}" = 1 ] && exit 0
hermesd_rt=$hermesd_gd/hermesd
# What the daemon writes from .hermes/config.yaml (agents.timeoutMs, agents.onUnavailable).
[ -f "$hermesd_rt/settings" ] && . "$hermesd_rt/settings"
case $hermesd_event in *[!A-Za-z-]* | '') hermesd_event=unknown ;; esac
if ! hermesd_is_agent "$hermesd_agent"; then
  echo "hermesd: unknown agent \"$hermesd_agent\" in the hook command; run hermesd init --agents again" >&2
  exit 2
fi
hermesd_x=
hermesd_is_pre_tool "$hermesd_event" && hermesd_x=-x

if [ -x "$HERMESD_CLIENT" ]; then
  exec "$HERMESD_CLIENT" -r "$hermesd_rt" -w "$hermesd_root" -t "${HERMESD_AGENT_TIMEOUT_MS:-3000}" -u "${HERMESD_AGENT_ON_UNAVAILABLE:-block}" -c 2 $hermesd_x \
    -n "$HERMESD_NODE" -d "$HERMESD_DAEMON" $HERMESD_START "$hermesd_agent" "$hermesd_event"
fi
hermesd_curl "$hermesd_agent" "$hermesd_event" "${HERMESD_AGENT_TIMEOUT_MS:-3000}" "${HERMESD_AGENT_ON_UNAVAILABLE:-block}" 2 "$hermesd_x" ''
