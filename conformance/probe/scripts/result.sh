#!/bin/sh
# Writes its result and exits 0: one its schema accepts when PROBE_REF is "valid", else one it
# refuses (no verdict).
set -eu
if [ "${PROBE_REF:-}" = valid ]; then
	printf '{"verdict":"ok"}\n' > "$AUTONOMY_RESULT"
else
	printf '{"summary":"no verdict"}\n' > "$AUTONOMY_RESULT"
fi
