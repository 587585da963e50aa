#!/bin/sh
# Runs node_churn for 1000, 2500 and 5000 Nodes and appends its table to
# bench/kube/results/<UTC date>/summary.md. Root (sluiced's EAL), python3
# and openssl (the fake API server). Usage: node_churn.sh [BUILD_DIR] [LABEL]
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
label=${2:-node_churn}
out=$here/results/$(date -u +%Y-%m-%d)
mkdir -p "$out"
"$build/bench/kube/node_churn" --counts 1000,2500,5000 --burst 1000 --label "$label" --out "$out/summary.md" \
  | tee -a "$out/raw.jsonl"
