#!/bin/sh
# Reports the params it was launched with, one file each, then waits to be listed and cancelled.
set -eu
out="${AUTONOMY_DIR:-$PWD}/.autonomy/state/probe/${AUTONOMY_SESSION:-run}"
mkdir -p "$out.tmp"
for name in PROBE_REF PROBE_TEXT PROBE_ACTOR PROBE_ROLE PROBE_KIND; do
	printenv "$name" > "$out.tmp/$name" || true
done
mv "$out.tmp" "$out"
exec sleep 600
