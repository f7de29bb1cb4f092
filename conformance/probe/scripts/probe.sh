#!/bin/sh
# Reports the params it was launched with, one file each, then waits to be listed and cancelled.
set -eu
out="${AUTONOMY_DIR:-$PWD}/.autonomy/state/probe/${AUTONOMY_SESSION:-run}"
mkdir -p "$out.tmp"
for name in PROBE_REF PROBE_TEXT PROBE_ACTOR PROBE_ROLE PROBE_KIND AUTONOMY_CAPABILITIES; do
	printenv "$name" > "$out.tmp/$name" || true
done
# What a prelaunch command left in the workspace for this session (field:prelaunch).
if [ -f .probe-prelaunch ]; then
	cp .probe-prelaunch "$out.tmp/PROBE_PRELAUNCH"
fi
mv "$out.tmp" "$out"
exec sleep 600
