// The real uplink device's control side (DpdkUplink on a net_null vdev, EAL
// in this process): a control frame is queued for a PMD to send, never sent
// under the tx lock the PMDs share, so a control thread cannot stall them
// (nor be stalled by a PMD holding the lock); a full queue refuses the frame
// and loses no mbuf.
#include "dataplane/modules/overlay/dpdk_uplink.h"

#include <gtest/gtest.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include <chrono>
#include <cstring>
#include <future>
#include <vector>

#include "tests/integration/virtio_pod.h"

namespace sluice {
namespace {

std::unique_ptr<DpdkUplink> openUplink(const char* name) {
  UplinkConfig config;
  config.devargs = std::string(name) + ",no-rx=1";
  config.vtep = *Ipv4Address::parse("192.168.77.1");
  absl::StatusOr<std::unique_ptr<DpdkUplink>> u = DpdkUplink::open(config, test::podPool());
  EXPECT_TRUE(u.ok()) << u.status();
  return u.ok() ? std::move(*u) : nullptr;
}

std::vector<uint8_t> frame(uint8_t fill) { return std::vector<uint8_t>(60, fill); }

TEST(DpdkUplinkTest, AControlFrameIsQueuedForAPmdWhileAPmdHoldsTheTxLock) {
  std::unique_ptr<DpdkUplink> uplink = openUplink("net_null_uplink_ctl0");
  ASSERT_NE(uplink, nullptr);
  ASSERT_NE(uplink->controlTxRing(), nullptr);
  // A PMD in the middle of its uplink batch.
  rte_spinlock_lock(uplink->txLock());
  std::future<absl::Status> sent = std::async(std::launch::async, [&] { return uplink->send(frame(0xab)); });
  const bool returned = sent.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  rte_spinlock_unlock(uplink->txLock());
  ASSERT_TRUE(returned) << "send() waited for the PMDs' tx lock";
  ASSERT_TRUE(sent.get().ok());

  // The frame waits in the ring, byte for byte, for the PMD that sends it.
  void* obj = nullptr;
  ASSERT_EQ(rte_ring_dequeue(uplink->controlTxRing(), &obj), 0);
  auto* m = static_cast<rte_mbuf*>(obj);
  ASSERT_EQ(rte_pktmbuf_pkt_len(m), 60u);
  const std::vector<uint8_t> expected = frame(0xab);
  EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(m, const uint8_t*), expected.data(), expected.size()), 0);
  rte_pktmbuf_free(m);
  EXPECT_EQ(rte_ring_count(uplink->controlTxRing()), 0u);
}

TEST(DpdkUplinkTest, AFullControlQueueRefusesTheFrameAndKeepsNoMbuf) {
  std::unique_ptr<DpdkUplink> uplink = openUplink("net_null_uplink_ctl1");
  ASSERT_NE(uplink, nullptr);
  const unsigned free_before = rte_mempool_avail_count(test::podPool());
  const unsigned capacity = rte_ring_get_capacity(uplink->controlTxRing());
  for (unsigned i = 0; i < capacity; ++i) ASSERT_TRUE(uplink->send(frame(static_cast<uint8_t>(i))).ok()) << i;
  const absl::Status full = uplink->send(frame(0xff));
  EXPECT_EQ(full.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(full.message(), "uplink: control frame queue full");
  EXPECT_EQ(rte_mempool_avail_count(test::podPool()), free_before - capacity) << "the refused frame's mbuf is freed";
  // Closing the uplink frees what no PMD sent.
  uplink.reset();
  EXPECT_EQ(rte_mempool_avail_count(test::podPool()), free_before);
}

}  // namespace
}  // namespace sluice
