// The real grace periods of partial offload's marks: requested by the
// offload side, served by DataplaneControl's flow thread, which publishes a
// snapshot and completes the request only once every running PMD has
// acknowledged it at its quiescent point. The PMD is a fake thread that
// follows the mailbox protocol and acknowledges only when the test lets it,
// so the ordering is checked without timing.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/offload/offload_manager.h"
#include "dataplane/modules/offload/offload_module.h"
#include "tests/support/fake_control.h"

namespace sluice::offload {
namespace {

class IdleProvider final : public OffloadProvider {
 public:
  const char* name() const override { return "idle"; }
  ProviderCaps caps() const override { return {true, true, false}; }
  Capability probe(uint16_t, uint16_t) override { return {false, "idle"}; }
  void detach(uint16_t) override {}
  absl::Status validate(uint16_t, const FlowPattern&, uint32_t) override { return absl::OkStatus(); }
  absl::StatusOr<RuleHandle> create(uint16_t, const FlowPattern&, uint32_t) override { return 1; }
  absl::Status destroy(uint16_t, RuleHandle) override { return absl::OkStatus(); }
  absl::Status flush(uint16_t) override { return absl::OkStatus(); }
  bool sync() override { return true; }
};

// A PMD that picks up snapshots and classifiers as Pmd::run does, but
// acknowledges a snapshot only while `may_ack` is set.
struct SteppedPmd {
  void run() {
    mailbox.running.store(true, std::memory_order_seq_cst);
    const PmdSnapshot* current = nullptr;
    while (!mailbox.stop.load()) {
      const flow::Classifier* c = mailbox.classifier.load(std::memory_order_seq_cst);
      mailbox.classifier_acked.store(c, std::memory_order_release);
      const PmdSnapshot* s = mailbox.published.load(std::memory_order_seq_cst);
      if (s != current && may_ack.load()) {
        current = s;
        mailbox.acked_version.store(s != nullptr ? s->version : 0, std::memory_order_release);
      }
      std::this_thread::yield();
    }
    mailbox.running.store(false);
  }
  PmdContext context;
  PmdMailbox& mailbox = context.mailbox;
  std::atomic<bool> may_ack{true};
};

TEST(PmdGracePeriodsTest, ARequestPassesOnlyAfterEveryPmdAcknowledgedASnapshotPublishedAfterIt) {
  SluicedConfig config;
  config.socket_dir = ::testing::TempDir();
  SteppedPmd pmd;
  pmd.context.lcore = 1;
  pmd.context.megaflows = std::make_unique<flow::MegaflowTable>(64);
  test::FakePortBackend backend;
  backend.refuse_all = true;  // no ports in this test
  OffloadManager manager(std::make_unique<IdleProvider>(), 4);
  DataplaneControl control(config, backend, {&pmd.context}, 1'000'000'000);
  OffloadModule module(control, manager, {});
  control.start();
  std::thread pmd_thread([&] { pmd.run(); });
  while (!pmd.mailbox.running.load()) std::this_thread::yield();
  const uint64_t before = pmd.mailbox.published.load()->version;
  while (pmd.mailbox.acked_version.load() != before) std::this_thread::yield();

  pmd.may_ack.store(false);
  PmdGracePeriods& grace = manager.pmdGracePeriods();
  const uint64_t token = grace.request();
  // The flow thread publishes a new snapshot for it...
  while (pmd.mailbox.published.load()->version == before) std::this_thread::yield();
  const uint64_t published = pmd.mailbox.published.load()->version;
  // ...but the PMD has not passed its quiescent point since: not yet.
  EXPECT_FALSE(grace.passed(token));
  EXPECT_LT(pmd.mailbox.acked_version.load(), published);

  pmd.may_ack.store(true);
  while (!grace.passed(token)) std::this_thread::yield();
  EXPECT_GE(pmd.mailbox.acked_version.load(), published);

  control.stopFlowThread();
  pmd.mailbox.stop.store(true);
  pmd_thread.join();
}

}  // namespace
}  // namespace sluice::offload
