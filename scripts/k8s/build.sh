#!/usr/bin/env bash
# Builds the Kubernetes control plane the k8s tests run against, from the Go module proxy, into a
# cache outside the repository keyed on the versions, and prints that directory. A directory that
# holds a complete build (its .complete marker) is reused as it is: the cached run takes seconds.
#
#   etcd, kube-apiserver, kube-controller-manager, kube-scheduler: k8s.io/kubernetes $K8S, built
#     in a scratch module that requires it (never this repository's go.mod, which must not);
#   kwok $KWOK, which fakes a kubelet, and kwok-stages.yaml, the stages it plays (from its module).
#
# Cold: about 8 minutes and 3 GB of memory on 2 cores. Usage: scripts/k8s/build.sh
set -euo pipefail
K8S=${K8S:-v1.37.2}
KWOK=${KWOK:-v0.8.0}
STAGING=v0.${K8S#v1.}
CACHE=${AUTONOMY_K8S_CACHE:-$HOME/.cache/autonomy/k8s}
OUT=$CACHE/$K8S-kwok-$KWOK
if [ -f "$OUT/.complete" ]; then
  echo "$OUT"
  exit 0
fi
SRC=$(mktemp -d)
trap 'rm -rf "$SRC"' EXIT
mkdir -p "$OUT"
cd "$SRC"
go mod download -json "k8s.io/kubernetes@$K8S" >/dev/null
KMOD=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$K8S.mod
{
  echo 'module local/k8sbin'
  echo
  echo "go $(awk '/^go /{print $2}' "$KMOD")"
  echo
  grep '^godebug' "$KMOD" || true
  echo "require k8s.io/kubernetes $K8S"
  echo
  # k8s.io/kubernetes replaces its staging modules with ./staging/...: the published ones instead.
  echo 'replace ('
  grep -E '=> \./staging/' "$KMOD" | awk -v V="$STAGING" '{print "\t"$1" => "$1" "V}'
  echo ')'
} > go.mod
cat > tools.go <<'TOOLS'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "k8s.io/kubernetes/cmd/kube-apiserver/app"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	_ "k8s.io/kubernetes/cmd/kube-scheduler/app"
)
TOOLS
go mod tidy >/dev/null 2>&1
MAJ=${K8S#v}; MAJ=${MAJ%%.*}; MIN=${K8S#v*.}; MIN=${MIN%%.*}
# Without the version ldflags the binaries report v0.0.0-master.
LDF="-s -w -X k8s.io/component-base/version.gitVersion=$K8S -X k8s.io/component-base/version.gitMajor=$MAJ -X k8s.io/component-base/version.gitMinor=$MIN -X k8s.io/component-base/version.gitTreeState=clean -X k8s.io/client-go/pkg/version.gitVersion=$K8S"
go build -trimpath -ldflags="$LDF" -o "$OUT/" \
  k8s.io/kubernetes/cmd/kube-apiserver \
  k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler \
  go.etcd.io/etcd/server/v3
mv "$OUT/server" "$OUT/etcd" # go build names etcd's binary after .../server/v3
GOBIN="$OUT" go install -trimpath -ldflags='-s -w' "sigs.k8s.io/kwok/cmd/kwok@$KWOK"
# kwok exits with "no stages found" without them: the fast set its module ships.
KD=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK/kustomize/stage
for f in node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
  pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml; do
  echo '---'
  cat "$KD/$f"
done > "$OUT/kwok-stages.yaml"
touch "$OUT/.complete"
echo "$OUT"
