// The text of `sluicectl vfs` (modules/sriov/cli/vf_format.h).
#include "dataplane/modules/sriov/cli/vf_format.h"

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(VfFormat, OneLinePerVfHeldOrFree) {
  v1::ListVfsResponse r;
  v1::Vf* held = r.add_vfs();
  held->set_pf("enp1s0f0");
  held->set_vf_index(3);
  held->set_pci_address("0000:01:00.3");
  held->set_netdev("enp1s0f0v3");
  held->set_in_use(true);
  held->mutable_attachment()->set_container_id("c1");
  held->mutable_attachment()->set_ifname("net1");
  v1::Vf* free_vf = r.add_vfs();
  free_vf->set_pf("enp1s0f0");
  free_vf->set_vf_index(4);
  free_vf->set_pci_address("0000:01:00.4");
  EXPECT_EQ(formatVfs(r),
            "  PF               VF  PCI           NETDEV           HOLDER\n"
            "  enp1s0f0          3  0000:01:00.3  enp1s0f0v3       c1/net1\n"
            "  enp1s0f0          4  0000:01:00.4  -                (free)\n");
}

TEST(VfFormat, NoPools) {
  EXPECT_EQ(formatVfs(v1::ListVfsResponse{}),
            "  PF               VF  PCI           NETDEV           HOLDER\n"
            "  (no SR-IOV pools)\n");
}

}  // namespace
}  // namespace sluice
