#!/usr/bin/env bash
# docs/config-keys.md is generated from dataplane/config/config_keys.def by
# scripts/render-config-reference.sh. This renders it again into a temporary
# file and fails, showing the difference, when the committed file is not
# what the .def says today (a key added, a default or help text changed, or
# the file edited by hand).
# Usage: config_reference_test.sh REPO_ROOT
set -euo pipefail
root=${1:?usage: $0 REPO_ROOT}
committed=$root/docs/config-keys.md
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

bash "$root/scripts/render-config-reference.sh" "$tmp"
if [[ ! -f $committed ]]; then
  echo "FAIL: $committed does not exist"
  echo "make it with: bash scripts/render-config-reference.sh"
  exit 1
fi
if ! diff -u --label "docs/config-keys.md (committed)" --label "docs/config-keys.md (from config_keys.def)" \
    "$committed" "$tmp"; then
  echo "FAIL: docs/config-keys.md is not what dataplane/config/config_keys.def says"
  echo "regenerate it with: bash scripts/render-config-reference.sh   (then commit docs/config-keys.md)"
  exit 1
fi
echo "docs/config-keys.md matches dataplane/config/config_keys.def"
