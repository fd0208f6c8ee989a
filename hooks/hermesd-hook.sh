# hermesd git hook runner (POSIX sh). `hermesd init` writes this file, after a header of
# baked settings (HERMESD_NODE, HERMESD_CLI, HERMESD_ROOT, HERMESD_ROOT_HASH, HERMESD_GIT_DIR,
# HERMESD_COMMON_DIR, HERMESD_PREV_HOOKS, HERMESD_UID, HERMESD_TIMEOUT_MS), to <husky-dir>/_/hermesd.
# It runs two ways:
#  - direct (the husky layout hermesd created): git runs <husky-dir>/_/<hook>, which sets
#    hermesd_direct=1 and sources this file. It does what husky's runner `h` does (HUSKY=0,
#    HUSKY=2, ~/.config/husky/init.sh, <husky-dir>/<hook> with `sh -e`) without its forks:
#    hermesd's part when <husky-dir>/<hook> holds our block, then your commands in it.
#  - from our block in <husky-dir>/<hook> (a project's own husky setup): hermesd <hook> [args...]
#
# Fast path: a warm daemon answers over its Unix socket through one curl (no Node start).
# Fallback: `node <cli> hook <name>`, which starts a daemon that is down and applies
# hooks.onUnavailable when none answers in time. A daemon that does not answer within
# HERMESD_TIMEOUT_MS (hung, SIGSTOPped) never holds the commit longer than about that.
# Every fork costs milliseconds on a busy machine: the common path uses sh builtins only,
# plus curl (no $(…), no pipes, no sha256sum: the socket's hash is baked in).

hermesd_own=
if [ -n "${hermesd_direct:-}" ]; then
  hermesd_hook=${0##*/}
  [ "${HUSKY:-}" = 2 ] && set -x
  hermesd_dir=${0%/*}
  hermesd_user=${hermesd_dir%/*}/$hermesd_hook
  # As husky: no <husky-dir>/<hook>, no hook.
  [ -f "$hermesd_user" ] || exit 0
  hermesd_l=${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh
  [ -f "$hermesd_l" ] && . "$hermesd_l"
  [ "${HUSKY-}" = 0 ] && exit 0
  # What <husky-dir>/<hook> holds: our block (hermesd runs), commands of yours (run after it).
  hermesd_block=
  hermesd_in=
  while read -r hermesd_l || [ -n "$hermesd_l" ]; do
    case $hermesd_l in
      '# >>> hermesd '*) hermesd_in=1 hermesd_block=1 ;;
      '# <<< hermesd <<<') hermesd_in= ;;
      ''|'#'*) ;;
      *) [ -n "$hermesd_in" ] || hermesd_own=1 ;;
    esac
  done < "$hermesd_user"
  if [ -z "$hermesd_block" ]; then
    # You took hermesd out of this hook: husky's behaviour, nothing of ours.
    [ -n "$hermesd_own" ] || exit 0
    PATH="node_modules/.bin:$PATH" sh -e "$hermesd_user" "$@"
    hermesd_rc=$?
    [ "$hermesd_rc" = 0 ] || echo "husky - $hermesd_hook script failed (code $hermesd_rc)"
    exit "$hermesd_rc"
  fi
else
  hermesd_hook=$1
  shift
fi

# Settings the daemon refreshes from .hermes/config.yaml (hooks.timeoutMs, whether the
# pre-commit may run long), newer than the baked ones.
hermesd_settings=$HERMESD_GIT_DIR/hermesd/hook-settings
[ -f "$hermesd_settings" ] && . "$hermesd_settings"

# post-rewrite reads stdin; keep it for hermesd and the chained hook alike.
hermesd_has_stdin=
if [ "$hermesd_hook" = post-rewrite ]; then
  hermesd_stdin=$(cat; echo .)
  hermesd_stdin=${hermesd_stdin%.}
  hermesd_has_stdin=1
fi

# The hook this repository ran before `hermesd init` (core.hooksPath or .git/hooks): keep it running.
hermesd_prev() {
  if [ -n "$HERMESD_PREV_HOOKS" ] && [ -x "$HERMESD_PREV_HOOKS/$hermesd_hook" ]; then
    if [ -n "$hermesd_has_stdin" ]; then
      printf '%s' "$hermesd_stdin" | "$HERMESD_PREV_HOOKS/$hermesd_hook" "$@"
    else
      "$HERMESD_PREV_HOOKS/$hermesd_hook" "$@"
    fi
    return $?
  fi
  return 0
}

# After hermesd's part: the previous hook, then (direct) your commands in <husky-dir>/<hook>,
# run as husky runs them; HERMESD_BLOCK_DONE tells our block in there not to run hermesd again.
hermesd_after() {
  hermesd_prev "$@" || return $?
  [ -n "$hermesd_own" ] || return 0
  if [ -n "$hermesd_has_stdin" ]; then
    printf '%s' "$hermesd_stdin" | HERMESD_BLOCK_DONE=$$ PATH="node_modules/.bin:$PATH" sh -e "$hermesd_user" "$@"
  else
    HERMESD_BLOCK_DONE=$$ PATH="node_modules/.bin:$PATH" sh -e "$hermesd_user" "$@"
  fi
  hermesd_rc=$?
  [ "$hermesd_rc" = 0 ] && return 0
  echo "husky - $hermesd_hook script failed (code $hermesd_rc)"
  [ "$hermesd_rc" = 127 ] && echo "husky - command not found in PATH=node_modules/.bin:$PATH"
  return "$hermesd_rc"
}

case $hermesd_hook in
  pre-commit|post-commit|post-merge|post-checkout|post-rewrite) ;;
  # commit-msg and the rest: nothing for hermesd to judge; the chained hook keeps running.
  *) hermesd_after "$@"; exit $? ;;
esac

if [ "${HERMESD_SKIP:-}" = 1 ]; then
  hermesd_after "$@"
  exit $?
fi

hermesd_fast() {
  command -v curl >/dev/null 2>&1 || { hermesd_why=no-curl; return 100; }
  # The socket path, computed as src/daemon/paths.ts does.
  if [ -n "${HERMESD_SOCKET_DIR:-}" ]; then
    case $HERMESD_SOCKET_DIR in /*) hermesd_sd=$HERMESD_SOCKET_DIR ;; *) hermesd_sd=$PWD/$HERMESD_SOCKET_DIR ;; esac
  else
    case ${XDG_RUNTIME_DIR:-} in /*) hermesd_sd=$XDG_RUNTIME_DIR ;; *) hermesd_sd=/tmp ;; esac
    hermesd_sd=$hermesd_sd/hermesd-$HERMESD_UID
  fi
  # git runs hooks at the work-tree root; $PWD saves a fork when it is already the real path.
  hermesd_root=$PWD
  [ "$hermesd_root" = "$HERMESD_ROOT" ] || hermesd_root=$(pwd -P)
  if [ "$hermesd_root" = "$HERMESD_ROOT" ]; then
    hermesd_hash=$HERMESD_ROOT_HASH
  else
    hermesd_hash=$(printf '%s' "$hermesd_root" | sha256sum | cut -c1-16)
  fi
  hermesd_sock=$hermesd_sd/$hermesd_hash.sock
  [ -S "$hermesd_sock" ] || { hermesd_why=no-socket; return 100; }

  # The JSON body; anything that would need escaping goes through the Node fallback instead.
  hermesd_idx=${GIT_INDEX_FILE:-}
  case $hermesd_idx in ''|/*) ;; *) hermesd_idx=$PWD/$hermesd_idx ;; esac
  hermesd_body='{"via":"sh","args":['
  hermesd_sep=
  for hermesd_a in "$@" "$hermesd_idx"; do
    case $hermesd_a in *\"*|*\\*|*[[:cntrl:]]*) hermesd_why=escape; return 100 ;; esac
  done
  for hermesd_a in "$@"; do
    hermesd_body="$hermesd_body$hermesd_sep\"$hermesd_a\""
    hermesd_sep=,
  done
  hermesd_body="$hermesd_body]"
  [ -n "$hermesd_idx" ] && hermesd_body="$hermesd_body,\"indexFile\":\"$hermesd_idx\""
  if [ -n "$hermesd_has_stdin" ]; then
    hermesd_lines=
    hermesd_sep=
    # post-rewrite stdin is "<old-sha> <new-sha>" lines: hex and spaces only.
    for hermesd_a in $(printf '%s' "$hermesd_stdin" | tr ' ' ':'); do
      case $hermesd_a in *[!0-9a-f:]*) hermesd_why=escape; return 100 ;; esac
      hermesd_lines="$hermesd_lines$hermesd_sep\"${hermesd_a%%:*} ${hermesd_a#*:}\""
      hermesd_sep=,
    done
    hermesd_body="$hermesd_body,\"stdin\":[$hermesd_lines]"
  fi
  case $hermesd_hook in
    # Where git is now, read with builtins: the evidence names this commit even when the
    # daemon gets to it after git has moved on (the post-* hooks run in the background).
    post-*)
      hermesd_l=
      read -r hermesd_l 2>/dev/null < "$HERMESD_GIT_DIR/HEAD"
      hermesd_head=
      hermesd_branch=
      case $hermesd_l in
        'ref: refs/heads/'*)
          hermesd_branch=${hermesd_l#ref: refs/heads/}
          read -r hermesd_head 2>/dev/null < "${HERMESD_COMMON_DIR:-$HERMESD_GIT_DIR}/${hermesd_l#ref: }" ;;
        'ref: '*) ;;
        *) hermesd_head=$hermesd_l ;;
      esac
      # A packed ref, reftable, an odd branch name: the daemon asks git instead.
      case ${#hermesd_head} in 40|64) ;; *) hermesd_head= ;; esac
      case $hermesd_head$hermesd_branch in *\"*|*\\*|*[[:cntrl:]]*) hermesd_head= ;; esac
      case $hermesd_head in *[!0-9a-f]*) hermesd_head= ;; esac
      [ -n "$hermesd_head" ] && hermesd_body="$hermesd_body,\"head\":\"$hermesd_head\",\"branch\":\"$hermesd_branch\""
      ;;
  esac
  hermesd_body="$hermesd_body}"

  hermesd_ms=${HERMESD_TIMEOUT_MS:-10000}
  hermesd_secs=$(( (hermesd_ms + 999) / 1000 ))
  hermesd_frac=$((hermesd_ms % 1000))
  [ "$hermesd_frac" -lt 100 ] && hermesd_frac=0$hermesd_frac
  [ "$hermesd_frac" -lt 10 ] && hermesd_frac=0$hermesd_frac
  hermesd_max=$((hermesd_ms / 1000)).$hermesd_frac
  hermesd_url=http://hermesd/v1/hooks/$hermesd_hook?format=text

  if [ "$hermesd_hook" = pre-commit ] && [ "${HERMESD_LONG_PRECOMMIT:-1}" = 1 ]; then
    # Checks or generators may run for minutes: first a bounded sign of life, then the run,
    # streamed, which the daemon keeps alive with a line every 500 ms (curl stops on a long silence).
    curl -sS --unix-socket "$hermesd_sock" --max-time "$hermesd_max" -o /dev/null http://hermesd/v1/status 2>/dev/null
    case $? in 0) ;; 28) return 101 ;; *) hermesd_why=refused; return 100 ;; esac
    { curl -sS -N --unix-socket "$hermesd_sock" --speed-limit 1 --speed-time "$hermesd_secs" \
        -H 'content-type: application/json' --data-binary "$hermesd_body" "$hermesd_url&live=1" 2>/dev/null
      echo "hermesd-curl $?"
    } | {
      hermesd_c=
      hermesd_k=
      while IFS= read -r hermesd_l; do
        case $hermesd_l in
          'hermesd-exit '*) hermesd_c=${hermesd_l#hermesd-exit } ;;
          'hermesd-curl '*) hermesd_k=${hermesd_l#hermesd-curl } ;;
          '') ;;
          *) printf '%s\n' "$hermesd_l" >&2 ;;
        esac
      done
      [ -n "$hermesd_c" ] && exit "$hermesd_c"
      # 28: timed out (nothing arrived in time); anything else: could not talk to it.
      [ "$hermesd_k" = 28 ] && exit 101
      exit 100
    }
    return $?
  fi

  # Rules only, or a hook the daemon answers at once: the whole answer within the bound,
  # read back with builtins (a file per hook name: one git command runs a hook at a time).
  hermesd_answer=$HERMESD_GIT_DIR/hermesd/answer-$hermesd_hook
  curl -sS --unix-socket "$hermesd_sock" --max-time "$hermesd_max" -o "$hermesd_answer" \
    -H 'content-type: application/json' --data-binary "$hermesd_body" "$hermesd_url" 2>/dev/null
  case $? in 0) ;; 28) return 101 ;; *) return 100 ;; esac
  hermesd_c=
  while IFS= read -r hermesd_l; do
    case $hermesd_l in
      'hermesd-exit '*) hermesd_c=${hermesd_l#hermesd-exit } ;;
      *) printf '%s\n' "$hermesd_l" >&2 ;;
    esac
  done < "$hermesd_answer"
  [ -n "$hermesd_c" ] || return 100
  return "$hermesd_c"
}

hermesd_slow() {
  hermesd_node=$HERMESD_NODE
  [ -x "$hermesd_node" ] || hermesd_node=$(command -v node 2>/dev/null)
  if [ -n "$hermesd_node" ] && [ -f "$HERMESD_CLI" ]; then
    set -- "$hermesd_node" "$HERMESD_CLI" hook "$hermesd_hook" --unreachable "$hermesd_why" -- "$@"
  elif command -v hermesd >/dev/null 2>&1; then
    set -- hermesd hook "$hermesd_hook" --unreachable "$hermesd_why" -- "$@"
  else
    echo "hermesd: cannot find hermesd (not at $HERMESD_CLI, not on PATH); the $hermesd_hook hook did nothing. Run hermesd init again." >&2
    return 0
  fi
  if [ -n "$hermesd_has_stdin" ]; then
    printf '%s' "$hermesd_stdin" | "$@"
  else
    "$@" </dev/null
  fi
}

# A daemon that just timed out is not waited for again by the other hooks of the same git
# command; the next pre-commit tries it again.
hermesd_stuck=$HERMESD_GIT_DIR/hermesd/unresponsive
if [ "$hermesd_hook" != pre-commit ] && [ -f "$hermesd_stuck" ]; then
  hermesd_after "$@"
  exit $?
fi

# Whether the pre-commit hook ran for the commit now in post-commit (a builtin-only flag:
# pre-commit writes it, post-commit reads and clears it).
hermesd_ran=$HERMESD_GIT_DIR/hermesd/precommit-ran

# post-* hooks record evidence: git does not wait for it (the daemon answers at once and
# writes after), and a cold or stuck daemon costs the git command nothing. Except after a
# commit that skipped pre-commit (--no-verify): then post-commit's verdict is shown.
hermesd_background=
case $hermesd_hook in
  post-commit)
    hermesd_flag=
    [ -f "$hermesd_ran" ] && { read -r hermesd_flag < "$hermesd_ran" || :; : > "$hermesd_ran"; }
    [ "$hermesd_flag" = 1 ] && hermesd_background=1
    ;;
  post-*) hermesd_background=1 ;;
esac
if [ -n "$hermesd_background" ]; then
  (
    hermesd_why=
    hermesd_fast "$@" >/dev/null 2>&1
    # A daemon that is down is started (by the Node fallback); a stuck one is left alone.
    if [ $? = 100 ]; then
      [ -z "$hermesd_why" ] && hermesd_why=refused
      hermesd_slow "$@" >/dev/null 2>&1
    fi
  ) </dev/null >/dev/null 2>&1 &
  hermesd_after "$@"
  exit $?
fi

hermesd_why=
hermesd_fast "$@"
hermesd_rc=$?
[ "$hermesd_rc" -lt 100 ] && [ -f "$hermesd_stuck" ] && rm -f "$hermesd_stuck"
if [ "$hermesd_rc" -ge 100 ]; then
  if [ "$hermesd_rc" = 101 ]; then
    hermesd_why=timeout
    : > "$hermesd_stuck" 2>/dev/null
  fi
  [ -z "$hermesd_why" ] && hermesd_why=refused
  hermesd_slow "$@"
  hermesd_rc=$?
fi
[ "$hermesd_rc" = 0 ] || exit "$hermesd_rc"
[ "$hermesd_hook" = pre-commit ] && { echo 1 > "$hermesd_ran"; } 2>/dev/null
hermesd_after "$@"
