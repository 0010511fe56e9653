#!/usr/bin/env bash
# The install tests (label `install`): team as a user installs it.
# Usage: tests/install/run.sh package|completion|man BUILD_DIR
#   package     cpack makes team_<version>_<arch>.deb from BUILD_DIR; its declared dependencies
#               are installed on this host; dpkg installs it into a fresh root (--root: no
#               container, no chroot, root or not); the installed team creates a team, spawns a
#               shell agent and force-kills it; dpkg --purge leaves no file. The systemd user unit
#               team-resume.service is in it, naming the installed binary, and enabled nowhere
#               (systemd-analyze verify reads it, when installed). Also `cmake --install
#               --prefix`. Each run has its own TEAM_HOME and tmux server, removed at the end.
#   completion  the bash script of `team completion bash`, sourced and driven as bash drives
#               it (COMP_WORDS, COMP_CWORD): the verbs, kill-agent's options, a live team's agents
#               and tasks; the time of one `team __complete` against that home.
#   man         the man page of the build renders with `man -l` without a warning, and names every
#               command, the exit codes, the environment and the files.
set -euo pipefail
mode=$1
build=$(cd "$2" && pwd)
team="$build/team"
tmp=$(mktemp -d /tmp/team-install.XXXXXX)
home="$tmp/home"
export TEAM_HOME="$home"
unset TEAM_NAME TEAM_AGENT_ID

cleanup() {
  # The home's tmux server, if a failure left it running; then every file of the test.
  [ -S "$home/tmux.sock" ] && tmux -S "$home/tmux.sock" kill-server 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}
check() {  # check DESCRIPTION COMMAND...: fails the test unless COMMAND succeeds
  local what=$1
  shift
  "$@" || fail "$what"
  echo "ok: $what"
}
has_line() {  # has_line LINE TEXT: TEXT has LINE as a whole line
  grep -qxF -- "$1" <<<"$2"
}

# Whether the home's tmux server has gone (reaped after its last pane), waiting up to 5 s.
server_gone() {
  local i
  for i in $(seq 50); do
    tmux -S "$home/tmux.sock" list-sessions >/dev/null 2>&1 || return 0
    sleep 0.1
  done
  return 1
}

# A team "web" with a live shell agent in it, by the given binary.
live_team() {
  local bin=$1
  "$bin" create web --cwd "$tmp" --json >/dev/null
  "$bin" spawn worker-1 --json -- bash >/dev/null
}

package_test() {
  local version arch deb root
  version=$("$team" --version)
  arch=$(dpkg --print-architecture)
  cpack --config "$build/CPackConfig.cmake" -G DEB -B "$tmp/pkg" >"$tmp/cpack.log" 2>&1 ||
    { cat "$tmp/cpack.log"; fail "cpack made no package"; }
  deb="$tmp/pkg/team_${version}_${arch}.deb"
  check "the package is named team_${version}_${arch}.deb" test -f "$deb"

  # What it holds, and what it needs.
  local contents depends dep name
  contents=$(dpkg-deb -c "$deb" | awk '{print $6}')
  for f in ./usr/bin/team ./usr/share/man/man1/team.1.gz \
    ./usr/share/bash-completion/completions/team ./usr/share/zsh/vendor-completions/_team \
    ./usr/lib/systemd/user/team-resume.service; do
    check "the package holds $f" has_line "$f" "$contents"
  done
  # The unit is off until a person enables it: no link into a target's .wants, and no maintainer
  # script that would enable it (or anything else) at install.
  check "the package enables no unit (no .wants link)" \
    test -z "$(grep -E '\.wants/|^\./etc/systemd/' <<<"$contents" || true)"
  check "the package has no maintainer script" \
    test -z "$(dpkg-deb --ctrl-tarfile "$deb" | tar -t | grep -E '(pre|post)(inst|rm)$' || true)"
  depends=$(dpkg-deb -f "$deb" Depends)
  echo "Depends: $depends"
  for name in libc6 tmux git; do
    check "it depends on $name" grep -qE "(^|, )$name( |,|$)" <<<"$depends"
  done
  # A fresh root has no tmux or git of its own: each declared dependency must be installed on
  # this host, whose libraries and programs the installed team uses.
  IFS=',' read -ra deps <<<"$depends"
  for dep in "${deps[@]}"; do
    name=$(awk '{print $1}' <<<"$dep")
    check "dependency $name is installed on the host" \
      test "$(dpkg-query -W -f='${Status}' "$name" 2>/dev/null)" = "install ok installed"
  done

  # Into a fresh root, as dpkg installs it anywhere.
  root="$tmp/root"
  mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/triggers"
  touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
  local force=(--force-depends)
  [ "$(id -u)" -ne 0 ] && force+=(--force-not-root)
  dpkg --root="$root" "${force[@]}" -i "$deb" >"$tmp/dpkg.log" 2>&1 ||
    { cat "$tmp/dpkg.log"; fail "dpkg could not install the package"; }
  local bin="$root/usr/bin/team"
  check "the installed team says its version" test "$("$bin" --version)" = "$version"
  unit_test "$root/usr/lib/systemd/user/team-resume.service" /usr/bin/team
  check "the installed team completes its verbs" \
    grep -q '^kill-agent' <("$bin" __complete -- "k")

  # A team, a shell agent, a force kill: the installed binary alone (its panes run it too).
  live_team "$bin"
  local agent
  agent=$("$bin" agents --json)
  check "the installed team spawned a live agent" grep -q '"name":"worker-1"' <<<"$agent"
  local killed
  killed=$("$bin" kill-agent worker-1 --force --grace 2s --json)
  check "kill-agent --force ended it" grep -q '"phase":"force_killed"' <<<"$killed"
  check "kill-agent --force succeeded" grep -q '"success":true' <<<"$killed"
  check "no tmux server is left for the home" server_gone

  # Removed, and purged: nothing of it left in the root.
  dpkg --root="$root" "${force[@]}" --purge team >"$tmp/dpkg.log" 2>&1 ||
    { cat "$tmp/dpkg.log"; fail "dpkg could not purge the package"; }
  local left
  left=$(cd "$root" && find . -mindepth 1 ! -path './var' ! -path './var/lib' \
    ! -path './var/lib/dpkg' ! -path './var/lib/dpkg/*')
  check "dpkg --purge left nothing in the root" test -z "$left"
  check "dpkg knows nothing of team any more" \
    test -z "$(find "$root/var/lib/dpkg/info" -name 'team.*')"

  # cmake --install, the other way in.
  cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
  for f in bin/team share/man/man1/team.1.gz share/bash-completion/completions/team \
    share/zsh/vendor-completions/_team share/doc/team/guide.md; do
    check "cmake --install --prefix puts $f" test -e "$tmp/prefix/$f"
  done
  check "the installed copy runs" test "$("$tmp/prefix/bin/team" --version)" = "$version"
  unit_test "$tmp/prefix/lib/systemd/user/team-resume.service" "$tmp/prefix/bin/team"
  # Here its ExecStart names a binary that exists: systemd reads the unit as it would at login
  # (as a system unit: a user manager is not needed to check the file; man pages not looked up).
  if command -v systemd-analyze >/dev/null; then
    local said
    said=$(systemd-analyze verify --man=no "$tmp/prefix/lib/systemd/user/team-resume.service" 2>&1) ||
      { echo "$said"; fail "systemd-analyze verify refused the unit"; }
    [ -z "$said" ] || echo "$said" >&2
    check "systemd-analyze verify reads the unit without a word" test -z "$said"
  else
    echo "skip: systemd-analyze is not installed, the unit is not verified"
  fi
}

# unit_test FILE BINARY: the user unit of `team resume --all`, installed at FILE, starts BINARY.
unit_test() {
  local unit=$1 bin=$2 text
  check "the unit is installed at $unit" test -f "$unit"
  text=$(cat "$unit")
  check "its ExecStart is $bin resume --all" has_line "ExecStart=$bin resume --all" "$text"
  check "it is a oneshot" has_line "Type=oneshot" "$text"
  check "it is wanted by default.target once enabled" has_line "WantedBy=default.target" "$text"
  check "no @VARIABLE@ is left in it" test -z "$(grep '@[A-Z_]*@' <<<"$text" || true)"
}

# Completes as bash does at a TAB: COMP_WORDS and COMP_CWORD set, the function called; prints
# COMPREPLY, one a line. The words are the ones after `team`, the last the one being typed.
complete_words() {
  COMP_WORDS=(team "$@")
  COMP_CWORD=$#
  COMPREPLY=()
  _team
  printf '%s\n' "${COMPREPLY[@]}"
}

completion_test() {
  export PATH="$build:$PATH"  # `team`, as the script runs it
  # shellcheck disable=SC1090
  source <(team completion bash)
  check "complete -p names the function" test "$(complete -p team)" = "complete -F _team team"

  local out
  out=$(complete_words "")
  for verb in create spawn kill-agent task shell doctor completion serve mcp; do
    check "the verbs include $verb" has_line "$verb" "$out"
  done
  check "hidden commands are not offered" test -z "$(grep '^__' <<<"$out" || true)"
  out=$(complete_words sh)
  check "'sh' completes to shell and shutdown" test "$(sort <<<"$out")" = $'shell\nshutdown'
  out=$(complete_words shell "")
  for verb in start list kill wait release; do
    check "shell's verbs include $verb" has_line "$verb" "$out"
  done
  out=$(complete_words task cl)
  check "'task cl' completes to claim" test "$out" = "claim"

  out=$(complete_words kill-agent -)
  for opt in --force --reason --wait --timeout --force-after --grace --reassign-to --team --json; do
    check "kill-agent's options include $opt" has_line "$opt" "$out"
  done
  out=$(complete_words kill-agent --force-)
  check "'--force-' completes to --force-after" test "$out" = "--force-after"
  out=$(complete_words shell kill x --signal "")
  check "--signal offers the signals" test "$out" = $'SIGTERM\nSIGINT\nSIGKILL'

  # Nothing in the home yet: no candidates, and no home made by pressing TAB.
  out=$(complete_words kill-agent "")
  check "no agents before there is a home" test -z "$out"
  check "completing made no home" test ! -e "$home"

  live_team team
  team spawn worker-2 --json -- bash >/dev/null
  team task add "write the parser" --json >/dev/null
  out=$(complete_words kill-agent "")
  check "kill-agent offers worker-1 of the live team" has_line worker-1 "$out"
  check "kill-agent offers worker-2 of the live team" has_line worker-2 "$out"
  out=$(complete_words kill-agent worker-1 --reassign-to w)
  check "--reassign-to offers the agents" test "$out" = $'worker-1\nworker-2'
  out=$(complete_words --team "")
  check "--team offers the team" test "$out" = "web"
  out=$(complete_words task claim "")
  check "task claim offers the task" test "$out" = "1"
  out=$(complete_words spawn w3 -- ba)
  check "after -- a program is completed" has_line bash "$out"

  # The time of one completion that reads the home (the agents of the team), as a TAB costs.
  local start end ms
  start=$(date +%s%N)
  for _ in 1 2 3 4 5 6 7 8 9 10; do team __complete -- kill-agent "" >/dev/null; done
  end=$(date +%s%N)
  ms=$(((end - start) / 10000000))
  # (A figure, not a check: tests time nothing; bench/run has the quiet machine's figure.)
  echo "figure: team __complete of a team's agents: ${ms} ms (mean of 10)"

  # zsh: the script of `team completion zsh` driven as zsh's completion system drives it (words
  # and CURRENT set, _describe and _command_names standing in for compsys, which prints nothing
  # outside an interactive TAB): the candidates it hands over, from the same home.
  zsh_complete() {  # zsh_complete WORD...: the candidates (value:description) for the last word
    zsh -f -c '
      _describe() { print -l -- "${(@P)4}"; }
      _files() { print ":files"; }
      _command_names() { print ":programs"; }
      compdef() { :; }
      eval "$(team completion zsh)"
      words=(team "$@"); CURRENT=${#words}
      _team' zsh "$@"
  }
  out=$(zsh_complete kill-agent "")
  check "zsh: kill-agent offers worker-1 with its description" grep -q '^worker-1' <<<"$out"
  out=$(zsh_complete kill-agent --force-)
  check "zsh: '--force-' offers --force-after" grep -q '^--force-after:' <<<"$out"
  out=$(zsh_complete sh)
  check "zsh: 'sh' offers shell and shutdown" test "$(cut -d: -f1 <<<"$out" | sort | tr '\n' ' ')" = "shell shutdown "
  out=$(zsh_complete spawn w3 -- "")
  check "zsh: after -- the programs" test "$out" = ":programs"

  team kill-agent worker-1 --force --grace 2s --json >/dev/null
  team kill-agent worker-2 --force --grace 2s --json >/dev/null

  local zsh_script
  zsh_script=$(team completion zsh)
  check "the zsh script is a #compdef file" test "$(head -n 1 <<<"$zsh_script")" = "#compdef team"
  if command -v zsh >/dev/null; then
    check "the zsh script parses" zsh -n <<<"$zsh_script"
  fi
  check "an unknown shell is a usage error" \
    bash -c '"$0" completion fish >/dev/null 2>&1; test $? -eq 2' "$team"
}

man_test() {
  local page="$build/generated/team.1" warnings text
  check "the build wrote the man page" test -s "$page"
  warnings=$(MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null)
  [ -z "$warnings" ] || echo "$warnings" >&2
  check "man -l renders it without a warning" test -z "$warnings"
  text=$(MANWIDTH=80 man -l "$page" 2>/dev/null | col -b)
  for section in NAME SYNOPSIS "GLOBAL OPTIONS" COMMANDS "EXIT STATUS" ENVIRONMENT FILES; do
    check "it has the section $section" has_line "$section" "$text"
  done
  local cmd
  while IFS=$'\t' read -r cmd _; do
    check "it documents team $cmd" grep -q "^   team $cmd\b" <<<"$text"
  done < <("$team" __complete -- "")
  for word in TEAM_HOME TEAM_AGENT_ID TEAM_AGENT_COLOR tmux.sock team.db 124 --reassign-to; do
    check "it names $word" grep -qF -- "$word" <<<"$text"
  done
  check "it says the version" grep -qF "team $("$team" --version)" <<<"$text"
}

case "$mode" in
package) package_test ;;
completion) completion_test ;;
man) man_test ;;
*) fail "unknown mode '$mode' (package, completion or man)" ;;
esac
echo "passed: $mode"
