#!/bin/sh
# Reviews the head it runs on: approves it, unless the file the head changed says reject. On
# GitHub the reviewer is dispatched with the pull request's number as PROBE_REF, on the default
# branch: it reviews that pull request's head, which it fetches.
set -eu
case "${PROBE_REF:-}" in
'' | *[!0-9]*) ;;
*)
	branch=$(curl -fsS -H "Authorization: Bearer $GH_TOKEN" -H "Accept: application/vnd.github+json" \
		"${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY/pulls/$PROBE_REF" | jq -r .head.ref)
	git fetch -q origin "refs/heads/$branch"
	git -c advice.detachedHead=false checkout -q FETCH_HEAD
	;;
esac
head=$(git rev-parse HEAD)
path=$(git diff-tree --no-commit-id --name-only -r HEAD | head -n 1)
verdict=approve
if [ "$(cat -- "$path")" = reject ]; then
	verdict=request-changes
fi
printf '{"verdict":"%s","summary":"conformance probe","headSha":"%s"}\n' "$verdict" "$head" > "$AUTONOMY_RESULT"
