# hermesd git hook runner (POSIX sh). `hermesd init` writes this file to
# <common-dir>/hermesd/hook after a header of baked settings (src/hook-client/runners.ts: the
# client, how to start a daemon, HERMESD_PREV_HOOKS, the default bound) and curl.sh. It runs
# three ways:
#  - hermesd_stub=husky (a husky layout hermesd created): git runs <husky-dir>/_/<hook>, which
#    sources this file. It does what husky's runner `h` does (HUSKY=0, HUSKY=2,
#    ~/.config/husky/init.sh, <husky-dir>/<hook> with `sh -e`) without its forks: hermesd's part
#    when <husky-dir>/<hook> holds our block, then your commands in it.
#  - hermesd_stub=git (no hook manager): git runs <hooks-dir>/<hook>, a stub of hermesd's that
#    sources this file; the hook that was there before (kept in HERMESD_PREV_HOOKS) runs after.
#  - as a command, `hook [--file <hook-file>] <hook> [args...]`: from our block in a husky hook
#    file (--file: the rest of that file runs after hermesd's part, from here; a husky 5–8 file
#    sources its _/husky.sh there, which does what it always did), or from a hook manager's
#    config (.pre-commit-config.yaml, lefthook.yml), which runs the other hooks itself.
#
# HUSKY=0 in a husky hook file (husky's switch, as husky 5–9 read it) skips your commands and
# hermesd's pre-commit check with them; hermesd's post-commit and other evidence hooks still
# run, so a commit made with HUSKY=0 is re-checked at once, as a --no-verify one is, and a key
# in it is reported with the command that takes it back. HERMESD_SKIP=1 is hermesd's own switch.
#
# hermesd's part is one question to the daemon through hermesd's client (client.c; curl.sh
# where it could not be built), which owns the bound, starts a daemon that is down, and
# decides what every fault means (docs/hooks.md). Nothing about the work tree is baked in:
# git runs hooks at the root of the work tree, and the git dir says where the daemon is.

hermesd_file=
hermesd_own=
hermesd_block=
hermesd_off=
hermesd_husky_sh=
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
    [ "${HUSKY-}" = 0 ] && hermesd_off=1
    ;;
  git)
    # The stub names its hook: the pre-commit framework runs it as pre-commit.legacy.
    hermesd_hook=${hermesd_hook_name:-${0##*/}}
    ;;
  *)
    if [ "${1:-}" = --file ]; then
      hermesd_file=$2
      shift 2
      [ "${HUSKY-}" = 0 ] && hermesd_off=1
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
      # husky 5–8's first line: its husky.sh runs the file (HUSKY=0, ~/.huskyrc, sh -e, its messages).
      *'/_/husky.sh"'*) [ -n "$hermesd_in" ] || hermesd_own=1 hermesd_husky_sh=1 ;;
      *) [ -n "$hermesd_in" ] || hermesd_own=1 ;;
    esac
  done < "$hermesd_file"
  if [ -z "$hermesd_block" ]; then
    # You took hermesd out of this hook: husky's behaviour, nothing of ours.
    [ -n "$hermesd_own" ] && [ -z "$hermesd_off" ] || exit 0
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

# What the daemon writes from .hermes/config.yaml (hooks.timeoutMs, hooks.onUnavailable),
# newer than the baked defaults.
[ -n "$hermesd_gd" ] && [ -f "$hermesd_rt/settings" ] && . "$hermesd_rt/settings"

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
# runs them (husky 9's runner puts node_modules/.bin on PATH and says when they fail; husky
# 5–8's husky.sh, sourced by the file, does its own); HERMESD_BLOCK_DONE tells our block in
# there not to run hermesd again. With HUSKY=0, as husky: none of them.
hermesd_after() {
  [ -z "$hermesd_off" ] || return 0
  hermesd_prev "$@" || return $?
  [ -n "$hermesd_own" ] || return 0
  hermesd_chained=1
  hermesd_bin=node_modules/.bin:
  [ -z "$hermesd_husky_sh" ] || hermesd_bin=
  if [ -n "$hermesd_has_stdin" ]; then
    printf '%s' "$hermesd_stdin" | HERMESD_BLOCK_DONE=$$ PATH="$hermesd_bin$PATH" sh -e "$hermesd_file" "$@"
  else
    HERMESD_BLOCK_DONE=$$ PATH="$hermesd_bin$PATH" sh -e "$hermesd_file" "$@"
  fi
  hermesd_rc=$?
  [ "$hermesd_rc" = 0 ] || [ -n "$hermesd_husky_sh" ] || {
    echo "husky - $hermesd_hook script failed (code $hermesd_rc)"
    [ "$hermesd_rc" = 127 ] && echo "husky - command not found in PATH=node_modules/.bin:$PATH"
  }
  return "$hermesd_rc"
}

# Inside hermesd's sandbox (another agent's confined shell: another pid namespace than the daemon
# recorded), a switch that turns hermesd's check off is not the user's: it is ignored.
hermesd_sandboxed() {
  [ -n "$hermesd_gd" ] && [ -f "$hermesd_rt/sandbox/daemon-pidns" ] && [ "$(readlink /proc/$$/ns/pid 2>/dev/null)" != "$(cat "$hermesd_rt/sandbox/daemon-pidns")" ]
}

case $hermesd_hook in
  # HUSKY=0: husky's hooks are off, hermesd's check of them too (post-commit re-checks the commit);
  # inside hermesd's sandbox husky's commands are off, hermesd's check is not.
  pre-commit|pre-commit-final)
    if [ -n "$hermesd_off" ]; then
      hermesd_sandboxed || exit 0
      echo "hermesd: HUSKY=0 is ignored for hermesd's check inside hermesd's sandbox: this commit is judged as any other" >&2
    fi
    ;;
  post-commit|post-merge|post-checkout|post-rewrite) ;;
  # commit-msg and the rest: nothing for hermesd to judge; the chained hook keeps running.
  *) hermesd_after "$@"; exit $? ;;
esac

# HERMESD_SKIP=1 is the user's escape hatch, not a sandboxed command's: inside hermesd's sandbox the
# commit is judged as any other.
if [ "${HERMESD_SKIP:-}" = 1 ]; then
  if hermesd_sandboxed; then
    echo "hermesd: HERMESD_SKIP=1 is ignored inside hermesd's sandbox: this commit is judged as any other" >&2
  else
    hermesd_after "$@"
    exit $?
  fi
fi

# The pre-commit framework runs this stub as pre-commit.legacy before its own hooks; when its
# config runs hermesd too (hermesd init put it there), that entry judges, once, at the end.
if [ "${PRE_COMMIT_RUNNING_LEGACY:-}" = 1 ] && [ "$hermesd_hook" = pre-commit ] && [ -f .pre-commit-config.yaml ]; then
  while IFS= read -r hermesd_l; do
    case $hermesd_l in *'/hermesd/hook"'*) hermesd_after "$@"; exit $? ;; esac
  done < .pre-commit-config.yaml
fi

# One question to the daemon: hermesd_ask <hook> [phase] [args...]. A refusal's code is 1.
hermesd_ask() {
  hermesd_n=$1 hermesd_p=$2
  shift 2
  hermesd_x= hermesd_b=
  case $hermesd_n in
    pre-commit | pre-commit-final) hermesd_x=-x ;;
    # post-commit decides nothing: the hook returns once its question is written to the daemon's
    # socket, and the client's child prints the audit's notice when it comes (curl waits for it).
    post-commit) hermesd_b=-b ;;
  esac
  if [ -x "$HERMESD_CLIENT" ]; then
    "$HERMESD_CLIENT" -r "$hermesd_rt" -t "${HERMESD_TIMEOUT_MS:-10000}" -u "${HERMESD_ON_UNAVAILABLE:-allow}" -c 1 $hermesd_x $hermesd_b \
      ${hermesd_p:+-p "$hermesd_p"} -n "$HERMESD_NODE" -d "$HERMESD_DAEMON" -j "$HERMESD_CLI" $HERMESD_START git "$hermesd_n" "$@"
  else
    (hermesd_curl git "$hermesd_n" "${HERMESD_TIMEOUT_MS:-10000}" "${HERMESD_ON_UNAVAILABLE:-allow}" 1 "$hermesd_x" "$hermesd_p" "$@")
  fi
}

[ -n "$hermesd_gd" ] || { echo "hermesd: no git dir found from $PWD; the $hermesd_hook hook did nothing" >&2; hermesd_after "$@"; exit $?; }

case $hermesd_hook in
  post-rewrite)
    # git gives post-rewrite its lines on stdin; the client reads them there.
    printf '%s' "$hermesd_stdin" | hermesd_ask post-rewrite '' "$@"
    hermesd_after "$@"
    exit $?
    ;;
  post-*)
    # Evidence, and after a commit the audit (its verdict is shown when the pre-commit did not run).
    hermesd_ask "$hermesd_hook" '' "$@" </dev/null
    hermesd_after "$@"
    exit $?
    ;;
  pre-commit-final)
    # From a hook manager's prepare-commit-msg (lefthook): the end of its pre-commit chain. The
    # daemon re-checks a commit whose pre-commit it judged; --no-verify is post-commit's to report.
    hermesd_ask pre-commit-final '' </dev/null
    exit $?
    ;;
esac

# pre-commit: the verdict on the staged snapshot, the rest of the chain, then (when anything
# ran after hermesd's part) the re-check of what the chain changed: the tree git commits.
hermesd_ask pre-commit '' "$@" </dev/null || exit $?
hermesd_after "$@" || exit $?
[ -n "$hermesd_chained" ] || exit 0
hermesd_ask pre-commit final "$@" </dev/null
