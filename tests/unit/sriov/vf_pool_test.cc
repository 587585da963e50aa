// VF pool allocation: pool order, by deviceID, and every refusal leaving the
// pool exactly as it was.
#include "dataplane/modules/sriov/vf_pool.h"

#include <gtest/gtest.h>

namespace sluice::sriov {
namespace {

std::vector<VfInfo> twoPfs() {
  return {{"pfa", 0, "0000:3b:02.0", "a0", "/sys"}, {"pfa", 1, "0000:3b:02.1", "a1", "/sys"},
          {"pfb", 0, "0000:5e:02.0", "b0", "/sys"}};
}

std::vector<bool> heldMap(const VfPool& pool) {
  std::vector<bool> out;
  for (const auto& s : pool.slots()) out.push_back(s.holder.has_value());
  return out;
}

const AttachmentId kA{"aaa", "net1"}, kB{"bbb", "net1"}, kC{"ccc", "net1"}, kD{"ddd", "net1"};

TEST(VfPool, HandsOutFreeVfsInPoolOrder) {
  VfPool pool(twoPfs());
  EXPECT_EQ(pool.allocate(kA, "")->pci_address, "0000:3b:02.0");
  EXPECT_EQ(pool.allocate(kB, "")->pci_address, "0000:3b:02.1");
  EXPECT_EQ(pool.allocate(kC, "")->pci_address, "0000:5e:02.0");
  EXPECT_EQ(pool.freeCount(), 0u);
  EXPECT_EQ(pool.heldBy(kB)->pci_address, "0000:3b:02.1");
  EXPECT_FALSE(pool.heldBy(kD).has_value());
}

TEST(VfPool, HandsOutTheRequestedDevice) {
  VfPool pool(twoPfs());
  auto vf = pool.allocate(kA, "0000:5e:02.0");
  ASSERT_TRUE(vf.ok());
  EXPECT_EQ(vf->pf, "pfb");
  EXPECT_EQ(vf->index, 0u);
  // The next anonymous allocation skips it.
  EXPECT_EQ(pool.allocate(kB, "")->pci_address, "0000:3b:02.0");
}

TEST(VfPool, RefusalsChangeNothing) {
  VfPool pool(twoPfs());
  ASSERT_TRUE(pool.allocate(kA, "0000:3b:02.1").ok());
  const std::vector<bool> before = heldMap(pool);

  auto taken = pool.allocate(kB, "0000:3b:02.1");
  EXPECT_EQ(taken.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_NE(taken.status().message().find("held by aaa/net1"), std::string_view::npos) << taken.status();
  auto unknown = pool.allocate(kB, "0000:99:00.0");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(unknown.status().message().find("0000:99:00.0"), std::string_view::npos);
  auto malformed = pool.allocate(kB, "eth0");
  EXPECT_EQ(malformed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(malformed.status().message().find("device_id"), std::string_view::npos);
  EXPECT_EQ(heldMap(pool), before);
  EXPECT_FALSE(pool.heldBy(kB).has_value());
}

TEST(VfPool, ExhaustedIsResourceExhausted) {
  VfPool pool(twoPfs());
  ASSERT_TRUE(pool.allocate(kA, "").ok());
  ASSERT_TRUE(pool.allocate(kB, "").ok());
  ASSERT_TRUE(pool.allocate(kC, "").ok());
  auto none = pool.allocate(kD, "");
  EXPECT_EQ(none.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(none.status().message(), "SR-IOV pool exhausted: all 3 VFs are in use");
  EXPECT_FALSE(pool.heldBy(kD).has_value());
}

TEST(VfPool, ReleaseReturnsTheVf) {
  VfPool pool(twoPfs());
  ASSERT_TRUE(pool.allocate(kA, "0000:3b:02.1").ok());
  EXPECT_TRUE(pool.release(kA));
  EXPECT_FALSE(pool.release(kA));  // idempotent
  EXPECT_EQ(pool.freeCount(), 3u);
  EXPECT_EQ(pool.allocate(kB, "0000:3b:02.1")->pci_address, "0000:3b:02.1");
}

TEST(VfPool, ClaimRestoresAHolder) {
  VfPool pool(twoPfs());
  EXPECT_TRUE(pool.claim("0000:5e:02.0", kA));
  EXPECT_FALSE(pool.claim("0000:5e:02.0", kB));  // held
  EXPECT_FALSE(pool.claim("0000:77:00.0", kB));  // not in the pools
  EXPECT_EQ(pool.heldBy(kA)->pf, "pfb");
}

TEST(VfPool, NoPoolsIsFailedPrecondition) {
  VfPool pool({});
  EXPECT_EQ(pool.allocate(kA, "").status().code(), absl::StatusCode::kFailedPrecondition);
}

}  // namespace
}  // namespace sluice::sriov
