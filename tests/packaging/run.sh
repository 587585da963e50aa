#!/usr/bin/env bash
# Driver of the packaging tests registered with CTest (CMakeLists.txt here).
# Usage: run.sh CASE [ARGS...]; each case exits non-zero on failure.
#   lint VALUES              helm lint --strict (VALUES: default or a file in helm/sluice/ci)
#   render PROFILE VALUES [HELM-ARGS...]
#                            helm template, strict schema validation, chart assertions
#   bad-value EXPECTED ARGS  helm template ARGS must fail and print EXPECTED
#   validator-selftest       the validator rejects known-bad manifests
#   scripts                  the chart's init and example-pod scripts, run here
#   pod-security [HELM-ARGS...]  the example pod and its network pass Pod Security "baseline"
#   dashboard SAMPLER        every Grafana dashboard query names a series sluiced exports
#   manifests                committed manifests/ match the chart and validate
#   dockerfile               the Dockerfile builds the way CI does
#   notes                    NOTES.txt tells how to reach sluicectl
#   fake-node                the fake API server's Node objects are valid Nodes (strict schema)
#   memory                   sluiced's memory follows flowLimit, PMDs and DPDK memory
#   node-policy              sluice-cni's node config (cni.json) follows the values
#   cni-config PLUGIN        the real sluice-cni accepts every rendered network config
#   sluiced-config CHECKER   sluiced's parser accepts every rendered sluiced config
#   config-checksum CHECKER  checksum/config covers restart-only settings, live.json the live ones
#   sluiced-start D CTL      sluiced starts with the manifests' config; the probe passes
#   runtime-closure          the image's collected runtime tree runs a DPDK program
#   admission-policy         the agent's ValidatingAdmissionPolicy admits and denies sample
#                            requests as it promises (CEL run offline); absent when switched off
# Tools: the pinned helm and npm packages from scripts/setup-packaging.sh.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
chart=$root/helm/sluice
helm=${SLUICE_HELM:-$here/node_modules/.helm/helm}
export SLUICE_HELM=$helm
if [[ ! -x $helm || ! -d $here/node_modules/kubernetes-models ]]; then
  echo "packaging tests: tools missing; run scripts/setup-packaging.sh" >&2
  exit 1
fi
# The Kubernetes version the offline schemas describe (kubernetes-models 5.1.0,
# @kubernetes/client-node 1.4.0).
template=("$helm" template sluice "$chart" --namespace kube-system --kube-version 1.34.0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

values_args() {
  if [[ $1 == default ]]; then return; fi
  echo "-f"
  echo "$chart/ci/$1"
}

case=${1:?case}
shift
case $case in
  lint)
    mapfile -t extra < <(values_args "$1")
    "$helm" lint --strict "$chart" "${extra[@]}"
    ;;
  render)
    profile=$1
    mapfile -t extra < <(values_args "$2")
    shift 2
    "${template[@]}" "${extra[@]}" "$@" >"$tmp/rendered.yaml"
    node "$here/validate-k8s.mjs" "$tmp/rendered.yaml"
    node "$here/check-rendered.mjs" "$profile" "$tmp/rendered.yaml"
    ;;
  bad-value)
    expected=$1
    shift
    if "${template[@]}" "$@" >"$tmp/out" 2>"$tmp/err"; then
      echo "FAIL: helm template $* succeeded; expected it to fail with: $expected"
      exit 1
    fi
    cat "$tmp/err"
    if ! grep -qF -- "$expected" "$tmp/err"; then
      echo "FAIL: helm template $* failed without the expected message: $expected"
      exit 1
    fi
    echo "ok: rejected with \"$expected\""
    ;;
  validator-selftest)
    node "$here/validator-selftest.mjs"
    ;;
  scripts)
    "${template[@]}" >"$tmp/default.yaml"
    "${template[@]}" -f "$chart/ci/production-values.yaml" >"$tmp/production.yaml"
    "${template[@]}" -f "$chart/ci/node-lookup-values.yaml" >"$tmp/node-lookup.yaml"
    "${template[@]}" -f "$chart/ci/dual-stack-values.yaml" >"$tmp/dual-stack.yaml"
    "${template[@]}" -f "$chart/ci/node-lookup-values.yaml" --set network.podCIDRFromNode.ipv6=true \
      >"$tmp/node-lookup-dual-stack.yaml"
    node "$here/check-scripts.mjs" "$tmp/production.yaml" "$tmp/node-lookup.yaml" "$tmp/default.yaml" \
      "$tmp/dual-stack.yaml" "$tmp/node-lookup-dual-stack.yaml"
    ;;
  pod-security)
    # The workload pods the chart renders (helm test's example pod) and the
    # networks they use, as rendered by the values given.
    "${template[@]}" "$@" >"$tmp/rendered.yaml"
    node "$here/check-pod-security.mjs" "$tmp/rendered.yaml"
    ;;
  dashboard)
    "$1" >"$tmp/page.txt"
    node "$here/check-dashboard.mjs" "$chart/dashboards/sluice.json" "$tmp/page.txt"
    ;;
  manifests)
    bash "$root/scripts/render-manifests.sh" --check
    node "$here/validate-k8s.mjs" "$root"/manifests/*.yaml
    ;;
  dockerfile)
    bash "$here/check-dockerfile.sh" "$root"
    ;;
  sluiced-start)
    bash "$here/check-sluiced-start.sh" "$1" "$2" "$root"
    ;;
  notes)
    bash "$here/check-notes.sh" "$root"
    ;;
  fake-node)
    python3 "$root/tests/kube/fake_apiserver.py" --sample-node >"$tmp/node.json"
    node "$here/validate-k8s.mjs" "$tmp/node.json"
    ;;
  memory)
    node "$here/check-memory.mjs" "$chart"
    ;;
  cni-config | sluiced-config)
    "${template[@]}" >"$tmp/default.yaml"
    "${template[@]}" -f "$chart/ci/production-values.yaml" >"$tmp/production.yaml"
    "${template[@]}" -f "$chart/ci/node-lookup-values.yaml" >"$tmp/node-lookup.yaml"
    # An SR-IOV network that asks for VF trust and spoof checking off, with
    # the node policy that allows them.
    "${template[@]}" --set networks.sriov.trust=on --set networks.sriov.spoofchk=off \
      --set cni.nodePolicy.allowVfTrust=true --set cni.nodePolicy.allowVfSpoofchkOff=true >"$tmp/vf-caps.yaml"
    # Dual-stack: both address families in sluice-cni's networks and in
    # sluiced's config (pod-cidr-v6).
    "${template[@]}" -f "$chart/ci/dual-stack-values.yaml" >"$tmp/dual-stack.yaml"
    node "$here/check-$case.mjs" "$1" "$tmp/default.yaml" "$tmp/production.yaml" "$tmp/node-lookup.yaml" \
      "$tmp/vf-caps.yaml" "$tmp/dual-stack.yaml"
    ;;
  node-policy)
    node "$here/check-node-policy.mjs" "$chart"
    ;;
  config-checksum)
    node "$here/check-config-checksum.mjs" "$chart" "$1"
    ;;
  runtime-closure)
    bash "$here/check-runtime-closure.sh" "$root"
    ;;
  admission-policy)
    "${template[@]}" -f "$chart/ci/kubernetes-values.yaml" >"$tmp/kubernetes.yaml"
    node "$here/check-admission-policy.mjs" "$tmp/kubernetes.yaml" kube-system sluice
    "${template[@]}" -f "$chart/ci/kubernetes-values.yaml" --set agent.nodeAdmissionPolicy=false >"$tmp/off.yaml"
    if grep -q "kind: ValidatingAdmissionPolicy" "$tmp/off.yaml"; then
      echo "FAIL: agent.nodeAdmissionPolicy=false still renders the policy"
      exit 1
    fi
    echo "ok   agent.nodeAdmissionPolicy=false renders no policy"
    ;;
  *)
    echo "unknown case $case" >&2
    exit 2
    ;;
esac
