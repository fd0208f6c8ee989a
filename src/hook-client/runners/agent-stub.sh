#!/bin/sh
# hermesd: the hook command of Claude Code, Codex, Cursor and Gemini CLI in this repository
# (their hook configs run `.hermes/agent-hook <agent> <event> [small]`, or source it
# after `set -- <agent> <event> [small]`). Written by
# `hermesd init --agents`; `hermesd init --uninstall` removes it. In a clone where hermesd
# is set up (hermesd init --agents), it hands the call to hermesd; elsewhere it does
# nothing, says so at session start, and the agent goes on. Changed as rarely as the hook commands (an agent asks to
# trust a hook again when its command changes).
# Sourced by the hook command (Claude Code, Gemini CLI), it is told the root; run, it finds
# the root from its own path.
[ -n "${hermesd_root:-}" ] || case $0 in */*) hermesd_root=${0%/*}/.. ;; *) hermesd_root=.. ;; esac
hermesd_gd=$hermesd_root/.git
if [ -f "$hermesd_gd" ]; then
  read -r hermesd_l < "$hermesd_gd"
  hermesd_gd=${hermesd_l#gitdir: }
  case $hermesd_gd in /*) ;; *) hermesd_gd=$hermesd_root/$hermesd_gd ;; esac
fi
hermesd_cd=$hermesd_gd
if [ -f "$hermesd_gd/commondir" ]; then
  read -r hermesd_l < "$hermesd_gd/commondir"
  case $hermesd_l in /*) hermesd_cd=$hermesd_l ;; *) hermesd_cd=$hermesd_gd/$hermesd_l ;; esac
fi
if [ ! -f "$hermesd_cd/hermesd/agent-hook" ]; then
  # Not "unavailable": hermesd is not set up here. Said once a session, at its start.
  case ${2:-} in SessionStart | sessionStart) echo "hermesd: not set up in this clone, so its hooks check nothing here (to set it up: hermesd init --agents)" >&2 ;; esac
  exit 0
fi
. "$hermesd_cd/hermesd/agent-hook"
