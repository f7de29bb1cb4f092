#!/bin/sh
# Reports the workspace it runs in, then ends.
set -eu
mkdir -p "$AUTONOMY_DIR/.autonomy/state/probe"
pwd -P > "$AUTONOMY_DIR/.autonomy/state/probe/where-$AUTONOMY_SESSION.tmp"
mv "$AUTONOMY_DIR/.autonomy/state/probe/where-$AUTONOMY_SESSION.tmp" "$AUTONOMY_DIR/.autonomy/state/probe/where-$AUTONOMY_SESSION"
