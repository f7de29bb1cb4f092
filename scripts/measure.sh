#!/bin/sh
# measure.sh BIN N...: whole-process CPU (user+sys) and wall seconds of autonomy BIN on generated
# profiles of N actors, beside the floors: yaml.v3 decoding the same ir.yml into nodes (validate and
# dry compile), and copying the same installed files with no fsync (cp -r, a written compile).
# Prints one line per measurement: N, what, user, sys, cpu, wall, the 1-minute load average.
# Needs /usr/bin/time; scratch goes under ${TMPDIR:-/tmp}/autonomy-measure.$$ and is removed.
set -eu
bin=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}/autonomy-measure.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && go build -o "$tmp/yamlfloor" ./scripts/yamlfloor && go build -o "$tmp/genprofile" ./scripts/genprofile)
t() { # t N WHAT CMD...: run CMD once, print its times
	n=$1; what=$2; shift 2
	/usr/bin/time -f "%U %S %e" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { echo "$what failed:"; cat "$tmp/err"; exit 1; }
	read -r u s e <"$tmp/time"
	echo "$n $what user=$u sys=$s cpu=$(echo "$u + $s" | bc) wall=$e load=$(cut -d' ' -f1 /proc/loadavg)"
}
for n in "$@"; do
	p=$tmp/p$n
	"$tmp/genprofile" -actors "$n" "$p"
	t "$n" floor-yaml "$tmp/yamlfloor" "$p/ir.yml"
	t "$n" validate "$bin" validate "$p"
	for target in gh-actions local; do
		mkdir "$tmp/out-$target"
		t "$n" "dry-compile-$target" "$bin" compile "$p" --target "$target" --dir "$tmp/out-$target" --dry-run
		sync
		t "$n" "write-compile-$target" "$bin" compile "$p" --target "$target" --dir "$tmp/out-$target"
		sync
		t "$n" "floor-cp-nofsync-$target" cp -r "$tmp/out-$target" "$tmp/cp-$target"
		rm -rf "$tmp/out-$target" "$tmp/cp-$target"
	done
	rm -rf "$p"
done
