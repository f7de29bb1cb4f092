#!/usr/bin/env bash
# Installs the pinned agent CLIs (internal/agentcli.Pins) with npm into the
# agent cache outside the repository: $AUTONOMY_AGENT_CACHE, default
# $HOME/.cache/autonomy-agents, one npm prefix per <preset>-<version>.
# Usage: scripts/install-agents.sh [preset...]   (default: every preset)
# An already installed version is left alone. Needs node and npm.
set -euo pipefail
cd "$(dirname "$0")/.."

cache="${AUTONOMY_AGENT_CACHE:-$HOME/.cache/autonomy-agents}"
# preset package version program; keep in step with internal/agentcli/agentcli.go (a test checks).
pins=(
  "codex @openai/codex 0.169.0 codex"
  "claude @anthropic-ai/claude-code 2.1.330 claude"
)

want=("$@")
command -v npm >/dev/null 2>&1 || { echo "install-agents: npm is not installed (install node and npm first)" >&2; exit 2; }
for pin in "${pins[@]}"; do
  read -r preset package version program <<<"$pin"
  if [ ${#want[@]} -gt 0 ] && [[ " ${want[*]} " != *" $preset "* ]]; then
    continue
  fi
  prefix="$cache/$preset-$version"
  bin="$prefix/node_modules/.bin/$program"
  if [ -x "$bin" ] && "$bin" --version 2>/dev/null | grep -qF "$version"; then
    echo "install-agents: $preset $version already in $prefix"
    continue
  fi
  echo "install-agents: npm install $package@$version into $prefix"
  mkdir -p "$prefix"
  npm install --no-audit --no-fund --prefix "$prefix" "$package@$version"
  "$bin" --version
done
