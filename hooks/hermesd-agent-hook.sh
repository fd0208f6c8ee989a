# hermesd agent hook runner (POSIX sh). `hermesd init --agents` writes this file after a
# header of baked settings (HERMESD_NODE, HERMESD_CLI, HERMESD_AGENT_TIMEOUT_MS,
# HERMESD_AGENT_ON_UNAVAILABLE) to <git-common-dir>/hermesd/agent-hook. Claude Code, Codex,
# Cursor and Gemini CLI run `.hermes/agent-hook <agent> <event> [small]` (a stub committed with their
# hook configs), which finds the work tree and git dir with builtins, sets hermesd_root and
# hermesd_gd, and sources this file. The agent's hook payload (JSON) is on stdin.
#
# Fast path: one curl over the daemon's Unix socket (recorded in <git-dir>/hermesd/daemon.json),
# the payload streamed from stdin, the answer read back with builtins: the exit code on the
# first line, then what to print. No daemon recorded or listening: the Node fallback
# (`hermesd agent-hook`), which starts one. A daemon that does not answer within
# HERMESD_AGENT_TIMEOUT_MS (hung, stopped): agents.onUnavailable decides for a tool call;
# every other event goes on without hermesd (the transcript is read at the next event).
# The exit codes are deliberate, 0 (go on) or 2 (refused): Gemini CLI refuses a tool call
# on any other non-zero exit with text, Claude Code and Codex on 2 only.

hermesd_agent=${1:-}
hermesd_event=${2:-}
# `small`: the agent's config sends this entry only tools with small payloads (a command, a
# path), read with the shell's own `read` (no process); the rest come with `cat`.
hermesd_small=
[ "${3:-}" = small ] && hermesd_small=1
[ "${HERMESD_SKIP:-}" = 1 ] && exit 0
hermesd_rt=$hermesd_gd/hermesd
# Settings the daemon refreshes from .hermes/config.yaml (agents.timeoutMs, agents.onUnavailable).
[ -f "$hermesd_rt/agent-settings" ] && . "$hermesd_rt/agent-settings"
case $hermesd_event in *[!A-Za-z-]*) hermesd_event= ;; esac

hermesd_pre=
case $hermesd_event in PreToolUse|preToolUse|beforeShellExecution|beforeReadFile|beforeMCPExecution|BeforeTool) hermesd_pre=1 ;; esac

# The daemon cannot judge this call. A tool call goes on or is refused by agents.onUnavailable;
# any other event goes on. The line says so (Gemini CLI shows it; Claude Code logs it).
hermesd_unavailable() {
  if [ -n "$hermesd_pre" ] && [ "${HERMESD_AGENT_ON_UNAVAILABLE:-allow}" = block ]; then
    printf 'hermesd: %s; this tool call is refused because agents.onUnavailable is "block". Check the daemon with: hermesd status (restart: hermesd restart)\n' "$1" >&2
    exit 2
  fi
  [ -n "$hermesd_pre" ] && printf 'hermesd: %s; this tool call was not checked (agents.onUnavailable is "allow")\n' "$1" >&2
  [ "$hermesd_agent" = cursor ] && printf '{}\n'
  exit 0
}

case $hermesd_agent in claude|codex|cursor|gemini) ;; *) hermesd_unavailable "unknown agent \"$hermesd_agent\" in the hook command" ;; esac

# The Node fallback: starts a daemon that is down, then asks it (stdin passed on).
hermesd_node() {
  hermesd_n=${HERMESD_NODE:-}
  [ -x "$hermesd_n" ] || hermesd_n=$(command -v node 2>/dev/null)
  # The payload, when the doorbell read it already.
  [ -n "$hermesd_bin" ] && exec < "$hermesd_bin"
  if [ -n "$hermesd_n" ] && [ -f "${HERMESD_CLI:-}" ]; then
    exec "$hermesd_n" "$HERMESD_CLI" agent-hook "$hermesd_agent" "$hermesd_event" --repo "${hermesd_root:-.}" "$@"
  elif command -v hermesd >/dev/null 2>&1; then
    exec hermesd agent-hook "$hermesd_agent" "$hermesd_event" --repo "${hermesd_root:-.}" "$@"
  fi
  hermesd_unavailable "cannot find hermesd (not at ${HERMESD_CLI:-?}, not on PATH); run hermesd init --agents again"
}

hermesd_ms=${HERMESD_AGENT_TIMEOUT_MS:-3000}
# A daemon that timed out a moment ago is given a short bound until it answers again: a hung
# daemon must not add the full bound to every tool call.
hermesd_stuck=$hermesd_rt/agent-unresponsive
[ -f "$hermesd_stuck" ] && [ "$hermesd_ms" -gt 500 ] && hermesd_ms=500
hermesd_frac=$((hermesd_ms % 1000))
[ "$hermesd_frac" -lt 100 ] && hermesd_frac=0$hermesd_frac
[ "$hermesd_frac" -lt 10 ] && hermesd_frac=0$hermesd_frac
hermesd_max=$((hermesd_ms / 1000)).$hermesd_frac

# What the daemon answered (the doorbell or curl), its code in $1: 0 go on (print the text), 2
# refused, u cannot judge. $2 prints the answer's text (with -1, its first line only).
hermesd_answered() {
  [ -f "$hermesd_stuck" ] && rm -f "$hermesd_stuck"
  case $1 in
    0)
      $2
      exit 0
      ;;
    2)
      $2 >&2
      exit 2
      ;;
    u) hermesd_unavailable "$($2 -1)" ;;
    *) hermesd_unavailable "the daemon's answer was not understood" ;;
  esac
}

# No answer within the bound: the next calls wait at most 500 ms until the daemon answers again.
hermesd_timed_out() {
  : > "$hermesd_stuck" 2>/dev/null
  hermesd_unavailable "the daemon did not answer within $hermesd_ms ms (hung or stopped)"
}

# The doorbell first (no client process; hooks/hermesd-bell.sh), then curl.
hermesd_bin=
if [ -n "$hermesd_event" ]; then
  hermesd_ring "$hermesd_agent" "$hermesd_event" "$hermesd_ms" "$hermesd_max"
  case $? in
    0) hermesd_answered "$hermesd_x" hermesd_bell_text ;;
    101) hermesd_timed_out ;;
  esac
fi

command -v curl >/dev/null 2>&1 || hermesd_node
hermesd_socket || hermesd_node

hermesd_nl='
'
hermesd_out=$(curl -sS --unix-socket "$hermesd_sock" --max-time "$hermesd_max" -H 'content-type: application/json' \
  --data-binary "@${hermesd_bin:--}" -w "${hermesd_nl}%{http_code}" "http://hermesd/v1/agents/$hermesd_agent/hook?format=sh&event=$hermesd_event" 2>/dev/null)
hermesd_rc=$?
case $hermesd_rc in
  0) ;;
  28) hermesd_timed_out ;;
  7)
    # A socket file with no daemon behind it (killed): the fallback starts one; this call's
    # payload went to curl, so it is judged by agents.onUnavailable.
    hermesd_node --unreachable refused </dev/null
    ;;
  *)
    # Connected, then the answer broke off (curl 52, 55, 56…): the daemon may have died
    # mid-answer. The fallback starts one if none is running; this call is judged by
    # agents.onUnavailable.
    hermesd_node --unreachable "broke-off:$hermesd_rc" </dev/null
    ;;
esac
hermesd_code=${hermesd_out##*"$hermesd_nl"}
hermesd_body=${hermesd_out%"$hermesd_nl"*}
[ "$hermesd_code" = 200 ] || hermesd_unavailable "the daemon answered HTTP $hermesd_code"
hermesd_x=${hermesd_body%%"$hermesd_nl"*}
hermesd_text=
case $hermesd_body in *"$hermesd_nl"*) hermesd_text=${hermesd_body#*"$hermesd_nl"} ;; esac
# The answer's text as curl brought it (with -1, its first line only).
hermesd_curl_text() {
  if [ "${1:-}" = -1 ]; then
    printf '%s\n' "${hermesd_text%%"$hermesd_nl"*}"
  elif [ -n "$hermesd_text" ]; then
    printf '%s\n' "$hermesd_text"
  fi
}
hermesd_text=${hermesd_text%"$hermesd_nl"}
hermesd_answered "$hermesd_x" hermesd_curl_text
