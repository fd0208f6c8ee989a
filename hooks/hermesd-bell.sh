# How a hook reaches the daemon (POSIX sh). `hermesd init` puts this part in front of both hook
# runners: the doorbell (Linux), asked first, and the socket curl talks to.
#
# The doorbell: a hook asks the daemon without starting a client process. The daemon's side and
# the protocol: src/server/doorbell.ts.
#
# Only when the daemon named in bell/daemon is alive (/proc), so a dead daemon costs no wait.
# The request is two files in <git-dir>/hermesd/bell, written with builtins: <id>.in (the
# body), then <id>=<kind>=<name>=<ms> (empty: "ready"; the daemon sees it through inotify).
# <id> is <pid>-<n>, the nth question of this shell ($$: never rung from a subshell, whose $$
# is its parent's). The answer is a signal to <pid>: USR2 = go on, nothing to print; USR1 =
# the answer is in <id>.a (the code on the first line, then what to print). A background sleep,
# started once the marker is made, bounds the wait; the traps end it, and an answer that comes
# before the sleep or before `wait` begins is not missed. The daemon signals once, and never
# after <ms>.

# cat and sleep by the paths init baked (HERMESD_CAT, HERMESD_SLEEP: no PATH search per call),
# by name when those are gone.
hermesd_cat=${HERMESD_CAT:-cat}
hermesd_sleep=${HERMESD_SLEEP:-sleep}

# Whether the doorbell can be rung here: 0, or 100 (HERMESD_DOORBELL=0, no daemon, not Linux).
hermesd_bell_up() {
  # HERMESD_DOORBELL=0: the socket (curl), as where there is no /proc.
  [ "${HERMESD_DOORBELL:-1}" = 0 ] && return 100
  hermesd_bd=$hermesd_rt/bell
  [ -f "$hermesd_bd/daemon" ] || return 100
  hermesd_dp=
  hermesd_bv=
  { read -r hermesd_dp hermesd_bl hermesd_bv < "$hermesd_bd/daemon"; } 2>/dev/null
  # The protocol this file speaks (1); a daemon of another version is asked over the socket.
  [ "$hermesd_bv" = 1 ] || return 100
  # Alive, and not a zombie (it has no program any more). A pid recycled by another program
  # costs one wait for the bound: nothing is sent to it.
  case $hermesd_dp in '' | *[!0-9]*) return 100 ;; esac
  [ -e "/proc/$hermesd_dp/exe" ] || return 100
  # The nth question of this shell: its files are its own.
  hermesd_bseq=$((${hermesd_bseq:-0} + 1))
  hermesd_bq=$hermesd_bd/$$-$hermesd_bseq
  return 0
}

# hermesd_ring_once <kind> <name> <body>: a question that wants no answer (evidence): its files
# are left for the daemon (<ms> 0: it answers nobody), nothing forks, nobody waits. 0, or 100.
hermesd_ring_once() {
  hermesd_bell_up || return 100
  { printf '%s' "$3" > "$hermesd_bq.in"; } 2>/dev/null || return 100
  { : > "$hermesd_bq=$1=$2=0"; } 2>/dev/null || return 100
  return 0
}

# hermesd_ring <kind> <name> <ms> <seconds> [body]: the body, or this shell's stdin. Returns 0
# with hermesd_x (the answer's code, or u) and hermesd_ba (the answer's file, when it has text);
# 100 when there is no doorbell here (not Linux, no daemon, a read-only folder); 101 when no
# answer came in time. Once stdin is read, hermesd_bin names the file that holds it. Stdin is
# read with `read` when hermesd_small is 1, else with cat.
hermesd_ring() {
  hermesd_bell_up || return 100
  hermesd_bk=$1 hermesd_bn=$2 hermesd_bms=$3 hermesd_bs=$4
  hermesd_bb=${5-}
  hermesd_bw=$#
  hermesd_ba=
  if [ "$hermesd_bw" -ge 5 ]; then
    { printf '%s' "$hermesd_bb" > "$hermesd_bq.in"; } 2>/dev/null || return 100
  elif [ "${hermesd_small:-}" = 1 ]; then
    # A small payload (a command, a path): read by the shell itself, every line of it, with no
    # process started. The file is made first, so a folder that cannot take it leaves stdin
    # unread for curl.
    { : > "$hermesd_bq.in"; } 2>/dev/null || return 100
    hermesd_bb=
    while IFS= read -r hermesd_bl; do hermesd_bb=$hermesd_bb$hermesd_bl'
'; done
    printf '%s' "$hermesd_bb$hermesd_bl" > "$hermesd_bq.in"
    hermesd_bb=
    hermesd_bin=$hermesd_bq.in
  else
    # cat: one process, but `read` costs a system call per byte (a Write of 100 KB: tenths of a
    # second). In the C locale it starts without loading the user's locale (~0.15 ms a call).
    [ -x "$hermesd_cat" ] || hermesd_cat=cat
    { LC_ALL=C "$hermesd_cat" > "$hermesd_bq.in"; } 2>/dev/null || return 100
    hermesd_bin=$hermesd_bq.in
  fi
  hermesd_x=
  hermesd_bp=
  # Kept for the rest of this shell (a stray signal must not kill it); they end the sleep with
  # SIGPIPE, the one signal sh does not report ("Terminated") on stderr.
  trap 'hermesd_x=${hermesd_x:-0}; [ -n "$hermesd_bp" ] && kill -PIPE "$hermesd_bp" 2>/dev/null' USR2
  trap 'hermesd_x=${hermesd_x:-a}; [ -n "$hermesd_bp" ] && kill -PIPE "$hermesd_bp" 2>/dev/null' USR1
  { : > "$hermesd_bq=$hermesd_bk=$hermesd_bn=$hermesd_bms"; } 2>/dev/null || return 100
  # The bound's sleep starts once the question is out, while the daemon answers it; an answer
  # that came first needs none.
  if [ -z "$hermesd_x" ]; then
    [ -x "$hermesd_sleep" ] || hermesd_sleep=sleep
    LC_ALL=C "$hermesd_sleep" "$hermesd_bs" </dev/null >/dev/null 2>&1 &
    hermesd_bp=$!
    # An answer that came while the sleep was starting found no sleep to end.
    [ -n "$hermesd_x" ] && kill -PIPE "$hermesd_bp" 2>/dev/null
    wait "$hermesd_bp" 2>/dev/null
    hermesd_bp=
  fi
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

# The live daemon's socket, in hermesd_sock, from daemon.json ("socket": "<path>" on a line of
# its own; the daemon writes it first, so one or two lines are read). 0, or 100: none recorded,
# none there, or a path JSON had to escape (the Node fallback reads that properly).
hermesd_socket() {
  hermesd_sock=
  if [ -f "$hermesd_rt/daemon.json" ]; then
    while IFS= read -r hermesd_l; do
      case $hermesd_l in
        *'"socket": "'*)
          hermesd_sock=${hermesd_l#*'"socket": "'}
          hermesd_sock=${hermesd_sock%\"*}
          break
          ;;
      esac
    done < "$hermesd_rt/daemon.json"
  fi
  case $hermesd_sock in *\\*) hermesd_sock= ;; esac
  [ -n "$hermesd_sock" ] && [ -S "$hermesd_sock" ] || return 100
}
