# hermesd's client in sh and curl, for a machine where client.c could not be built (`hermesd
# status` and `doctor` say so). The same protocol (src/protocol/ask.ts) and the same
# meaning of every fault as client.c, slower: a curl per question, and a daemon that is down
# is waited for by polling. Sourced by both runners before their body, after the agents' table
# (hermesd_deny, hermesd_silent: generated from src/protocol/agent-hooks.ts).
#
# hermesd_curl <kind> <name> <bound ms> <allow|block> <refusal code> <-x or ''> <phase> [git hook args...]
# (an agent's payload, and post-rewrite's lines, on stdin). Exits with the answer's code: run it
# in a subshell where the runner goes on after it.

hermesd_cfault() {
  # $1: 1 when no daemon could be started (the one fault allow|block decides); $2: what happened.
  if [ -z "$hermesd_cx" ]; then
    echo "hermesd: $2; the $hermesd_cn hook did nothing this time. Check the daemon: hermesd status" >&2
    exit 0
  fi
  if [ "$1" = 1 ] && [ "$hermesd_ck" = git ] && [ "$hermesd_cn" = pre-commit ] && [ -z "$hermesd_csb" ]; then
    # No daemon could start: the commit is judged here first (the rules; the checks not run), as client.c does.
    echo "hermesd: $2; judging this commit here, without the daemon (the rules; the repository's checks are not run)..." >&2
    "$HERMESD_NODE" "$HERMESD_CLI" check --staged --no-daemon </dev/null >&2
    case $? in
      0) exit 0 ;;
      1) echo "hermesd: the pre-commit hook refused this commit (judged without the daemon). To commit without hermesd: HERMESD_SKIP=1 git commit ..." >&2; exit "$hermesd_crc" ;;
    esac
  fi
  if [ "$1" = 1 ] && [ "$hermesd_cu" = allow ] && [ -z "$hermesd_csb" ]; then
    echo "hermesd: $2; this goes ahead UNCHECKED because onUnavailable is \"allow\". Check the daemon: hermesd status" >&2
    hermesd_silent "$hermesd_ck"
    exit 0
  fi
  hermesd_said="hermesd: $2; refused (a fault never lets it through; hermesd's client is not built here, hooks use curl: see hermesd doctor). Check the daemon: hermesd status (restart: hermesd restart)"
  if [ "$hermesd_ck" = git ]; then
    echo "$hermesd_said" >&2
    exit "$hermesd_crc"
  fi
  # An agent's structured refusal on stdout, exit 0: the same bytes as client.c's and the daemon's (hermesd_deny: agent-hooks.ts).
  hermesd_cjson "$hermesd_said"
  hermesd_deny "$hermesd_ck" "$hermesd_cn" "$hermesd_e"
  exit 0
}

# $1 as a JSON string, in hermesd_e.
hermesd_cjson() {
  hermesd_e= hermesd_r=$1
  case $hermesd_r in *[[:cntrl:]]*) hermesd_cfault 0 "an argument holds a control character that curl cannot carry" ;; esac
  while :; do
    case $hermesd_r in
      *[\\\"]*)
        hermesd_h=${hermesd_r%%[\\\"]*}
        hermesd_c=${hermesd_r#"$hermesd_h"}
        hermesd_e=$hermesd_e$hermesd_h\\${hermesd_c%"${hermesd_c#?}"}
        hermesd_r=${hermesd_c#?}
        ;;
      *) hermesd_e=\"$hermesd_e$hermesd_r\"; return ;;
    esac
  done
}

# Whether every listener at $1 is the daemon that holds this work tree's lock (daemon.lock, in the runtime
# folder no sandboxed command can write): that process has each listening socket bound at that path open
# (/proc/net/unix, /proc/<pid>/fd). /proc/net/unix names a socket by the path it was bound at, unlinked since
# or not: a second listener at the path (one bound after the daemon's was unlinked) fails this too. Nobody
# listening is not this check's to say (curl finds it refused, and a daemon is started). Inside hermesd's
# sandbox the path holds the agent socket it bound.
hermesd_cown() {
  [ -n "$hermesd_csb" ] && return 0
  [ -r /proc/net/unix ] || return 0
  hermesd_inos=$(awk -v p="$1" '$4 == "00010000" { l = $0; for (i = 0; i < 7; i++) sub(/^ *[^ ]+ +/, "", l); if (l == p) print $7 }' /proc/net/unix 2>/dev/null)
  [ -n "$hermesd_inos" ] || return 0
  hermesd_lp=
  # The lock holds "<pid> <start>" without a newline: read says so, having read it.
  read -r hermesd_lp hermesd_ls < "$hermesd_rt/daemon.lock" 2>/dev/null || [ -n "$hermesd_lp" ] || return 1
  hermesd_fds=$(ls -l "/proc/$hermesd_lp/fd" 2>/dev/null)
  for hermesd_ino in $hermesd_inos; do
    case $hermesd_fds in *"socket:[$hermesd_ino]"*) ;; *) return 1 ;; esac
  done
}

hermesd_curl() {
  hermesd_ck=$1 hermesd_cn=$2 hermesd_cb=$3 hermesd_cu=$4 hermesd_crc=$5 hermesd_cx=$6 hermesd_cp=$7
  shift 7
  command -v curl >/dev/null 2>&1 || hermesd_cfault 1 "neither hermesd's client nor curl is here (run hermesd doctor)"
  hermesd_csb=
  if [ -f "$hermesd_rt/sandbox/daemon-pidns" ] && [ "$(readlink /proc/$$/ns/pid 2>/dev/null)" != "$(cat "$hermesd_rt/sandbox/daemon-pidns")" ]; then hermesd_csb=1; fi
  hermesd_nl='
'
  if [ "$hermesd_ck" = git ]; then
    hermesd_body='{"args":['
    hermesd_s=
    for hermesd_a in "$@"; do
      hermesd_cjson "$hermesd_a"
      hermesd_body=$hermesd_body$hermesd_s$hermesd_e
      hermesd_s=,
    done
    hermesd_body="$hermesd_body]"
    if [ -n "${GIT_INDEX_FILE:-}" ]; then
      case $GIT_INDEX_FILE in /*) hermesd_cjson "$GIT_INDEX_FILE" ;; *) hermesd_cjson "$PWD/$GIT_INDEX_FILE" ;; esac
      hermesd_body="$hermesd_body,\"indexFile\":$hermesd_e"
    fi
    [ -n "$hermesd_cp" ] && hermesd_body="$hermesd_body,\"phase\":\"$hermesd_cp\""
    if [ "$hermesd_cn" = post-rewrite ]; then
      hermesd_s=
      hermesd_body="$hermesd_body,\"stdin\":["
      while IFS= read -r hermesd_a; do
        hermesd_cjson "$hermesd_a"
        hermesd_body=$hermesd_body$hermesd_s$hermesd_e
        hermesd_s=,
      done
      hermesd_body="$hermesd_body]"
    fi
    hermesd_body="$hermesd_body}"
  else
    hermesd_body=$(cat; echo .)
    hermesd_body=${hermesd_body%.}
  fi
  hermesd_q=$$-$(date +%s)
  hermesd_secs=$(((hermesd_cb + 999) / 1000))
  hermesd_end=$(($(date +%s) + hermesd_secs))
  hermesd_started=
  while :; do
    hermesd_sock=
    if [ -f "$hermesd_rt/daemon.json" ]; then
      while IFS= read -r hermesd_l; do
        case $hermesd_l in *'"socket": "'*) hermesd_sock=${hermesd_l#*'"socket": "'} hermesd_sock=${hermesd_sock%\"*}; break ;; esac
      done < "$hermesd_rt/daemon.json"
    fi
    hermesd_out=
    hermesd_k=7
    if [ -n "$hermesd_sock" ] && [ -S "$hermesd_sock" ]; then
      hermesd_cown "$hermesd_sock" || hermesd_cfault 0 "the socket $hermesd_sock is not served by the daemon that holds this work tree's lock; its answer is not trusted"
      hermesd_out=$(printf '%s' "$hermesd_body" | curl -sS --http1.0 --unix-socket "$hermesd_sock" --max-time "$hermesd_secs" -H 'content-type: application/octet-stream' \
        --data-binary @- -w "${hermesd_nl}%{http_code}" "http://hermesd/v1/ask?p=2&q=$hermesd_q&k=$hermesd_ck&n=$hermesd_cn&pid=$$&bound=$hermesd_cb" 2>/dev/null)
      hermesd_k=$?
    fi
    case $hermesd_k in
      0) break ;;
      7)
        [ -n "$hermesd_csb" ] && hermesd_cfault 0 "no daemon answers hermesd's sandbox"
        [ "$(date +%s)" -gt "$hermesd_end" ] && hermesd_cfault 1 "no daemon answered and none could be started within $hermesd_cb ms"
        if [ -z "$hermesd_started" ]; then
          hermesd_started=1
          (cd "${hermesd_root:-.}" && exec "$HERMESD_NODE" "$HERMESD_DAEMON" "$PWD" </dev/null >>"$hermesd_rt/daemon.log" 2>&1 &) 2>/dev/null \
            || hermesd_cfault 1 "no daemon was running and one could not be started"
        fi
        sleep 0.05 2>/dev/null || sleep 1
        ;;
      28) hermesd_cfault 0 "the daemon did not answer within $hermesd_cb ms (hung or stopped)" ;;
      *) hermesd_cfault 0 "the daemon's answer was cut off (curl exit $hermesd_k: it stopped or died while answering; see hermesd logs)" ;;
    esac
  done
  hermesd_code=${hermesd_out##*"$hermesd_nl"}
  hermesd_out=${hermesd_out%"$hermesd_nl"*}
  [ "$hermesd_code" = 404 ] && hermesd_cfault 0 "the daemon speaks an older protocol: restart it with hermesd restart"
  [ "$hermesd_code" = 200 ] || hermesd_cfault 0 "the daemon refused the question (HTTP $hermesd_code)"
  hermesd_stdout=
  hermesd_v=
  hermesd_hello=
  while IFS= read -r hermesd_l; do
    if [ -z "$hermesd_hello" ]; then
      hermesd_hello=1
      set -- $hermesd_l
      [ "${1:-}" = hermesd ] && [ "${2:-}" = 2 ] || hermesd_cfault 0 "the daemon speaks another protocol (${2:-?}): restart it with hermesd restart"
      [ "${5:-}" = "$hermesd_q" ] || hermesd_cfault 0 "the daemon answered another question"
      continue
    fi
    case $hermesd_l in
      'e '*) printf '%s\n' "${hermesd_l#e }" >&2 ;;
      'o '*) hermesd_stdout="$hermesd_stdout${hermesd_l#o }$hermesd_nl" ;;
      '= '*) hermesd_v=${hermesd_l#= } ;;
    esac
  done <<EOF
$hermesd_out
EOF
  [ -n "$hermesd_v" ] || hermesd_cfault 0 "the daemon's answer was cut off (it stopped or died while answering; see hermesd logs)"
  printf '%s' "$hermesd_stdout"
  exit "$hermesd_v"
}
