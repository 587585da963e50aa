// NUMA on a made-up two-socket machine (tests/support/fake_numa_topology.h;
// this machine has one socket): PMDs 0 and 1 on socket 0 (lcores 1, 2), PMDs
// 2 and 3 on socket 1 (lcores 3, 4). Where DataplaneControl places ports of
// each socket, and which mbuf pool each PMD is given.
#include <gtest/gtest.h>
#include <rte_errno.h>

#include <array>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <span>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/mbuf_pools.h"
#include "tests/support/fake_control.h"
#include "tests/support/fake_numa_topology.h"

namespace sluice {
namespace {

const std::map<unsigned, unsigned> kTwoSocketLcores = {{1, 0}, {2, 0}, {3, 1}, {4, 1}};

class NumaControlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/numa-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 8;
    std::vector<PmdContext*> contexts;
    for (unsigned lcore = 1; lcore <= 4; ++lcore) {
      pmds_.push_back(std::make_unique<test::AckingPmd>(lcore));
      contexts.push_back(&pmds_.back()->context);
    }
    control_ = std::make_unique<DataplaneControl>(config_, backend_, contexts, 2'600'000'000, &topology_);
    control_->start();
    for (auto& pmd : pmds_) pmd->start();
  }
  void TearDown() override {
    control_->removeAllPorts();
    for (auto& pmd : pmds_) pmd->stop();
    std::filesystem::remove_all(dir_);
  }

  // A pod's port whose ethdev is on `socket` (none: unknown, as a vhost-user
  // port before its pod connected).
  PortView add(const std::string& id, std::optional<unsigned> socket, std::optional<unsigned> pin = std::nullopt,
               unsigned queues = 1) {
    if (socket) topology_.setPort(backend_.next_dpdk_port, *socket);
    RawPortRequest r;
    r.container_id = id;
    r.ifname = "net1";
    r.ip = "10.244.1." + std::to_string(10 + next_ip_++);
    r.pmd = pin;
    r.queues = queues;
    auto added = control_->addPort(r);
    EXPECT_TRUE(added.ok()) << added.status();
    return added.ok() ? added->port : PortView{};
  }

  std::string dir_;
  SluicedConfig config_;
  test::FakeNumaTopology topology_{kTwoSocketLcores};
  test::FakePortBackend backend_;
  std::vector<std::unique_ptr<test::AckingPmd>> pmds_;
  std::unique_ptr<DataplaneControl> control_;
  int next_ip_ = 0;
};

// Idle PMDs: a port goes to its own socket's PMD polling the fewest queues,
// whichever PMDs of the other socket poll fewer; listings and statistics
// name the sockets.
TEST_F(NumaControlTest, PortsArePolledByThePmdsOfTheirOwnSocket) {
  EXPECT_EQ(add("s1a", 1u).pmd, 2u);
  EXPECT_EQ(add("s1b", 1u).pmd, 3u);
  EXPECT_EQ(add("s1c", 1u).pmd, 2u) << "socket 0's idle PMDs are not candidates";
  EXPECT_EQ(add("s0a", 0u).pmd, 0u);
  EXPECT_EQ(add("s0b", 0u).pmd, 1u);
  std::vector<PortView> ports = control_->listPorts();
  ASSERT_EQ(ports.size(), 5u);
  EXPECT_EQ(ports[0].numa_socket, std::optional<unsigned>(1));
  EXPECT_EQ(ports[3].numa_socket, std::optional<unsigned>(0));
  StatsView s = control_->stats();
  ASSERT_EQ(s.pmds.size(), 4u);
  for (unsigned p = 0; p < 4; ++p) EXPECT_EQ(s.pmds[p].numa_socket, p < 2 ? 0u : 1u) << "PMD " << p;
}

TEST_F(NumaControlTest, AMultiQueuePortSpreadsOverItsOwnSocketsPmdsOnly) {
  EXPECT_EQ(add("mq", 1u, std::nullopt, 4).queue_pmds, (std::vector<unsigned>{2, 3, 2, 3}));
  EXPECT_EQ(add("mq0", 0u, std::nullopt, 3).queue_pmds, (std::vector<unsigned>{0, 1, 0}));
}

// Unknown: placed over every PMD, as on one socket; listed without a socket.
TEST_F(NumaControlTest, PortsOfUnknownSocketArePlacedOverEveryPmd) {
  for (unsigned i = 0; i < 4; ++i) EXPECT_EQ(add("u" + std::to_string(i), std::nullopt).pmd, i);
  EXPECT_EQ(control_->listPorts()[0].numa_socket, std::nullopt);
}

TEST_F(NumaControlTest, APortOnASocketWithNoPmdIsPlacedOverEveryPmd) {
  EXPECT_EQ(add("s0", 0u).pmd, 0u);
  EXPECT_EQ(add("s2", 2u).pmd, 1u);
  EXPECT_EQ(add("s2b", 2u).pmd, 2u);
}

// A pin wins over the socket; the pinned queue counts on its PMD for what
// is placed after it.
TEST_F(NumaControlTest, APinnedPortStaysOnItsPmdAcrossSockets) {
  EXPECT_EQ(add("pinned", 0u, 2u).pmd, 2u);
  EXPECT_EQ(add("s1", 1u).pmd, 3u);
}

// A port placed while its socket was unknown (a vhost-user port before its
// pod connected) is placed again once its pod connected and its socket is
// known: its queues polled from another socket move to that socket's PMDs,
// once; from then on they stay, as every placed queue does.
TEST_F(NumaControlTest, AQueuePlacedBeforeItsSocketWasKnownMovesOnceWhenItIsKnown) {
  PortView late = add("late", std::nullopt, std::nullopt, 2);
  EXPECT_EQ(late.queue_pmds, (std::vector<unsigned>{0, 1}));
  // Nothing known yet: a queue-state change moves nothing.
  backend_.queue_change = true;
  control_->applyQueueStateChanges();
  EXPECT_EQ(control_->listPorts()[0].queue_pmds, (std::vector<unsigned>{0, 1}));
  // Its pod connected on socket 1: the driver's events say queues changed.
  topology_.setPort(0, 1);
  backend_.queue_change = true;
  control_->applyQueueStateChanges();
  std::vector<PortView> ports = control_->listPorts();
  EXPECT_EQ(ports[0].queue_pmds, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(ports[0].numa_socket, std::optional<unsigned>(1));
  // Once: whatever the topology says later, placed queues stay.
  topology_.setPort(0, 0);
  backend_.queue_change = true;
  control_->applyQueueStateChanges();
  add("other", 0u);
  EXPECT_EQ(control_->listPorts()[0].queue_pmds, (std::vector<unsigned>{2, 3}));
}

// Known on the socket it is already polled from, pinned, or on a socket
// without PMDs: it stays.
TEST_F(NumaControlTest, AQueueAlreadyOnItsSocketOrPinnedStaysWhenItsSocketIsKnown) {
  add("on0", std::nullopt);                  // dpdk port 0, PMD 0
  add("pinned", std::nullopt, 1u);           // dpdk port 1, PMD 1
  add("nowhere", std::nullopt);              // dpdk port 2, PMD 2
  topology_.setPort(0, 0);
  topology_.setPort(1, 1);
  topology_.setPort(2, 5);
  backend_.queue_change = true;
  control_->applyQueueStateChanges();
  std::vector<PortView> ports = control_->listPorts();
  EXPECT_EQ(ports[0].pmd, 0u);
  EXPECT_EQ(ports[1].pmd, 1u);
  EXPECT_EQ(ports[2].pmd, 2u);
}

// Stand-ins for pools: distinct addresses, never dereferenced.
std::array<char, 8> pool_storage;
rte_mempool* fakePool(unsigned socket) { return reinterpret_cast<rte_mempool*>(&pool_storage[socket]); }

// Puts `contexts` on lcores 1, 2, ... and lists them as sluiced passes them.
std::vector<PmdContext*> onLcoresFromOne(std::span<PmdContext> contexts) {
  std::vector<PmdContext*> pmds;
  for (size_t i = 0; i < contexts.size(); ++i) {
    contexts[i].lcore = static_cast<unsigned>(i + 1);
    pmds.push_back(&contexts[i]);
  }
  return pmds;
}

TEST(MbufPoolsTest, OnePoolPerSocketOfThePmdsAndEachPmdGetsItsSocketsPool) {
  test::FakeNumaTopology topology(kTwoSocketLcores);
  std::vector<unsigned> made;
  auto pools = MbufPools::create(
      pmdSockets({3, 1, 2, 4}, topology),
      [&](unsigned socket) {
        made.push_back(socket);
        return fakePool(socket);
      },
      [](rte_mempool*) { ADD_FAILURE() << "nothing to free"; });
  ASSERT_TRUE(pools.ok()) << pools.status();
  EXPECT_EQ(made, (std::vector<unsigned>{1, 0})) << "one per socket, in the order the PMDs need them";
  EXPECT_EQ(pools->bySocket().size(), 2u);
  EXPECT_EQ(pools->home(), fakePool(1)) << "PMD 0's socket";
  EXPECT_EQ(pools->forSocket(0u), fakePool(0));
  EXPECT_EQ(pools->forSocket(1u), fakePool(1));
  EXPECT_EQ(pools->forSocket(std::nullopt), fakePool(1)) << "unknown: the home pool";
  EXPECT_EQ(pools->forSocket(2u), fakePool(1)) << "a socket without PMDs: the home pool";

  std::array<PmdContext, 4> contexts;
  givePmdsTheirPools(onLcoresFromOne(contexts), topology, *pools);
  EXPECT_EQ(contexts[0].packet_pool, fakePool(0));
  EXPECT_EQ(contexts[0].fragment_pool, fakePool(0));
  EXPECT_EQ(contexts[1].packet_pool, fakePool(0));
  EXPECT_EQ(contexts[1].fragment_pool, fakePool(0));
  EXPECT_EQ(contexts[2].packet_pool, fakePool(1));
  EXPECT_EQ(contexts[2].fragment_pool, fakePool(1));
  EXPECT_EQ(contexts[3].packet_pool, fakePool(1));
  EXPECT_EQ(contexts[3].fragment_pool, fakePool(1));
}

// One socket (this machine, most nodes): one pool, as sluiced always had.
TEST(MbufPoolsTest, OneSocketMakesOnePoolForEveryPmd) {
  test::FakeNumaTopology topology;
  int made = 0;
  auto pools = MbufPools::create(
      pmdSockets({1, 2, 3}, topology),
      [&](unsigned socket) {
        ++made;
        return fakePool(socket);
      },
      [](rte_mempool*) {});
  ASSERT_TRUE(pools.ok()) << pools.status();
  EXPECT_EQ(made, 1);
  EXPECT_EQ(pools->home(), fakePool(0));
  std::array<PmdContext, 3> contexts;
  givePmdsTheirPools(onLcoresFromOne(contexts), topology, *pools);
  for (const PmdContext& c : contexts) {
    EXPECT_EQ(c.packet_pool, fakePool(0));
    EXPECT_EQ(c.fragment_pool, fakePool(0));
  }
}

TEST(MbufPoolsTest, APoolThatCannotBeMadeFreesTheOthersAndNamesItsSocket) {
  std::vector<rte_mempool*> freed;
  auto pools = MbufPools::create(
      {0, 1},
      [](unsigned socket) -> rte_mempool* {
        if (socket == 0) return fakePool(0);
        rte_errno = ENOMEM;
        return nullptr;
      },
      [&](rte_mempool* p) { freed.push_back(p); });
  ASSERT_FALSE(pools.ok());
  EXPECT_EQ(pools.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(pools.status().message().find("NUMA socket 1"), std::string_view::npos) << pools.status();
  EXPECT_EQ(freed, std::vector<rte_mempool*>{fakePool(0)});
}

}  // namespace
}  // namespace sluice
