#!/usr/bin/env bash
# Starts the real sluiced with the config a plain-manifest install gets
# (manifests/sluice.yaml, default values: no-huge, one PMD) and runs the
# DaemonSet's own probe command against it: the probe must pass once sluiced is
# up and fail once it has stopped. Only the socket paths (and a private EAL
# file prefix, so parallel tests cannot collide) differ from a node.
set -euo pipefail

sluiced=${1:?usage: check-sluiced-start.sh SLUICED SLUICECTL REPO_ROOT}
sluicectl=${2:?}
root=${3:?}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
tmp=$(mktemp -d)
pid=
cleanup() {
  [[ -z $pid ]] || kill "$pid" 2>/dev/null || true
  [[ -z $pid ]] || wait "$pid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# The ConfigMap's default.json and the readiness probe's command, from the
# committed manifests.
(cd "$here" && node --input-type=module -e '
  import { readFileSync, writeFileSync } from "node:fs";
  import { parseAllDocuments } from "yaml";
  const [manifest, out] = process.argv.slice(1);
  const objs = parseAllDocuments(readFileSync(manifest, "utf8")).map((d) => d.toJS()).filter(Boolean);
  writeFileSync(`${out}/sluiced.json`, objs.find((o) => o.kind === "ConfigMap" && !o.metadata?.labels?.grafana_dashboard).data["default.json"]);
  const c = objs.find((o) => o.kind === "DaemonSet").spec.template.spec.containers.find((x) => x.name === "sluiced");
  writeFileSync(`${out}/probe`, c.readinessProbe.exec.command.join("\n") + "\n");
' "$root/manifests/sluice.yaml" "$tmp")
mapfile -t probe <"$tmp/probe"
eal=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).eal)' "$tmp/sluiced.json")
chart_sock=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))["api-socket"])' "$tmp/sluiced.json")
sock=$tmp/sluice.sock
# The probe as the kubelet runs it, with the socket moved and sluicectl by path.
probe=("${probe[@]/#sluicectl/$sluicectl}")
probe=("${probe[@]/#$chart_sock/$sock}")
echo "probe: ${probe[*]}"

mkdir -p "$tmp/vhost"
# The metrics endpoint the config turns on, moved to a free loopback port
# (the chart's port may be taken on this machine).
metrics_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$sluiced" --config "$tmp/sluiced.json" --api-socket "$sock" --socket-dir "$tmp/vhost" --state-dir "$tmp/state" \
  --metrics-address 127.0.0.1 --metrics-port "$metrics_port" \
  --eal "$eal --file-prefix sluice-pkgtest-$$" >"$tmp/log" 2>&1 &
pid=$!

# Wait for the condition itself (the probe passing), bounded, and stop early
# if sluiced exits.
ready=no
for _ in $(seq 1 240); do
  if "${probe[@]}" >"$tmp/probe.out" 2>&1; then ready=yes; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.25
done
if [[ $ready != yes ]]; then
  cat "$tmp/log" "$tmp/probe.out"
  echo "FAIL: the DaemonSet's probe never passed against sluiced started with the manifests' config"
  exit 1
fi
echo "ok   probe passes: $(cat "$tmp/probe.out")"
# The page is read whole before it is searched: grep -q stops at the match,
# and under pipefail a curl still writing would fail the pipeline.
if ! curl -sf "http://127.0.0.1:$metrics_port/metrics" >"$tmp/metrics" || ! grep -q '^sluice_ready 1$' "$tmp/metrics"; then
  echo "FAIL: sluiced started with the manifests' config serves no /metrics saying it is ready"
  exit 1
fi
echo "ok   /metrics answers: sluice_ready 1"

kill "$pid"
wait "$pid" || true
pid=
if "${probe[@]}" >"$tmp/probe.out" 2>&1; then
  echo "FAIL: the probe still passes after sluiced stopped"
  exit 1
fi
echo "ok   probe fails once sluiced has stopped: $(head -n1 "$tmp/probe.out")"
echo "3 passed, 0 failed"
