#!/bin/sh
# Reports the workspace it runs in, then ends with its result.
set -eu
dir="${AUTONOMY_DIR:-$PWD}/.autonomy/state/probe"
mkdir -p "$dir"
pwd -P > "$dir/where-${AUTONOMY_SESSION:-run}.tmp"
mv "$dir/where-${AUTONOMY_SESSION:-run}.tmp" "$dir/where-${AUTONOMY_SESSION:-run}"
printf '{"status":"done","summary":"reported its workspace"}\n' > "$AUTONOMY_RESULT"
