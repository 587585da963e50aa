#!/usr/bin/env bash
# Checks the Dockerfile without a Docker engine (none exists on the build
# machines, so `docker build` cannot run here):
#  - build stage on Debian 12 runs scripts/setup.sh and the CMake
#    configure/build/install, and CI (.ci/run, once it exists) runs the same
#    set-up script and configures with the same -D options (build directory
#    names may differ);
#  - the runtime stage only receives the collected tree of the four programs
#    (scripts/collect-runtime.sh) and installs nothing else;
#  - the health check runs `sluicectl health` on the socket the chart uses.
set -euo pipefail

root=${1:?usage: check-dockerfile.sh REPO_ROOT}
df=$root/Dockerfile
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
ok() { echo "ok   $*"; }

# Instructions with continuation lines joined, comments dropped.
joined=$(sed -e '/^[[:space:]]*#/d' "$df" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | tr -s ' ')
build_stage=$(awk '/^FROM /{n++} n==1' <<<"$joined")
runtime_stage=$(awk '/^FROM /{n++} n==2' <<<"$joined")

froms=$(grep '^FROM ' <<<"$joined" | tr '\n' ';')
[[ $froms == "FROM debian:12 AS build;FROM debian:12-slim;" ]] \
  && ok "two stages: debian:12 build, debian:12-slim runtime" || fail "stages are: $froms"

grep -qx 'RUN SLUICE_TEST_TOOLS=0 bash scripts/setup.sh' <<<"$build_stage" \
  && ok "build stage runs scripts/setup.sh (without the test-only tools)" \
  || fail "build stage does not run 'SLUICE_TEST_TOOLS=0 bash scripts/setup.sh'"

cmake_run=$(grep '^RUN cmake ' <<<"$build_stage" || true)
[[ $cmake_run == 'RUN cmake -S . -B build -DSLUICE_BENCH=OFF && cmake --build build --parallel "$(nproc)" --target sluiced sluicectl sluice-cni sluice-agent && cmake --install build --strip' ]] \
  && ok "build stage: the four programs, built and installed stripped" \
  || fail "build stage cmake commands are: ${cmake_run:-none}"

collect=$(grep '^RUN bash scripts/collect-runtime.sh' <<<"$build_stage" || true)
[[ $collect == 'RUN bash scripts/collect-runtime.sh /runtime /usr/local/bin/sluiced /usr/local/bin/sluicectl /usr/local/bin/sluice-cni /usr/local/bin/sluice-agent' ]] \
  && ok "runtime tree collected for sluiced, sluicectl, sluice-cni, sluice-agent" || fail "collect step is: ${collect:-none}"

copies=$(grep -E '^(COPY|ADD|RUN) ' <<<"$runtime_stage" || true)
[[ $copies == 'COPY --from=build /runtime/ /' ]] \
  && ok "runtime stage only copies the collected tree" || fail "runtime stage has: $copies"

hc=$(grep '^HEALTHCHECK ' <<<"$runtime_stage" || true)
sock=$(sed -n 's/.*define "sluice.apiSocket" -}}{{ include "sluice.runDir" . }}\(\/[^{]*\){{.*/\1/p' "$root/helm/sluice/templates/_helpers.tpl")
rundir=$(sed -n 's/.*define "sluice.runDir" -}}\([^{]*\){{.*/\1/p' "$root/helm/sluice/templates/_helpers.tpl")
[[ $hc == *'CMD ["/usr/local/bin/sluicectl", "--socket", "'"$rundir$sock"'", "health"]' && -n $rundir ]] \
  && ok "health check: sluicectl health on $rundir$sock (the chart's API socket)" || fail "health check is: ${hc:-none}"

ci=$root/.ci/run
if [[ -f $ci ]]; then
  grep -qE '(^|[[:space:]/])scripts/setup\.sh' "$ci" \
    && ok ".ci/run runs scripts/setup.sh too" || fail ".ci/run does not run scripts/setup.sh"
  # -D options of the image's configure step must all be in one of CI's.
  opts_of() { grep -o -- '-D[^ ]*' <<<"$1" | sort || true; }
  docker_opts=$(opts_of "$cmake_run")
  match=no
  while read -r line; do
    if [[ -z $(comm -23 <(echo "$docker_opts" | sed '/^$/d') <(opts_of "$line" | sed '/^$/d')) ]]; then
      match=yes
    fi
  # .ci/run runs the README's test command, scripts/test.sh, which configures CMake.
  done < <(cat "$ci" "$root/scripts/test.sh" | sed -e ':a' -e '/\\$/N; s/\\\n//; ta' | grep -E 'cmake +(-S|-B|-G)' || true)
  [[ $match == yes ]] && ok "CI configures CMake with the image's -D options (${docker_opts:-none})" \
    || fail "CI (.ci/run, scripts/test.sh) has no cmake configure step with the image's -D options (${docker_opts:-none})"
else
  echo "note .ci/run does not exist yet: compared with the documented build commands only"
fi

dockerignore=$root/.dockerignore
grep -qx '\*\*/node_modules' "$dockerignore" && grep -qx 'build' "$dockerignore" \
  && ok ".dockerignore keeps build trees and node_modules out of the context" || fail ".dockerignore incomplete"

[[ $fails -eq 0 ]] || { echo "$fails check(s) failed"; exit 1; }
echo "Dockerfile checks passed"
