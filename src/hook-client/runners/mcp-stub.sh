#!/bin/sh
# hermesd: starts `hermesd mcp`, the MCP server of this repository, for Claude Code, Codex,
# Cursor and Gemini CLI (their project MCP configs run `sh .hermes/mcp`). Written by
# `hermesd init --agents`; `hermesd init --uninstall` removes it. It names no path of any
# machine: in a clone where hermesd is set up (hermesd init --agents) it starts the hermesd
# that init recorded in the git dir; elsewhere it says so on stderr and exits 1, which the
# agent shows as a server that failed to start. stdout is the MCP protocol: nothing else
# is printed there.
case $0 in */*) hermesd_root=${0%/*}/.. ;; *) hermesd_root=.. ;; esac
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
if [ ! -f "$hermesd_cd/hermesd/mcp" ]; then
  printf '%s\n' "hermesd: the hermesd MCP server is not set up in this clone: run \`hermesd init --agents\` in it (install hermesd first: see its README), then restart the agent." >&2
  exit 1
fi
. "$hermesd_cd/hermesd/mcp"
