#!/bin/sh
# Commits a change to probe/$PROBE_REF.md (plain, or human: a human-required path) in its
# workspace, holding $PROBE_TEXT: the verdict its reviewer is to give (approve or reject), and
# delivers its result.
# On GitHub a proposer answers a work item: PROBE_REF is its number, and its title names the path.
set -eu
case "${PROBE_REF:-}" in
'' | *[!0-9]*) ;;
*)
	PROBE_REF=$(curl -fsS -H "Authorization: Bearer $GH_TOKEN" -H "Accept: application/vnd.github+json" \
		"${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY/issues/$PROBE_REF" | jq -r .title)
	;;
esac
case "$PROBE_REF" in
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
