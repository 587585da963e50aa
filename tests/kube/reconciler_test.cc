// The reconcile loop against a stand-in sluiced (sluice.v1.RemoteNodes over
// a unix socket, in this process): how many calls a burst of Node changes
// costs. The stand-in can hold its first ApplyNodes open, so that a burst
// lands in the NodeCache while a pass is under way, as it does when events
// arrive faster than sluiced applies them.
#include "agent/reconciler.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

namespace sluice::agent {
namespace {

using namespace std::chrono_literals;

class StandInSluiced final : public v1::RemoteNodes::Service {
 public:
  grpc::Status ListNodes(grpc::ServerContext*, const v1::ListNodesRequest*, v1::ListNodesResponse* resp) override {
    std::lock_guard lock(mutex_);
    ++lists;
    for (const auto& [name, n] : table_) *resp->add_nodes() = n;
    resp->mutable_overlay()->set_vtep("192.168.77.1");
    resp->mutable_overlay()->set_vtep_mac("02:00:00:00:77:01");
    resp->mutable_overlay()->set_vni(7);
    if (reported_) resp->mutable_controller()->set_node_name("self");
    resp->set_instance(instance_);
    return grpc::Status::OK;
  }
  grpc::Status ApplyNodes(grpc::ServerContext*, const v1::ApplyNodesRequest* req,
                          v1::ApplyNodesResponse* resp) override {
    std::unique_lock lock(mutex_);
    batches.push_back(req->ops_size());
    reports_since_batch_ = 0;
    changed_.notify_all();
    changed_.wait(lock, [&] { return !hold_first_ || batches.size() > 1 || released_; });
    for (const v1::NodeOp& op : req->ops()) {
      v1::NodeOpResult* r = resp->add_results();
      if (op.has_put()) {
        r->set_name(op.put().name());
        auto [it, created] = table_.insert_or_assign(op.put().name(), op.put());
        r->set_created(created);
        r->set_updated(!created);
      } else {
        r->set_name(op.remove());
        r->set_removed(table_.erase(op.remove()) > 0);
      }
    }
    resp->set_instance(instance_);
    changed_.notify_all();
    return grpc::Status::OK;
  }
  grpc::Status ReportController(grpc::ServerContext*, const v1::ReportControllerRequest*,
                                v1::ReportControllerResponse* resp) override {
    std::lock_guard lock(mutex_);
    reported_ = true;
    ++reports_since_batch_;
    resp->set_instance(instance_);
    changed_.notify_all();
    return grpc::Status::OK;
  }

  void holdFirstBatch() { hold_first_ = true; }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    changed_.notify_all();
  }
  // As a sluiced that restarted with an empty checkpoint: nothing held, no
  // report, another instance.
  void restart() {
    std::lock_guard lock(mutex_);
    table_.clear();
    reported_ = false;
    instance_ = "second";
  }
  // Waits (bounded, as a test must end) until `pred` holds under the lock.
  template <typename Pred>
  bool waitFor(Pred pred) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 60s, [&] { return pred(); });
  }
  // name → VTEP of what the table holds; under the lock (waitFor's pred).
  std::map<std::string, std::string> vtepsLocked() const {
    std::map<std::string, std::string> out;
    for (const auto& [name, n] : table_) out[name] = n.vtep();
    return out;
  }
  std::vector<int> batchesLocked() const { return batches; }
  // `count` batches came and the pass that sent the last one is over (it
  // reports last, with its counters).
  bool passDoneLocked(size_t count) const { return batches.size() == count && reports_since_batch_ > 0; }

  int lists = 0;
  std::vector<int> batches;  // ops per ApplyNodes, in order

 private:
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, v1::RemoteNode> table_;
  bool reported_ = false;
  int reports_since_batch_ = 0;
  bool hold_first_ = false;
  bool released_ = false;
  std::string instance_ = "first";
};

KubeNode kubeNode(int i, int vtep_base = 0) {
  KubeNode n;
  n.name = "n" + std::to_string(i);
  n.pod_cidrs = {Ipv4Cidr{Ipv4Address{(10u << 24) | (200u << 16) | (static_cast<uint32_t>(i) << 8)}, 24}};
  n.ready = true;
  const Ipv4Address vtep{(172u << 24) | (16u << 16) | static_cast<uint32_t>(vtep_base + i + 1)};
  n.vtep = VtepInfo{vtep, MacAddress::fromIpv4(vtep), 7};
  n.internal_ips = {vtep};
  return n;
}

std::map<std::string, std::string> expectedVteps(int count, int vtep_base, int changed) {
  std::map<std::string, std::string> out;
  for (int i = 0; i < count; ++i) out[kubeNode(i).name] = kubeNode(i, i < changed ? vtep_base : 0).vtep->vtep.toString();
  return out;
}

class ReconcilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = ::testing::TempDir() + "/sluice-agent-batch-" + std::to_string(::getpid()) + ".sock";
    std::filesystem::remove(socket_);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(&sluiced_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    stop_ = true;
    cache_.wake();
    if (loop_.joinable()) loop_.join();
    server_->Shutdown();
    std::filesystem::remove(socket_);
  }
  // The API listed `count` Nodes; the watch is open.
  void listed(int count) {
    std::map<std::string, KubeNode> nodes;
    for (int i = 0; i < count; ++i) nodes[kubeNode(i).name] = kubeNode(i);
    cache_.replaceAll(std::move(nodes), "1");
    cache_.setSynced(true);
  }
  void start(size_t max_batch) {
    ReconcileSettings s;
    s.own_name = "self";
    s.resync_interval = 3600s;  // no periodic pass within the test
    s.max_batch = max_batch;
    client_ = std::make_unique<SluicedClient>(socket_, 10s);
    KubeConfig never_called;  // only this node's own Node is patched, and it is not among the Nodes
    never_called.server = "https://127.0.0.1:1";
    kube_ = std::make_unique<KubeClient>(never_called, &stop_, 1s);
    reconciler_ = std::make_unique<Reconciler>(s, cache_, *client_, *kube_, stop_);
    loop_ = std::thread([this] { reconciler_->run(); });
  }
  uint64_t counter(AgentCounter c) { return cache_.snapshot().counters.at(agentCounterName(c)); }

  std::string socket_;
  StandInSluiced sluiced_;
  std::unique_ptr<grpc::Server> server_;
  NodeCache cache_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<SluicedClient> client_;
  std::unique_ptr<KubeClient> kube_;
  std::unique_ptr<Reconciler> reconciler_;
  std::thread loop_;
};

TEST_F(ReconcilerTest, ABurstThatArrivesDuringAPassIsOneBatchWithNoListing) {
  listed(200);
  sluiced_.holdFirstBatch();
  start(2000);
  // The first pass: one listing, all 200 in one batch (held open here).
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.batches.size() == 1; }));
  // Meanwhile 150 Nodes get a new VTEP and 10 others are deleted.
  for (int i = 0; i < 150; ++i) cache_.upsert(kubeNode(i, 1000), "2");
  for (int i = 190; i < 200; ++i) cache_.erase(kubeNode(i).name, "3");
  sluiced_.release();
  std::map<std::string, std::string> want = expectedVteps(190, 1000, 150);
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.vtepsLocked() == want; }));
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.passDoneLocked(2); }));
  EXPECT_EQ(sluiced_.batchesLocked(), (std::vector<int>{200, 160})) << "the burst is one batch";
  EXPECT_EQ(sluiced_.lists, 1) << "the agent's own copy of the table, not a listing per pass";
  EXPECT_EQ(counter(AgentCounter::k_sluiced_batches), 2u);
  EXPECT_EQ(counter(AgentCounter::k_sluiced_lists), 1u);
  EXPECT_EQ(counter(AgentCounter::k_nodes_added), 200u);
  EXPECT_EQ(counter(AgentCounter::k_nodes_updated), 150u);
  EXPECT_EQ(counter(AgentCounter::k_nodes_removed), 10u);
}

TEST_F(ReconcilerTest, APlanLargerThanTheBatchSizeGoesInBatchesOfThatSize) {
  listed(200);
  start(64);
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.vtepsLocked() == expectedVteps(200, 0, 0); }));
  EXPECT_EQ(sluiced_.batchesLocked(), (std::vector<int>{64, 64, 64, 8}));
  EXPECT_EQ(sluiced_.lists, 1);
}

TEST_F(ReconcilerTest, AReplyFromARestartedSluicedMakesTheAgentReadItsTableAgain) {
  listed(50);
  start(2000);
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.vtepsLocked() == expectedVteps(50, 0, 0); }));
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.passDoneLocked(1); }));
  sluiced_.restart();
  // One change: planned on the copy (one op), answered by another
  // instance → listed again and the other 49 put back.
  cache_.upsert(kubeNode(0, 1000), "2");
  const std::map<std::string, std::string> want = expectedVteps(50, 1000, 1);
  ASSERT_TRUE(sluiced_.waitFor([&] { return sluiced_.vtepsLocked() == want && sluiced_.passDoneLocked(3); }));
  EXPECT_EQ(sluiced_.batchesLocked(), (std::vector<int>{50, 1, 49}));
  EXPECT_EQ(sluiced_.lists, 2);
  EXPECT_EQ(counter(AgentCounter::k_sluiced_resyncs), 2u) << "first contact, and the restart";
}

}  // namespace
}  // namespace sluice::agent
