# hermesd git hook runner (POSIX sh). `hermesd init` writes this file after a header of baked
# settings (HERMESD_NODE, HERMESD_CLI, HERMESD_PREV_HOOKS, HERMESD_TIMEOUT_MS). It runs three ways:
#  - hermesd_stub=husky (a husky layout hermesd created): git runs <husky-dir>/_/<hook>, which
#    sources this file. It does what husky's runner `h` does (HUSKY=0, HUSKY=2,
#    ~/.config/husky/init.sh, <husky-dir>/<hook> with `sh -e`) without its forks: hermesd's part
#    when <husky-dir>/<hook> holds our block, then your commands in it.
#  - hermesd_stub=git (no hook manager): git runs <hooks-dir>/<hook>, a stub of hermesd's that
#    sources this file; the hook that was there before (kept in HERMESD_PREV_HOOKS) runs after.
#  - as a command, `hermesd [--file <hook-file>] <hook> [args...]`: from our block in a husky hook
#    file (--file: the rest of that file runs after hermesd's part, from here), or from a hook
#    manager's config (.pre-commit-config.yaml, lefthook.yml), which runs the other hooks itself.
#
# Nothing about the work tree is baked in: git runs hooks at the root of the work tree, and the
# git dir ($GIT_DIR, or .git: a directory, or a file naming it in a linked worktree) says where
# the daemon is: <git-dir>/hermesd/daemon.json records its socket, whatever HERMESD_SOCKET_DIR or
# XDG_RUNTIME_DIR this shell has. No daemon recorded: the Node fallback starts one.
#
# Fast path: a warm daemon answers over its Unix socket through one curl (no Node start).
# Fallback: `node <cli> hook <name>`, which starts a daemon that is down, applies
# hooks.onUnavailable when none answers in time, and restores your work itself when the daemon
# dies in the middle of a hook. A daemon that does not answer within HERMESD_TIMEOUT_MS (hung,
# SIGSTOPped) never holds the commit longer than about that.
# Every fork costs milliseconds on a busy machine: the common path uses sh builtins only, plus
# curl (no $(…), no pipes, no sha256sum).

hermesd_file=
hermesd_own=
hermesd_block=
case ${hermesd_stub:-} in
  husky)
    hermesd_hook=${0##*/}
    [ "${HUSKY:-}" = 2 ] && set -x
    hermesd_dir=${0%/*}
    hermesd_file=${hermesd_dir%/*}/$hermesd_hook
    # As husky: no <husky-dir>/<hook>, no hook.
    [ -f "$hermesd_file" ] || exit 0
    hermesd_l=${XDG_CONFIG_HOME:-$HOME/.config}/husky/init.sh
    [ -f "$hermesd_l" ] && . "$hermesd_l"
    [ "${HUSKY-}" = 0 ] && exit 0
    ;;
  git)
    # The stub names its hook: the pre-commit framework runs it as pre-commit.legacy.
    hermesd_hook=${hermesd_hook_name:-${0##*/}}
    ;;
  *)
    if [ "${1:-}" = --file ]; then
      hermesd_file=$2
      shift 2
    fi
    hermesd_hook=${1:-}
    shift
    ;;
esac

if [ -n "$hermesd_file" ]; then
  # What the hook file holds: our block (hermesd runs), commands of yours (run after it).
  hermesd_in=
  while read -r hermesd_l || [ -n "$hermesd_l" ]; do
    case $hermesd_l in
      '# >>> hermesd '*) hermesd_in=1 hermesd_block=1 ;;
      '# <<< hermesd <<<') hermesd_in= ;;
      ''|'#'*) ;;
      *) [ -n "$hermesd_in" ] || hermesd_own=1 ;;
    esac
  done < "$hermesd_file"
  if [ -z "$hermesd_block" ]; then
    # You took hermesd out of this hook: husky's behaviour, nothing of ours.
    [ -n "$hermesd_own" ] || exit 0
    PATH="node_modules/.bin:$PATH" sh -e "$hermesd_file" "$@"
    hermesd_rc=$?
    [ "$hermesd_rc" = 0 ] || echo "husky - $hermesd_hook script failed (code $hermesd_rc)"
    exit "$hermesd_rc"
  fi
fi

# The git dir, read with builtins (git runs hooks at the root of the work tree).
hermesd_gd=${GIT_DIR:-}
if [ -z "$hermesd_gd" ]; then
  if [ -d .git ]; then
    hermesd_gd=.git
  elif [ -f .git ]; then
    read -r hermesd_l < .git
    hermesd_gd=${hermesd_l#gitdir: }
  fi
fi
case $hermesd_gd in '' | /*) ;; *) hermesd_gd=$PWD/$hermesd_gd ;; esac
hermesd_rt=$hermesd_gd/hermesd

# Settings the daemon refreshes from .hermes/config.yaml (hooks.timeoutMs, whether the
# pre-commit may run long), newer than the baked ones.
[ -n "$hermesd_gd" ] && [ -f "$hermesd_rt/hook-settings" ] && . "$hermesd_rt/hook-settings"

# post-rewrite reads stdin; keep it for hermesd and the chained hook alike.
hermesd_has_stdin=
if [ "$hermesd_hook" = post-rewrite ]; then
  hermesd_stdin=$(cat; echo .)
  hermesd_stdin=${hermesd_stdin%.}
  hermesd_has_stdin=1
fi

# The hook that ran before hermesd (.git/hooks, a previous core.hooksPath): keep it running.
hermesd_chained=
hermesd_prev() {
  if [ -n "${HERMESD_PREV_HOOKS:-}" ] && [ -x "$HERMESD_PREV_HOOKS/$hermesd_hook" ]; then
    hermesd_chained=1
    if [ -n "$hermesd_has_stdin" ]; then
      printf '%s' "$hermesd_stdin" | "$HERMESD_PREV_HOOKS/$hermesd_hook" "$@"
    else
      "$HERMESD_PREV_HOOKS/$hermesd_hook" "$@"
    fi
    return $?
  fi
  return 0
}

# After hermesd's part: the previous hook, then your commands in the hook file, run as husky
# runs them; HERMESD_BLOCK_DONE tells our block in there not to run hermesd again.
hermesd_after() {
  hermesd_prev "$@" || return $?
  [ -n "$hermesd_own" ] || return 0
  hermesd_chained=1
  if [ -n "$hermesd_has_stdin" ]; then
    printf '%s' "$hermesd_stdin" | HERMESD_BLOCK_DONE=$$ PATH="node_modules/.bin:$PATH" sh -e "$hermesd_file" "$@"
  else
    HERMESD_BLOCK_DONE=$$ PATH="node_modules/.bin:$PATH" sh -e "$hermesd_file" "$@"
  fi
  hermesd_rc=$?
  [ "$hermesd_rc" = 0 ] && return 0
  echo "husky - $hermesd_hook script failed (code $hermesd_rc)"
  [ "$hermesd_rc" = 127 ] && echo "husky - command not found in PATH=node_modules/.bin:$PATH"
  return "$hermesd_rc"
}

case $hermesd_hook in
  pre-commit|pre-commit-final|post-commit|post-merge|post-checkout|post-rewrite) ;;
  # commit-msg and the rest: nothing for hermesd to judge; the chained hook keeps running.
  *) hermesd_after "$@"; exit $? ;;
esac

if [ "${HERMESD_SKIP:-}" = 1 ]; then
  hermesd_after "$@"
  exit $?
fi

# The pre-commit framework runs this stub as pre-commit.legacy before its own hooks; when its
# config runs hermesd too (hermesd init put it there), that entry judges, once, at the end.
if [ "${PRE_COMMIT_RUNNING_LEGACY:-}" = 1 ] && [ "$hermesd_hook" = pre-commit ] && [ -f .pre-commit-config.yaml ]; then
  while IFS= read -r hermesd_l; do
    case $hermesd_l in *'/hermesd/hook"'*) hermesd_after "$@"; exit $? ;; esac
  done < .pre-commit-config.yaml
fi

# The git command this hook runs in (src/hooks/attempt.ts): the nearest `git` above us, as
# "<pid>:<start time in clock ticks>", read from /proc with builtins. Empty without /proc.
# Read where the sh needs it (the post-commit's "was this commit judged?", a body sent with
# curl); the doorbell's daemon walks the same way from the hook's pid, in Node, at no cost
# here (reading /proc/<pid>/stat with `read` is a system call per byte).
hermesd_att=
hermesd_walked=
hermesd_attempt() {
  [ -n "$hermesd_walked" ] && return 0
  hermesd_walked=1
  hermesd_p=$PPID
  hermesd_n=0
  while [ "$hermesd_n" -lt 8 ] && [ "$hermesd_p" -gt 1 ] 2>/dev/null; do
    hermesd_l=
    { read -r hermesd_l < "/proc/$hermesd_p/stat"; } 2>/dev/null || return 0
    hermesd_c=${hermesd_l#*\(}
    hermesd_c=${hermesd_c%\)*}
    # After "(comm) ": state ppid pgrp … ; starttime is the 20th of those fields.
    set -- ${hermesd_l##*\) }
    if [ "$hermesd_c" = git ]; then
      hermesd_att=$hermesd_p:${20}
      return 0
    fi
    hermesd_p=$2
    hermesd_n=$((hermesd_n + 1))
  done
}
case $hermesd_hook in post-commit|pre-commit-final) hermesd_attempt ;; esac

# What the pre-commit of this attempt left: its attempt id once it let the commit through.
# A hint for the other hooks of the same git command (run post-commit in the background,
# re-check at the end of a hook chain); the record that counts is in the daemon's memory.
hermesd_flag=$hermesd_rt/precommit-attempt
hermesd_judged=
case $hermesd_hook in
  post-commit|pre-commit-final)
    if [ -n "$hermesd_att" ] && [ -f "$hermesd_flag" ]; then
      read -r hermesd_l < "$hermesd_flag" 2>/dev/null && [ "$hermesd_l" = "$hermesd_att" ] && hermesd_judged=1
    fi
    ;;
esac

# The JSON body for the daemon, in hermesd_body without its closing brace; anything that would
# need escaping goes through the Node fallback instead (100).
hermesd_build() {
  [ -n "$hermesd_gd" ] || { hermesd_why=no-git-dir; return 100; }
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
  [ -n "${hermesd_phase:-}" ] && hermesd_body="$hermesd_body,\"phase\":\"$hermesd_phase\""
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
      read -r hermesd_l 2>/dev/null < "$hermesd_gd/HEAD"
      hermesd_head=
      hermesd_branch=
      case $hermesd_l in
        'ref: refs/heads/'*)
          hermesd_branch=${hermesd_l#ref: refs/heads/}
          # Branches live in the common dir of a linked worktree.
          hermesd_cd=$hermesd_gd
          if [ -f "$hermesd_gd/commondir" ]; then
            read -r hermesd_cd < "$hermesd_gd/commondir"
            case $hermesd_cd in /*) ;; *) hermesd_cd=$hermesd_gd/$hermesd_cd ;; esac
          fi
          read -r hermesd_head 2>/dev/null < "$hermesd_cd/${hermesd_l#ref: }" ;;
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
  return 0
}

# hermesd_body closed, in hermesd_json, with the attempt when the sh has read it (the doorbell's
# daemon reads it from the hook's pid otherwise).
hermesd_close() {
  hermesd_json=$hermesd_body
  [ -n "$hermesd_att" ] && hermesd_json="$hermesd_json,\"attempt\":\"$hermesd_att\""
  hermesd_json="$hermesd_json}"
}

hermesd_fast() {
  hermesd_build "$@" || return $?
  hermesd_ms=${HERMESD_TIMEOUT_MS:-10000}
  hermesd_secs=$(( (hermesd_ms + 999) / 1000 ))
  hermesd_frac=$((hermesd_ms % 1000))
  [ "$hermesd_frac" -lt 100 ] && hermesd_frac=0$hermesd_frac
  [ "$hermesd_frac" -lt 10 ] && hermesd_frac=0$hermesd_frac
  hermesd_max=$((hermesd_ms / 1000)).$hermesd_frac
  hermesd_url=http://hermesd/v1/hooks/$hermesd_hook?format=text
  hermesd_long=
  [ "$hermesd_hook" = pre-commit ] && [ -z "${hermesd_phase:-}" ] && [ "${HERMESD_LONG_PRECOMMIT:-1}" = 1 ] && hermesd_long=1

  # A hook the daemon answers within the bound: the doorbell first (no client process;
  # hooks/hermesd-bell.sh). A pre-commit that may run for long streams its progress over curl.
  if [ -z "$hermesd_long" ]; then
    # The daemon records a pre-commit it let through (the flag below).
    hermesd_close
    hermesd_ring git "$hermesd_hook" "$hermesd_ms" "$hermesd_max" "$hermesd_json"
    case $? in
      0)
        hermesd_bell_text >&2
        case $hermesd_x in [0-9] | [0-9][0-9]) return "$hermesd_x" ;; esac
        return 102
        ;;
      101) return 101 ;;
    esac
  fi

  command -v curl >/dev/null 2>&1 || { hermesd_why=no-curl; return 100; }
  hermesd_socket || { hermesd_why=no-socket; return 100; }
  hermesd_attempt
  hermesd_close

  if [ -n "$hermesd_long" ]; then
    # Checks or generators may run for minutes: first a bounded sign of life, then the run,
    # streamed, which the daemon keeps alive with a line every 500 ms (curl stops on a long silence).
    curl -sS --unix-socket "$hermesd_sock" --max-time "$hermesd_max" -o /dev/null http://hermesd/v1/status 2>/dev/null
    case $? in 0) ;; 28) return 101 ;; *) hermesd_why=refused; return 100 ;; esac
    { curl -sS -N --unix-socket "$hermesd_sock" --speed-limit 1 --speed-time "$hermesd_secs" \
        -H 'content-type: application/json' --data-binary "$hermesd_json" "$hermesd_url&live=1" 2>/dev/null
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
      # 28: timed out (nothing arrived in time); 7: could not connect; anything else: the
      # daemon answered, then the connection broke (it died mid-hook): 102.
      [ "$hermesd_k" = 28 ] && exit 101
      [ "$hermesd_k" = 7 ] && exit 100
      exit 102
    }
    return $?
  fi

  # Rules only, or a hook the daemon answers at once: the whole answer within the bound,
  # read back with builtins (a file per hook name: one git command runs a hook at a time).
  hermesd_answer=$hermesd_rt/answer-$hermesd_hook
  curl -sS --unix-socket "$hermesd_sock" --max-time "$hermesd_max" -o "$hermesd_answer" \
    -H 'content-type: application/json' --data-binary "$hermesd_json" "$hermesd_url" 2>/dev/null
  case $? in 0) ;; 28) return 101 ;; 7) return 100 ;; *) return 102 ;; esac
  hermesd_c=
  while IFS= read -r hermesd_l; do
    case $hermesd_l in
      'hermesd-exit '*) hermesd_c=${hermesd_l#hermesd-exit } ;;
      *) printf '%s\n' "$hermesd_l" >&2 ;;
    esac
  done < "$hermesd_answer"
  [ -n "$hermesd_c" ] || return 102
  return "$hermesd_c"
}

hermesd_slow() {
  hermesd_node=$HERMESD_NODE
  [ -x "$hermesd_node" ] || hermesd_node=$(command -v node 2>/dev/null)
  set -- hook "$hermesd_hook" --unreachable "$hermesd_why" ${hermesd_phase:+--phase "$hermesd_phase"} -- "$@"
  if [ -n "$hermesd_node" ] && [ -f "$HERMESD_CLI" ]; then
    set -- "$hermesd_node" "$HERMESD_CLI" "$@"
  elif command -v hermesd >/dev/null 2>&1; then
    set -- hermesd "$@"
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

# One round with the daemon: the fast path, else the Node fallback (which starts a daemon that
# is down, and restores your work if the daemon died mid-hook).
hermesd_run() {
  hermesd_why=
  hermesd_fast "$@"
  hermesd_rc=$?
  [ "$hermesd_rc" -lt 100 ] && [ -f "$hermesd_stuck" ] && rm -f "$hermesd_stuck"
  if [ "$hermesd_rc" -ge 100 ]; then
    case $hermesd_rc in
      101) hermesd_why=timeout; : > "$hermesd_stuck" 2>/dev/null ;;
      102) hermesd_why=lost ;;
    esac
    [ -z "$hermesd_why" ] && hermesd_why=refused
    hermesd_slow "$@"
    hermesd_rc=$?
  fi
  return "$hermesd_rc"
}

# A daemon that just timed out is not waited for again by the other hooks of the same git
# command; the next pre-commit tries it again.
hermesd_stuck=$hermesd_rt/unresponsive
if [ "$hermesd_hook" != pre-commit ] && [ -f "$hermesd_stuck" ]; then
  hermesd_after "$@"
  exit $?
fi

case $hermesd_hook in
  pre-commit-final)
    # From a hook manager's prepare-commit-msg (lefthook): the end of its pre-commit chain. Only
    # a commit whose pre-commit ran is re-checked; --no-verify is post-commit's to report.
    [ -n "$hermesd_judged" ] || exit 0
    hermesd_hook=pre-commit
    hermesd_phase=final
    set --
    hermesd_run
    exit $?
    ;;
  post-*)
    # Evidence: git does not wait for it (the daemon answers at once and writes after), and a
    # cold or stuck daemon costs the git command nothing. In the foreground after a commit
    # whose pre-commit did not run here (post-commit's verdict is shown) and under an agent's
    # guard (its record of the commit must be in place before the command ends).
    if [ "$hermesd_hook" != post-commit ] || { [ -n "$hermesd_judged" ] && [ -z "${HERMESD_GUARD_LOG:-}" ]; }; then
      # Through the doorbell, no answer wanted: the question is left, nothing forks.
      if hermesd_build "$@" && hermesd_close && hermesd_ring_once git "$hermesd_hook" "$hermesd_json"; then
        hermesd_after "$@"
        exit $?
      fi
      (
        # Over the socket: no doorbell answers a subshell (its $$ is the hook's).
        HERMESD_DOORBELL=0
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
    hermesd_run "$@"
    hermesd_after "$@"
    exit $?
    ;;
esac

# pre-commit: the verdict on the staged snapshot, the rest of the chain, then (when anything
# ran after hermesd's part) the re-check of what the chain changed: the tree git commits.
hermesd_run "$@" || exit $?
[ -n "$hermesd_att" ] && { echo "$hermesd_att" > "$hermesd_flag"; } 2>/dev/null
hermesd_after "$@" || exit $?
[ -n "$hermesd_chained" ] || exit 0
hermesd_phase=final
hermesd_run "$@"
