#!/usr/bin/env bash
# Renders the chart's NOTES.txt (what `helm install` prints) without a cluster:
# helm only renders NOTES during install, so a temporary copy of the chart gets
# a template that runs NOTES.txt through `tpl`. Asserts the operator is told how
# to check health and read stats with kubectl exec, and the value-dependent hints.
set -euo pipefail

root=${1:?usage: check-notes.sh REPO_ROOT}
helm=${SLUICE_HELM:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r "$root/helm/sluice" "$tmp/"
cp "$tmp/sluice/templates/NOTES.txt" "$tmp/sluice/notes-under-test.txt"
echo 'notes: {{ tpl (.Files.Get "notes-under-test.txt") . | toJson }}' >"$tmp/sluice/templates/notes-under-test.yaml"

notes() {
  "$helm" template sluice "$tmp/sluice" --namespace kube-system --kube-version 1.34.0 "$@" \
    --show-only templates/notes-under-test.yaml |
    node --input-type=module -e 'import { parse } from "yaml"; let s = ""; for await (const c of process.stdin) s += c; process.stdout.write(parse(s).notes);'
}

fails=0
expect() { # expect yes|no TEXT NOTES-FILE LABEL
  if grep -qF -- "$2" "$3"; then found=yes; else found=no; fi
  local what=contains; [[ $1 == yes ]] || what=lacks
  if [[ $found == "$1" ]]; then echo "ok   $4 $what \"$2\""; else echo "FAIL $4: expected it to be $what \"$2\""; fails=$((fails + 1)); fi
}
cd "$(dirname "${BASH_SOURCE[0]}")"
notes >"$tmp/default.txt"
notes -f "$tmp/sluice/ci/production-values.yaml" >"$tmp/production.txt"

for f in default production; do
  expect yes "kubectl -n kube-system exec ds/sluice -c sluiced -- sluicectl stats" "$tmp/$f.txt" "$f"
  expect yes "kubectl -n kube-system exec ds/sluice -c sluiced -- sluicectl health" "$tmp/$f.txt" "$f"
  expect yes "k8s.v1.cni.cncf.io/networks: kube-system/sluice-vhost" "$tmp/$f.txt" "$f"
  expect yes "helm test sluice -n kube-system --logs" "$tmp/$f.txt" "$f"
done
expect yes "no-huge mode" "$tmp/default.txt" default
expect no "no-huge mode" "$tmp/production.txt" production
expect yes "sriov.pools is empty" "$tmp/default.txt" default
expect no "sriov.pools is empty" "$tmp/production.txt" production
expect yes "Every node uses pod CIDR 10.244.0.0/24" "$tmp/default.txt" default
expect no "Every node uses pod CIDR" "$tmp/production.txt" production
[[ $fails -eq 0 ]] || { echo "--- default NOTES:"; cat "$tmp/default.txt"; exit 1; }
echo "NOTES checks passed"
