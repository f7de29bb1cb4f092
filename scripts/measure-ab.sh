#!/bin/sh
# measure-ab.sh RUNS N... : CPU seconds (user+sys) of validate and of a dry compile for
# gh-actions and for local, of two autonomy binaries alternating (BEFORE and BIN), beside the
# floor (yamlfloor: yaml.v3 decoding the same ir.yml into nodes), on generated profiles of N
# actors: RUNS runs of each; prints the medians, their range and peak RSS, and each median ÷ the
# floor's. On a shared machine compare the two binaries' figures, taken in the same alternation.
set -eu
runs=$1; shift
: "${BIN:?BIN=the autonomy to measure}" "${BEFORE:?BEFORE=the autonomy to compare with}"
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}/autonomy-ab.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && go build -o "$tmp/genprofile" ./scripts/genprofile && go build -o "$tmp/yamlfloor" ./scripts/yamlfloor)
t() { # t FILE CMD...: append CMD's CPU seconds and peak RSS (KB) to FILE
	file=$1; shift
	/usr/bin/time -f "%U %S %M" -o "$tmp/time" "$@" >/dev/null 2>&1 || true
	awk '{print $1 + $2, $3}' "$tmp/time" >>"$file"
}
median() { sort -n "$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
show() { sort -n "$1" | awk -v m="$(median "$1")" '{v[NR] = $1; if ($2 > r) r = $2} END {printf "%.2f (%s..%s) %d MB", m, v[1], v[NR], r / 1024}'; }
for n in "$@"; do
	p=$tmp/p$n
	"$tmp/genprofile" -actors "$n" -targets gh-actions,local "$p" >/dev/null
	rm -f "$tmp"/r.*
	i=0
	while [ "$i" -lt "$runs" ]; do
		i=$((i + 1))
		t "$tmp/r.floor" "$tmp/yamlfloor" "$p/ir.yml"
		for b in before after; do
			bin=$BIN; [ "$b" = after ] || bin=$BEFORE
			t "$tmp/r.validate.$b" "$bin" validate "$p"
			t "$tmp/r.gh.$b" "$bin" compile "$p" --target gh-actions --dir "$tmp/out" --dry-run
			t "$tmp/r.local.$b" "$bin" compile "$p" --target local --dir "$tmp/out" --dry-run
		done
	done
	floor=$(median "$tmp/r.floor")
	echo "$n floor $(show "$tmp/r.floor") load=$(cut -d' ' -f1-3 /proc/loadavg)"
	for what in validate gh local; do
		for b in before after; do
			echo "$n $what $b $(show "$tmp/r.$what.$b") ÷floor=$(echo "scale=2; $(median "$tmp/r.$what.$b") / $floor" | bc)"
		done
	done
done
