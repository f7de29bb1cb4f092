#!/bin/sh
# Commits a change to probe/$PROBE_REF.md (plain, or human: a human-required path) in its
# workspace, holding $PROBE_TEXT: the verdict its reviewer is to give (approve or reject), and
# delivers its result.
set -eu
case "${PROBE_REF:-}" in
plain | human) ;;
*) echo "PROBE_REF must be plain or human" >&2; exit 2 ;;
esac
export GIT_AUTHOR_NAME=proposer GIT_AUTHOR_EMAIL=proposer@autonomy.invalid
export GIT_COMMITTER_NAME=proposer GIT_COMMITTER_EMAIL=proposer@autonomy.invalid
mkdir -p probe
printf '%s\n' "${PROBE_TEXT:-}" > "probe/$PROBE_REF.md"
git add -- "probe/$PROBE_REF.md"
git commit -qm "conformance probe: change probe/$PROBE_REF.md"
printf '{"status":"done","summary":"proposed probe/%s.md"}\n' "$PROBE_REF" > "$AUTONOMY_RESULT"
