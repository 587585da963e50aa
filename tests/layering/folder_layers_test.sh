#!/usr/bin/env bash
# The folders' dependency picture, checked: every project #include of a file
# in a layered folder names a folder that folder may depend on, so the
# folders form no circle (sluiced -> api, modules/<m>/api -> api,
# modules/<m>/cli -> sluicectl -> api's client-side formatters and sluice/v1,
# modules/<m> -> core -> config -> datapath -> common; a module never
# includes another module, and nothing below sluicectl includes it);
# and no CMakeLists.txt compiles another folder's files. Includes of other
# libraries (Abseil, DPDK) are not the picture's concern.
# Usage: folder_layers_test.sh REPO_ROOT
set -euo pipefail
root=${1:?usage: $0 REPO_ROOT}
cd "$root"

# The fast path: Pmd and its pipeline in datapath/, which may include its
# feature subfolders; a feature subfolder may include datapath/ (the
# pipeline's types), the flow caches and another feature subfolder, and
# nothing below datapath/ includes one.
datapath_features="dataplane/datapath/overlay dataplane/datapath/icmp dataplane/datapath/nd"
datapath="dataplane/datapath dataplane/datapath/flow $datapath_features"
below_modules="dataplane/core dataplane/config $datapath common common/rtnetlink"
declare -A allowed=(
  [common]="common"
  [common/rtnetlink]="common/rtnetlink"
  [dataplane/datapath/flow]="dataplane/datapath/flow common"
  [dataplane/datapath]="$datapath common"
  [dataplane/datapath/overlay]="$datapath common"
  [dataplane/datapath/icmp]="$datapath common"
  [dataplane/datapath/nd]="$datapath common"
  [dataplane/config]="dataplane/config $datapath common"
  [dataplane/core]="dataplane/core dataplane/config $datapath common"
  [dataplane/stand_ins/fake_pf]="dataplane/stand_ins/fake_pf dataplane/modules/sriov $below_modules"
  [dataplane/stand_ins/software_offload]="dataplane/stand_ins/software_offload dataplane/modules/offload $below_modules"
  [dataplane/api]="dataplane/api $below_modules sluice/v1"
  # The daemon composes the API, the core and what is below it; it names no
  # module (features register themselves).
  [dataplane/sluiced]="dataplane/sluiced dataplane/api $below_modules"
  # The operator's CLI: a gRPC client, so the API's messages and the
  # formatters of its replies, nothing of the daemon; it names no module
  # (each module's cli/ folder registers its commands).
  [dataplane/sluicectl]="dataplane/sluicectl dataplane/api sluice/v1"
  [cni-plugin]="cni-plugin common common/rtnetlink sluice/v1"
  # The node controller talks to sluiced only through the API (sluice/v1).
  [agent]="agent common sluice/v1"
)
# Every module folder, found as sluiced's build finds them: its control side
# sees only what is below modules; its api/ folder also the core's API
# folder and the module itself. Neither names a stand-in: stand-ins register
# themselves with the module's provider registry. Its cli/ folder
# (sluicectl's commands of the module) sees only sluicectl, the API's
# formatters and messages, and the module's api/ folder.
for module in dataplane/modules/*/; do
  module=${module%/}
  allowed[$module]="$module $below_modules"
  [[ -d $module/api ]] &&
    allowed[$module/api]="$module/api $module dataplane/api $below_modules sluice/v1"
  if [[ -d $module/cli ]]; then
    allowed[$module/cli]="$module/cli $module/api dataplane/sluicectl dataplane/api sluice/v1"
  fi
done

failures=0
for folder in "${!allowed[@]}"; do
  [[ -d $folder ]] || { echo "layering: folder $folder is gone; update this test"; failures=$((failures + 1)); continue; }
  for file in "$folder"/*.h "$folder"/*.cc "$folder"/*.def; do
    [[ -e $file ]] || continue
    while IFS= read -r included; do
      target=$(dirname "$included")
      ok=0
      for a in ${allowed[$folder]}; do [[ $target == $a ]] && ok=1; done
      if ((ok == 0)); then
        echo "layering: $file includes $included ($target is not below $folder)"
        failures=$((failures + 1))
      fi
    done < <(sed -n 's/^#include "\(\(dataplane\|common\|cni-plugin\|sluice\)\/[^"]*\)".*/\1/p' "$file")
  done
done

# A library's sources are its own folder's files: no target_sources, no
# source path with a directory in it.
while IFS= read -r cmake; do
  if grep -q "target_sources" "$cmake"; then
    echo "layering: $cmake adds sources with target_sources"
    failures=$((failures + 1))
  fi
  if awk '/add_library\(/{inlib=1} inlib{print} inlib && /\)/{inlib=0}' "$cmake" | grep -Eq '[A-Za-z_]+/[A-Za-z_]+\.cc'; then
    echo "layering: $cmake compiles a file of another folder"
    failures=$((failures + 1))
  fi
done < <(find dataplane common cni-plugin -name CMakeLists.txt)

if ((failures > 0)); then
  echo "layering: $failures violation(s)"
  exit 1
fi
echo "layering: ${#allowed[@]} folders, every include points down or sideways within its folder"
