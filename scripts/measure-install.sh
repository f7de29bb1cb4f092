#!/bin/sh
# measure-install.sh RUNS N... : wall seconds of a written install (autonomy compile into a fresh
# directory) beside its floor, cp -r of the same installed files (no fsync at all), on generated
# profiles of N actors, for gh-actions and local. RUNS runs of each, alternating which goes first,
# each into a fresh directory; prints every run, then the medians, their ratio, and the median of
# the ratios of each run's two (install ÷ cp -r run back to back: the figure a varying load moves least).
#
# BIN (default: a build of this checkout naming its commit) is the autonomy measured; BEFORE, if
# set, is another one measured in the same alternation (say the commit before a change).
# SETTLE (seconds, default 65) is the pause after deleting a group's trees: ext4 without a journal
# skips inodes freed in the last 60 s (360 s while their inode table is not written back; the
# script syncs first) when it allocates, which would slow the next group's first runs.
# Scratch goes under ${TMPDIR:-/tmp}/autonomy-install.$$ and is removed; it holds 2*RUNS+1 (3*RUNS+1
# with BEFORE)
# installed trees of one group at a time (about 90 MB each for 5,000 actors on gh-actions).
set -eu
runs=$1; shift
here=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TMPDIR:-/tmp}/autonomy-install.$$
settle=${SETTLE:-65}
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
(cd "$here" && go build -o "$tmp/genprofile" ./scripts/genprofile)
if [ -z "${BIN:-}" ]; then
	BIN=$tmp/autonomy
	(cd "$here" && go build -ldflags "-X github.com/autonomyhq/autonomy/internal/buildinfo.Commit=$(git rev-parse HEAD)" -o "$BIN" ./cmd/autonomy)
fi
t() { # t FILE CMD...: run CMD once after a sync, append its wall seconds to FILE
	file=$1; shift
	sync
	/usr/bin/time -f "%e" -o "$tmp/time" "$@" >/dev/null 2>"$tmp/err" || { echo "$* failed:"; cat "$tmp/err"; exit 1; }
	cat "$tmp/time" >>"$file"
}
median() { sort -n "$1" | awk '{v[NR]=$1} END {if (NR%2) print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
for n in "$@"; do
	p=$tmp/p$n
	"$tmp/genprofile" -actors "$n" -targets gh-actions,local "$p"
	for target in gh-actions local; do
		g=$tmp/g; mkdir "$g"
		: >"$g/install"; : >"$g/floor"; : >"$g/before"; : >"$g/ratio"
		mkdir "$g/src" && "$BIN" compile "$p" --target "$target" --dir "$g/src" >/dev/null 2>&1
		i=0
		while [ "$i" -lt "$runs" ]; do
			i=$((i + 1))
			mkdir "$g/i$i" "$g/b$i"
			if [ $((i % 2)) -eq 1 ]; then
				t "$g/install" "$BIN" compile "$p" --target "$target" --dir "$g/i$i"
				t "$g/floor" cp -r "$g/src" "$g/c$i"
				[ -z "${BEFORE:-}" ] || t "$g/before" "$BEFORE" compile "$p" --target "$target" --dir "$g/b$i"
			else
				[ -z "${BEFORE:-}" ] || t "$g/before" "$BEFORE" compile "$p" --target "$target" --dir "$g/b$i"
				t "$g/floor" cp -r "$g/src" "$g/c$i"
				t "$g/install" "$BIN" compile "$p" --target "$target" --dir "$g/i$i"
			fi
			echo "scale=3; $(tail -n1 "$g/install") / $(tail -n1 "$g/floor")" | bc >>"$g/ratio"
			echo "$n $target run=$i install=$(tail -n1 "$g/install") floor=$(tail -n1 "$g/floor") ${BEFORE:+before=$(tail -n1 "$g/before") }load=$(cut -d' ' -f1 /proc/loadavg)"
		done
		mi=$(median "$g/install"); mf=$(median "$g/floor")
		line="$n $target median install=$mi floor-cp=$mf ratio=$(echo "scale=2; $mi / $mf" | bc) paired-ratio=$(median "$g/ratio")"
		if [ -n "${BEFORE:-}" ]; then
			mb=$(median "$g/before")
			line="$line before=$mb before-ratio=$(echo "scale=2; $mb / $mf" | bc)"
		fi
		echo "$line load=$(cut -d' ' -f1-3 /proc/loadavg)"
		rm -rf "$g"
		sync
		sleep "$settle"
	done
	rm -rf "$p"
done
