# hermesd's doorbell (POSIX sh, Linux): a hook asks the daemon without starting a client
# process. `hermesd init` puts this part in front of both hook runners. The daemon's side and
# the protocol: src/server/doorbell.ts.
#
# The request is two files in <git-dir>/hermesd/bell, written with builtins: <pid>.in (the
# body) and then <pid>=<kind>=<name>=<ms> (empty: "ready"), where <pid> is this shell's own
# pid (read from /proc/self/stat: $$ is the parent's in a subshell). Then SIGUSR2 to the
# daemon, whose pid and start time are in bell/daemon and are checked against /proc first, so
# a pid reused by another program is never signalled. The answer is a signal back: USR2 = go
# on, nothing to print; USR1 = the answer is in <pid>.a (the code on the first line, then what
# to print). A background sleep bounds the wait; the traps end it, so an answer that comes
# before `wait` begins is not missed. The daemon signals once, and never after <ms>.
#
# hermesd_ring <kind> <name> <ms> <seconds> [body]: the body, or this shell's stdin. Returns 0
# with hermesd_x (the answer's code, or u) and hermesd_ba (the answer's file, when it has text);
# 100 when there is no doorbell here (not Linux, no daemon, a read-only folder); 101 when no
# answer came in time. Once stdin is read, hermesd_bin names the file that holds it.
hermesd_ring() {
  hermesd_bd=$hermesd_rt/bell
  [ -f "$hermesd_bd/daemon" ] || return 100
  hermesd_dp=
  hermesd_ds=
  { read -r hermesd_dp hermesd_ds < "$hermesd_bd/daemon"; } 2>/dev/null
  hermesd_bl=
  { read -r hermesd_bl < "/proc/$hermesd_dp/stat"; } 2>/dev/null || return 100
  hermesd_bk=$1 hermesd_bn=$2 hermesd_bms=$3 hermesd_bs=$4
  hermesd_bb=${5-}
  hermesd_bw=$#
  hermesd_ba=
  # After "(comm) ": state ppid pgrp … ; the start time is the 20th of those fields. A killed
  # daemon nobody has reaped yet (a zombie) still has both.
  set -- ${hermesd_bl##*\) }
  [ -n "$hermesd_ds" ] && [ "${20}" = "$hermesd_ds" ] || return 100
  case $1 in Z | X) return 100 ;; esac
  hermesd_bl=
  { read -r hermesd_bl < /proc/self/stat; } 2>/dev/null
  hermesd_bq=$hermesd_bd/${hermesd_bl%% *}
  if [ "$hermesd_bw" -ge 5 ]; then
    { printf '%s' "$hermesd_bb" > "$hermesd_bq.in"; } 2>/dev/null || return 100
  else
    { while IFS= read -r hermesd_bl || [ -n "$hermesd_bl" ]; do printf '%s\n' "$hermesd_bl"; done > "$hermesd_bq.in"; } 2>/dev/null || return 100
    hermesd_bin=$hermesd_bq.in
  fi
  hermesd_x=
  sleep "$hermesd_bs" </dev/null >/dev/null 2>&1 &
  hermesd_bp=$!
  # Kept for the rest of this shell (a stray signal must not kill it); they end the sleep with
  # SIGPIPE, the one signal sh does not report ("Terminated") on stderr.
  trap 'hermesd_x=${hermesd_x:-0}; [ -n "$hermesd_bp" ] && kill -PIPE "$hermesd_bp" 2>/dev/null' USR2
  trap 'hermesd_x=${hermesd_x:-a}; [ -n "$hermesd_bp" ] && kill -PIPE "$hermesd_bp" 2>/dev/null' USR1
  if ! { : > "$hermesd_bq=$hermesd_bk=$hermesd_bn=$hermesd_bms"; } 2>/dev/null || ! kill -USR2 "$hermesd_dp" 2>/dev/null; then
    kill -PIPE "$hermesd_bp" 2>/dev/null
    hermesd_bp=
    return 100
  fi
  wait "$hermesd_bp" 2>/dev/null
  hermesd_bp=
  [ -n "$hermesd_x" ] || return 101
  if [ "$hermesd_x" = a ]; then
    hermesd_x=
    hermesd_ba=$hermesd_bq.a
    { read -r hermesd_x < "$hermesd_ba"; } 2>/dev/null
  fi
  return 0
}

# The answer's text (after its first line), printed as it is; its first line alone with -1.
hermesd_bell_text() {
  [ -n "$hermesd_ba" ] || return 0
  {
    read -r hermesd_bl
    while IFS= read -r hermesd_bl || [ -n "$hermesd_bl" ]; do
      printf '%s\n' "$hermesd_bl"
      [ "${1:-}" = -1 ] && break
    done
  } < "$hermesd_ba"
}
