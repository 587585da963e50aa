// SR-IOV's sluicectl commands, over sluice.v1.Sriov.
#include "dataplane/modules/sriov/cli/vf_format.h"
#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"
#include "sluice/v1/sriov.grpc.pb.h"

namespace sluice::ctl {
namespace {

int listVfs(Client& client, const Args&) {
  return call(client, &v1::Sriov::Stub::ListVfs, v1::ListVfsRequest{},
              [](const v1::ListVfsResponse& r) { return sluice::formatVfs(r); });
}

}  // namespace

SLUICECTL_COMMAND(vf_list, {.words = {"vfs"},
                            .help = "SR-IOV VFs of the pools: PF, index, PCI address, netdev, holder",
                            .max_args = 0,
                            .run = listVfs});

}  // namespace sluice::ctl
