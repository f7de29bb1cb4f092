#!/bin/sh
# Reports the params it was launched with, one file each, then waits to be listed and cancelled.
set -eu
out="${AUTONOMY_DIR:-$PWD}/.autonomy/state/probe/${AUTONOMY_SESSION:-run}"
mkdir -p "$out.tmp"
printenv PROBE_REF > "$out.tmp/PROBE_REF" || true
printenv PROBE_TEXT > "$out.tmp/PROBE_TEXT" || true
mv "$out.tmp" "$out"
exec sleep 600
