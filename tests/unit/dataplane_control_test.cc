// DataplaneControl on a fake port backend, with fake PMD threads that follow
// the snapshot hand-over protocol (pick up, acknowledge) without polling
// ethdevs, so no EAL is needed: port numbering, validation, idempotence, the
// hand-over and statistics baselines. The real Pmd loop is exercised by the
// integration tests.
#include "dataplane/core/dataplane_control.h"
#include "tests/support/fake_control.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <future>
#include <set>
#include <thread>


namespace sluice {
namespace {

class DataplaneControlTest : public ::testing::TestWithParam<unsigned> {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/control-test-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 4;
    config_.tx_flush_interval_us = 0;
    unsigned n_pmds = GetParam();
    std::vector<PmdContext*> contexts;
    for (unsigned i = 0; i < n_pmds; ++i) {
      pmds_.push_back(std::make_unique<test::AckingPmd>(i + 1));
      contexts.push_back(&pmds_.back()->context);
      mailboxes_.push_back(&pmds_.back()->context.mailbox);
      counters_.push_back(&pmds_.back()->context.counters);
    }
    control_ = std::make_unique<DataplaneControl>(config_, backend_, contexts, 2'600'000'000);
    control_->start();
    for (auto& pmd : pmds_) pmd->start();
    backend_.on_destroy = [this](const CreatedPort& port) {
      // Control must have taken the port away from every PMD first: each
      // acknowledged a snapshot that no longer has it.
      for (auto& pmd : pmds_) EXPECT_TRUE(pmd->caughtUp()) << port.dpdk_name;
    };
  }
  void TearDown() override {
    control_->removeAllPorts();
    for (auto& pmd : pmds_) pmd->stop();
    std::filesystem::remove_all(dir_);
  }

  RawPortRequest request(const std::string& id, const std::string& ip) {
    RawPortRequest r;
    r.container_id = id;
    r.ifname = "net1";
    r.ip = ip;
    return r;
  }

  std::string dir_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  std::vector<std::unique_ptr<test::AckingPmd>> pmds_;
  std::vector<PmdMailbox*> mailboxes_;
  std::vector<PmdCounters*> counters_;
  std::unique_ptr<DataplaneControl> control_;
};

// A change waits until every PMD has acknowledged its snapshot; readers
// (ListPorts, GetStats, Health) must not wait with it.
TEST_P(DataplaneControlTest, ReadersCompleteWhileAPmdIsSlowToAcknowledge) {
  ASSERT_TRUE(control_->addPort(request("aaaa", "10.244.1.10")).ok());
  const uint64_t before = mailboxes_[0]->published.load()->version;
  pmds_[0]->slow.store(true);
  auto adding = std::async(std::launch::async, [this] { return control_->addPort(request("bbbb", "10.244.1.11")); });
  // The change has published a snapshot and waits for PMD 0 to take it.
  while (mailboxes_[0]->published.load()->version == before) std::this_thread::yield();

  std::vector<PortView> ports = control_->listPorts();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[1].request.attachment.container_id, "bbbb");
  EXPECT_EQ(control_->stats().ports.size(), 2u);
  EXPECT_TRUE(control_->health().ready);
  // The readers were answered while the change still waited.
  EXPECT_LT(mailboxes_[0]->acked_version.load(), mailboxes_[0]->published.load()->version);

  pmds_[0]->slow.store(false);
  auto added = adding.get();
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.port_no, 1);
  EXPECT_TRUE(added->created);
}

TEST_P(DataplaneControlTest, PortNumbersAreDenseAndReused) {
  auto a = control_->addPort(request("aaaa", "10.244.1.10"));
  auto b = control_->addPort(request("bbbb", "10.244.1.11"));
  auto c = control_->addPort(request("cccc", "10.244.1.12"));
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(a->port.port_no, 0);
  EXPECT_EQ(b->port.port_no, 1);
  EXPECT_EQ(c->port.port_no, 2);
  ASSERT_TRUE(*control_->deletePort({"bbbb", "net1"}));
  auto d = control_->addPort(request("dddd", "10.244.1.13"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port.port_no, 1);
  EXPECT_EQ(control_->listPorts().size(), 3u);
}

// Idle PMDs: each new port goes to the one polling the fewest queues (round
// robin as ports are added); ports then stay where they are while others come
// and go: no queue moves.
TEST_P(DataplaneControlTest, PortsSpreadOverIdlePmdsAndStayWhileOthersComeAndGo) {
  for (int i = 0; i < 4; ++i)
    ASSERT_TRUE(control_->addPort(request("p" + std::to_string(i), "10.244.1." + std::to_string(10 + i))).ok());
  std::vector<PortView> ports = control_->listPorts();
  for (const PortView& p : ports) EXPECT_EQ(p.pmd, p.port_no % GetParam());
  ASSERT_TRUE(*control_->deletePort({"p0", "net1"}));
  for (const PortView& p : control_->listPorts()) EXPECT_EQ(p.pmd, p.port_no % GetParam()) << "moved: " << p.port_no;
  // The next port takes number 0 again and the PMD with the fewest queues (0).
  auto again = control_->addPort(request("p4", "10.244.1.14"));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->port.port_no, 0);
  EXPECT_EQ(again->port.pmd, 0u);
  for (const PortView& p : control_->listPorts()) EXPECT_EQ(p.pmd, p.port_no % GetParam());
  // Every PMD ran the snapshots: each acknowledged what was published last.
  for (auto& m : mailboxes_) EXPECT_EQ(m->acked_version.load(), m->published.load()->version);
}

// A new port goes to the PMD that measured least busy since the previous
// placement, whatever the queue counts say; ports already placed stay. (With
// one PMD, that one whatever its load.)
TEST_P(DataplaneControlTest, ANewPortGoesToTheLeastBusyPmd) {
  const bool two = GetParam() == 2;
  ASSERT_TRUE(control_->addPort(request("idle", "10.244.1.10")).ok());  // PMD 0 (fewest queues)
  // One second at 2.6 GHz: PMD 0 90 % busy, PMD 1 idle although it polls nothing.
  counters_[0]->busy_cycles.add(2'340'000'000);
  counters_[0]->idle_cycles.add(260'000'000);
  if (two) {
    counters_[1]->idle_cycles.add(1'300'000'000);
    counters_[1]->sleep_cycles.add(1'300'000'000);
  }
  for (int i = 1; i < 4; ++i) {
    auto r = control_->addPort(request("p" + std::to_string(i), "10.244.1." + std::to_string(10 + i)));
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->port.pmd, two ? 1u : 0u) << "port " << r->port.port_no << ": PMD 0 is the busy one";
  }
  EXPECT_EQ(control_->listPorts()[0].pmd, 0u) << "the busy PMD's own port stays";
  // A later window where PMD 1 is the busy one turns the choice around
  // (a port goes first: the table holds four).
  ASSERT_TRUE(*control_->deletePort({"p3", "net1"}));
  counters_[two ? 1 : 0]->busy_cycles.add(2'600'000'000);
  counters_[0]->idle_cycles.add(2'600'000'000);
  auto r = control_->addPort(request("p9", "10.244.1.19"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->port.pmd, 0u);
}

// A port pinned by its request polls on that PMD (and says so); a PMD index
// the node does not run is refused, naming the ones it does.
TEST_P(DataplaneControlTest, APinnedPortPollsOnItsPmdAndAnUnknownPmdIsRefused) {
  const unsigned last = GetParam() - 1;
  for (int i = 0; i < 3; ++i) {
    RawPortRequest r = request("pin" + std::to_string(i), "10.244.1." + std::to_string(10 + i));
    r.pmd = last;
    auto added = control_->addPort(r);
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_EQ(added->port.pmd, last);
    EXPECT_EQ(added->port.request.pmd, std::optional<unsigned>(last));
  }
  // Unpinned, it goes where the fewest queues are: PMD 0 (the pinned ones count).
  auto free_port = control_->addPort(request("free", "10.244.1.20"));
  ASSERT_TRUE(free_port.ok());
  EXPECT_EQ(free_port->port.pmd, 0u);
  EXPECT_FALSE(free_port->port.request.pmd.has_value());
  RawPortRequest bad = request("nope", "10.244.1.21");
  bad.pmd = GetParam();
  auto refused = control_->addPort(bad);
  ASSERT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("pmd: there is no PMD"), std::string::npos) << refused.status();
}

// The PMDs' rx queues of `port_no` in the snapshots they run: queue ids by PMD.
std::vector<std::vector<uint16_t>> rxQueuesOf(const std::vector<PmdMailbox*>& mailboxes, uint16_t port_no) {
  std::vector<std::vector<uint16_t>> out;
  for (PmdMailbox* m : mailboxes) {
    out.emplace_back();
    for (const RxQueueRef& r : m->published.load()->rx_queues)
      if (r.port_no == port_no) out.back().push_back(r.queue);
  }
  return out;
}

// A port of four queue pairs: its rx queues go round-robin over the PMDs
// (the snapshots say so, and the view), each PMD sends on a tx queue of its
// own without a lock; a single-queue port beside it has one tx queue, which
// two PMDs share under one lock. Queues placed stay while ports come and go.
TEST_P(DataplaneControlTest, AMultiQueuePortSpreadsItsQueuesAndGivesEachPmdItsOwnTxQueue) {
  const unsigned n_pmds = GetParam();
  RawPortRequest mq = request("mq", "10.244.1.10");
  mq.queues = 4;
  auto added = control_->addPort(mq);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.request.queues, 4u);
  std::vector<unsigned> expected;
  for (unsigned q = 0; q < 4; ++q) expected.push_back(q % n_pmds);
  EXPECT_EQ(added->port.queue_pmds, expected);
  EXPECT_EQ(added->port.pmd, 0u);
  ASSERT_EQ(backend_.created.size(), 1u);
  std::vector<std::vector<uint16_t>> by_pmd(n_pmds);
  for (uint16_t q = 0; q < 4; ++q) by_pmd[q % n_pmds].push_back(q);
  EXPECT_EQ(rxQueuesOf(mailboxes_, added->port.port_no), by_pmd);
  for (unsigned p = 0; p < n_pmds; ++p) {
    const TxPortSlot& tx = mailboxes_[p]->published.load()->tx_ports[added->port.port_no];
    EXPECT_TRUE(tx.valid);
    EXPECT_EQ(tx.queue, p) << "PMD " << p << " sends on its own queue";
    EXPECT_EQ(tx.lock, nullptr) << "PMD " << p << ": nobody shares its queue";
  }

  auto single = control_->addPort(request("one", "10.244.1.11"));
  ASSERT_TRUE(single.ok());
  EXPECT_EQ(single->port.queue_pmds, std::vector<unsigned>{0}) << "PMD 0 polls the fewest of this port's queues";
  const TxPortSlot& first = mailboxes_[0]->published.load()->tx_ports[single->port.port_no];
  EXPECT_EQ(first.queue, 0);
  if (n_pmds == 2) {
    const TxPortSlot& second = mailboxes_[1]->published.load()->tx_ports[single->port.port_no];
    EXPECT_EQ(second.queue, 0);
    ASSERT_NE(first.lock, nullptr) << "two PMDs share the one tx queue";
    EXPECT_EQ(first.lock, second.lock);
  } else {
    EXPECT_EQ(first.lock, nullptr);
  }
  ASSERT_TRUE(*control_->deletePort({"one", "net1"}));
  EXPECT_EQ(control_->listPorts()[0].queue_pmds, expected) << "no queue moved";
  EXPECT_EQ(rxQueuesOf(mailboxes_, added->port.port_no), by_pmd);
}

// The PMDs send only on the tx queues the pod enabled (vhost-user refuses
// packets on the others): one enabled queue is shared under its lock, four
// give each PMD its own again. With several PMDs the change goes over three
// snapshots (old queues locked, new queues locked, new queues as they
// belong), so that no two PMDs ever send on one queue unlocked.
TEST_P(DataplaneControlTest, PmdsSendOnlyOnTheTxQueuesThePodEnabled) {
  const unsigned n_pmds = GetParam();
  RawPortRequest mq = request("mq", "10.244.1.10");
  mq.queues = 4;
  auto added = control_->addPort(mq);
  ASSERT_TRUE(added.ok()) << added.status();
  const uint16_t port_no = added->port.port_no;
  const uint16_t dpdk_port = backend_.live.empty() ? 0 : *backend_.live.begin();
  auto txOf = [&](unsigned p) { return mailboxes_[p]->published.load()->tx_ports[port_no]; };

  backend_.enabled_tx[dpdk_port] = 1;
  backend_.queue_change = true;
  uint64_t before = mailboxes_[0]->published.load()->version;
  control_->applyQueueStateChanges();
  EXPECT_EQ(mailboxes_[0]->published.load()->version - before, n_pmds > 1 ? 3u : 1u);
  for (unsigned p = 0; p < n_pmds; ++p) {
    EXPECT_EQ(txOf(p).queue, 0) << "PMD " << p;
    EXPECT_EQ(txOf(p).lock != nullptr, n_pmds > 1) << "PMD " << p;
  }
  if (n_pmds > 1) {
    EXPECT_EQ(txOf(0).lock, txOf(1).lock);
  }

  // Nothing changed: nothing published.
  before = mailboxes_[0]->published.load()->version;
  control_->applyQueueStateChanges();
  EXPECT_EQ(mailboxes_[0]->published.load()->version, before);

  backend_.enabled_tx[dpdk_port] = 4;
  backend_.queue_change = true;
  control_->applyQueueStateChanges();
  for (unsigned p = 0; p < n_pmds; ++p) {
    EXPECT_EQ(txOf(p).queue, p) << "PMD " << p;
    EXPECT_EQ(txOf(p).lock, nullptr) << "PMD " << p;
  }
  EXPECT_EQ(control_->listPorts()[0].queue_pmds.size(), 4u) << "rx placement is not touched";
}

// A pinned port's queues are all polled by its PMD.
TEST_P(DataplaneControlTest, APinnedMultiQueuePortHasEveryQueueOnItsPmd) {
  const unsigned last = GetParam() - 1;
  RawPortRequest r = request("pin", "10.244.1.10");
  r.queues = 3;
  r.pmd = last;
  auto added = control_->addPort(r);
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->port.queue_pmds, std::vector<unsigned>(3, last));
  EXPECT_EQ(rxQueuesOf(mailboxes_, added->port.port_no)[last], (std::vector<uint16_t>{0, 1, 2}));
}

// Queues: absent is 1, 0 and more than max-queues-per-port are refused
// naming the limit, and nothing is made.
TEST_P(DataplaneControlTest, QueuesAreOneByDefaultAndRefusedAtZeroOrAboveTheNodesMaximum) {
  auto plain = control_->addPort(request("plain", "10.244.1.10"));
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->port.request.queues, 1u);
  EXPECT_EQ(plain->port.queue_pmds.size(), 1u);
  RawPortRequest zero = request("zero", "10.244.1.11");
  zero.queues = 0;
  auto refused_zero = control_->addPort(zero);
  EXPECT_EQ(refused_zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused_zero.status().message().find("queues"), std::string::npos) << refused_zero.status();
  RawPortRequest many = request("many", "10.244.1.12");
  many.queues = config_.max_queues_per_port + 1u;
  auto refused_many = control_->addPort(many);
  EXPECT_EQ(refused_many.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused_many.status().message().find("max-queues-per-port 4"), std::string::npos) << refused_many.status();
  many.queues = config_.max_queues_per_port;
  EXPECT_TRUE(control_->addPort(many).ok()) << "the maximum itself is allowed";
  EXPECT_EQ(backend_.created.size(), 2u);
}

TEST_P(DataplaneControlTest, AddingTheSameAttachmentTwiceReturnsTheExistingPort) {
  auto first = control_->addPort(request("aaaa", "10.244.1.10"));
  auto again = control_->addPort(request("aaaa", "10.244.1.10"));
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_TRUE(first->created);
  EXPECT_FALSE(again->created);
  EXPECT_EQ(first->port.port_no, again->port.port_no);
  EXPECT_EQ(backend_.created.size(), 1u);
  // Same attachment, different IP: a conflict, and nothing changes.
  auto changed = control_->addPort(request("aaaa", "10.244.1.99"));
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(control_->listPorts()[0].request.ip.toString(), "10.244.1.10");
}

TEST_P(DataplaneControlTest, EachPortsSourcesReachThePmdsAndTheSettingIsAParameter) {
  RawPortRequest router = request("rrrr", "10.244.1.20");
  router.source_validation = false;
  auto a = control_->addPort(request("aaaa", "10.244.1.10"));
  auto r = control_->addPort(router);
  ASSERT_TRUE(a.ok() && r.ok());
  EXPECT_TRUE(a->port.request.source_validation);
  EXPECT_FALSE(r->port.request.source_validation);
  for (auto& m : mailboxes_) {
    const PmdSnapshot* snap = m->published.load();
    ASSERT_NE(snap->sources, nullptr);
    const PortSources* checked = snap->sources->checked(a->port.port_no);
    ASSERT_NE(checked, nullptr);
    EXPECT_EQ(checked->ipv4_be, Ipv4Address::parse("10.244.1.10")->networkOrder());
    EXPECT_EQ(std::memcmp(checked->mac, a->port.request.mac.bytes.data(), 6), 0);
    EXPECT_EQ(std::memcmp(checked->link_local, linkLocalFromMac(a->port.request.mac).bytes.data(), 16), 0);
    EXPECT_EQ(snap->sources->checked(r->port.port_no), nullptr) << "the router's sources are not checked";
  }
  // The same attachment asking for the other setting: a conflict.
  RawPortRequest flipped = request("aaaa", "10.244.1.10");
  flipped.source_validation = false;
  EXPECT_EQ(control_->addPort(flipped).status().code(), absl::StatusCode::kAlreadyExists);
  // A removed port's number is checked by nobody.
  ASSERT_TRUE(control_->deletePort({"aaaa", "net1"}).ok());
  EXPECT_EQ(mailboxes_[0]->published.load()->sources->checked(a->port.port_no), nullptr);
}

TEST_P(DataplaneControlTest, ConflictsAndFullTableAreRefusedWithoutChanges) {
  ASSERT_TRUE(control_->addPort(request("aaaa", "10.244.1.10")).ok());
  EXPECT_EQ(control_->addPort(request("bbbb", "10.244.1.10")).status().code(), absl::StatusCode::kAlreadyExists);
  RawPortRequest same_mac = request("bbbb", "10.244.1.11");
  same_mac.mac = MacAddress::fromIpv4(*Ipv4Address::parse("10.244.1.10")).toString();
  EXPECT_EQ(control_->addPort(same_mac).status().code(), absl::StatusCode::kAlreadyExists);
  for (int i = 1; i < 4; ++i)
    ASSERT_TRUE(control_->addPort(request("p" + std::to_string(i), "10.244.1." + std::to_string(20 + i))).ok());
  auto full = control_->addPort(request("eeee", "10.244.1.50"));
  EXPECT_EQ(full.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(full.status().message().find("full"), std::string::npos);
  EXPECT_EQ(control_->listPorts().size(), 4u);
  EXPECT_EQ(backend_.created.size(), 4u);
}

TEST_P(DataplaneControlTest, ABackendFailureLeavesNothingBehind) {
  backend_.fail_next = true;
  RawPortRequest r = request("aaaa", "10.244.1.10");
  r.socket_subdir = "pod-aaaa";
  EXPECT_EQ(control_->addPort(r).status().code(), absl::StatusCode::kInternal);
  EXPECT_TRUE(control_->listPorts().empty());
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/pod-aaaa"));
  // The number and address are free for the next request.
  auto ok = control_->addPort(r);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->port.port_no, 0);
  EXPECT_EQ(ok->port.socket_path, dir_ + "/pod-aaaa/net1.sock");
}

TEST_P(DataplaneControlTest, DeletingAnUnknownAttachmentSucceedsAndDeletingTwiceIsHarmless) {
  EXPECT_FALSE(*control_->deletePort({"nope", "net1"}));
  ASSERT_TRUE(control_->addPort(request("aaaa", "10.244.1.10")).ok());
  EXPECT_TRUE(*control_->deletePort({"aaaa", "net1"}));
  EXPECT_FALSE(*control_->deletePort({"aaaa", "net1"}));
  EXPECT_EQ(backend_.destroyed.size(), 1u);
  EXPECT_TRUE(backend_.live.empty());
  EXPECT_EQ(control_->deletePort({"../x", "net1"}).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_P(DataplaneControlTest, SriovIsNotImplementedYet) {
  RawPortRequest r = request("aaaa", "10.244.1.10");
  r.kind = PortKind::kSriovVf;
  EXPECT_EQ(control_->addPort(r).status().code(), absl::StatusCode::kUnimplemented);
}

TEST_P(DataplaneControlTest, StatisticsStartAtZeroForAReusedPortNumberAndClear) {
  ASSERT_TRUE(control_->addPort(request("aaaa", "10.244.1.10")).ok());
  // Pretend PMD 0 received packets on port 0, then the port goes away.
  counters_[0]->ports[0].rx_packets.add(5);
  counters_[0]->drops[static_cast<size_t>(DropReason::kNoRoute)].add(2);
  StatsView s = control_->stats();
  ASSERT_EQ(s.ports.size(), 1u);
  EXPECT_EQ(s.ports[0].rx_packets, 5u);
  EXPECT_EQ(s.drops[static_cast<size_t>(DropReason::kNoRoute)], 2u);
  ASSERT_TRUE(*control_->deletePort({"aaaa", "net1"}));
  ASSERT_TRUE(control_->addPort(request("bbbb", "10.244.1.11")).ok());
  s = control_->stats();
  ASSERT_EQ(s.ports.size(), 1u);
  EXPECT_EQ(s.ports[0].port_no, 0);
  EXPECT_EQ(s.ports[0].rx_packets, 0u);
  control_->clearStats();
  s = control_->stats();
  EXPECT_EQ(s.drops[static_cast<size_t>(DropReason::kNoRoute)], 0u);
  counters_[0]->ports[0].rx_packets.add(3);
  EXPECT_EQ(control_->stats().ports[0].rx_packets, 3u);
}

// Each rx queue's packets are summed over the PMDs that counted them (a
// queue that moved was counted by two), listed in port and queue order with
// the PMD polling it now, add up to the port's received packets as the PMDs
// count both, clear with the rest and start at zero for a reused number.
TEST_P(DataplaneControlTest, RxQueueCountsAreSummedOverPmdsClearedAndRestartedWithTheirPort) {
  RawPortRequest mq = request("mq", "10.244.1.10");
  mq.queues = 3;
  auto added = control_->addPort(mq);
  ASSERT_TRUE(added.ok()) << added.status();
  ASSERT_TRUE(control_->addPort(request("one", "10.244.1.11")).ok());
  const std::vector<unsigned> queue_pmds = added->port.queue_pmds;
  ASSERT_EQ(queue_pmds.size(), 3u);
  const size_t last = counters_.size() - 1;
  // As the PMDs count: one add per burst, to the queue and to the port.
  auto burst = [&](size_t pmd, uint16_t port_no, uint16_t queue, uint64_t n) {
    counters_[pmd]->rx_queue_packets[port_no][queue].add(n);
    counters_[pmd]->ports[port_no].rx_packets.add(n);
  };
  burst(0, 0, 0, 7);
  burst(last, 0, 1, 11);
  burst(0, 0, 2, 13);
  burst(last, 0, 2, 2);  // queue 2 counted by another PMD as well
  burst(0, 1, 0, 5);
  StatsView s = control_->stats();
  ASSERT_EQ(s.rx_queues.size(), 4u);
  uint64_t sum = 0;
  for (uint16_t q = 0; q < 3; ++q) {
    EXPECT_EQ(s.rx_queues[q].port_no, 0);
    EXPECT_EQ(s.rx_queues[q].queue, q);
    EXPECT_EQ(s.rx_queues[q].pmd, queue_pmds[q]);
    sum += s.rx_queues[q].packets;
  }
  EXPECT_EQ(s.rx_queues[0].packets, 7u);
  EXPECT_EQ(s.rx_queues[1].packets, 11u);
  EXPECT_EQ(s.rx_queues[2].packets, 15u);
  EXPECT_EQ(sum, s.ports[0].rx_packets);
  EXPECT_EQ(s.rx_queues[3].port_no, 1);
  EXPECT_EQ(s.rx_queues[3].queue, 0);
  EXPECT_EQ(s.rx_queues[3].packets, 5u);

  control_->clearStats();
  burst(0, 0, 1, 4);
  s = control_->stats();
  EXPECT_EQ(s.rx_queues[0].packets, 0u);
  EXPECT_EQ(s.rx_queues[1].packets, 4u);
  EXPECT_EQ(s.rx_queues[2].packets, 0u);
  EXPECT_EQ(s.rx_queues[3].packets, 0u);

  // Port 0 re-made as a single-queue port: its one queue starts from zero.
  ASSERT_TRUE(*control_->deletePort({"mq", "net1"}));
  ASSERT_TRUE(control_->addPort(request("again", "10.244.1.12")).ok());
  s = control_->stats();
  ASSERT_EQ(s.rx_queues.size(), 2u);
  EXPECT_EQ(s.rx_queues[0].port_no, 0);
  EXPECT_EQ(s.rx_queues[0].packets, 0u);
  burst(0, 0, 0, 9);
  EXPECT_EQ(control_->stats().rx_queues[0].packets, 9u);
}

TEST_P(DataplaneControlTest, HealthIsReadyOnceEveryPmdRuns) {
  for (auto& m : mailboxes_)
    while (!m->running.load()) std::this_thread::yield();
  HealthView h = control_->health();
  EXPECT_TRUE(h.ready);
  EXPECT_EQ(h.pmds, GetParam());
  EXPECT_EQ(h.max_ports, 4u);
  mailboxes_[0]->stop.store(true);
  while (mailboxes_[0]->running.load()) std::this_thread::yield();
  EXPECT_FALSE(control_->health().ready);
}

// Live settings reach every PMD in a snapshot that carries them (a new
// settings generation, which makes the PMD apply them at its quiescent
// point), acknowledged before applyLiveSettings returns; the first
// snapshots carry generation 0 (the PMD keeps what it was made with).
TEST_P(DataplaneControlTest, LiveSettingsReachEveryPmdBeforeTheCallReturns) {
  for (PmdMailbox* m : mailboxes_) EXPECT_EQ(m->published.load()->settings.generation, 0u);
  SluicedConfig live = config_;
  live.tx_flush_interval_us = 50;
  live.emc_insert_inv_prob = 0;
  live.smc_enable = false;
  live.upcall_rate = 300;
  live.upcall_burst = 7;
  control_->applyLiveSettings(live);
  for (size_t p = 0; p < mailboxes_.size(); ++p) {
    const PmdSnapshot* snap = mailboxes_[p]->published.load();
    EXPECT_EQ(snap->settings.generation, 1u);
    EXPECT_EQ(snap->settings.emc_insert_inv_prob, 0u);
    EXPECT_FALSE(snap->settings.smc_enable);
    EXPECT_EQ(snap->settings.upcall_rate, 300u);
    EXPECT_EQ(snap->settings.upcall_burst, 7u);
    EXPECT_EQ(snap->tx_flush_cycles, 2'600u * 50u);
    EXPECT_TRUE(pmds_[p]->caughtUp()) << "acknowledged before the call returned";
  }
  EXPECT_EQ(control_->stats().tx_flush_interval_us, 50u);
  // Later snapshots (any change) carry them on.
  ASSERT_TRUE(control_->addPort(request("aaaa", "10.244.1.10")).ok());
  EXPECT_EQ(mailboxes_[0]->published.load()->settings.upcall_rate, 300u);
  EXPECT_EQ(mailboxes_[0]->published.load()->settings.generation, 1u);
}

INSTANTIATE_TEST_SUITE_P(Pmds, DataplaneControlTest, ::testing::Values(1u, 2u));

}  // namespace
}  // namespace sluice
