// Live settings on the real sluiced: set through the API and read back,
// restart-only keys refused, the --config file re-read when it changes (as a
// Kubernetes ConfigMap volume changes it: a `..data` symlink swap), and a
// live value taking effect in the datapath. Every wait is on a condition
// read through the API or sluiced's log, with a generous deadline.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
// Named, not anonymous: the program is a unity build, and this file's
// helpers share names with another file's.
namespace live_config_test {

namespace fs = std::filesystem;

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.30");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.31");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kMacA = MacAddress::fromIpv4(kIpA);
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);

// A ConfigMap volume's layout: sluiced.json -> ..data/sluiced.json,
// ..data -> ..<version>; update() swaps ..data as the kubelet does.
class ConfigMapDir {
 public:
  explicit ConfigMapDir(std::string dir) : dir_(std::move(dir)) {
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~ConfigMapDir() { fs::remove_all(dir_); }
  std::string file() const { return dir_ + "/sluiced.json"; }

  void update(const std::string& text) {
    const std::string version = "..v" + std::to_string(++version_);
    fs::create_directories(dir_ + "/" + version);
    std::ofstream(dir_ + "/" + version + "/sluiced.json") << text;
    fs::create_directory_symlink(version, dir_ + "/..data_tmp");
    fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
    if (version_ > 1) fs::remove_all(dir_ + "/..v" + std::to_string(version_ - 1));
    else fs::create_symlink("..data/sluiced.json", file());
  }

 private:
  std::string dir_;
  int version_ = 0;
};

class LiveConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_NE(podPool(), nullptr);
    config_.update(R"({"upcall-rate": 500, "log-level": "info", "flow-limit": 100000})");
    SluicedOptions options;
    options.extra_flags = {"--config", config_.file()};
    std::string error;
    node_ = SluicedProcess::start(options, &error);
    ASSERT_NE(node_, nullptr) << error;
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  grpc::Status set(const std::string& key, const std::string& value, v1::SetConfigResponse* resp = nullptr) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::SetConfigRequest req;
    req.set_key(key);
    req.set_value(value);
    v1::SetConfigResponse r;
    return node_->api().SetConfig(&ctx, req, resp != nullptr ? resp : &r);
  }
  v1::ConfigSetting get(const std::string& key) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::GetConfigRequest req;
    req.set_key(key);
    v1::GetConfigResponse r;
    grpc::Status s = node_->api().GetConfig(&ctx, req, &r);
    EXPECT_TRUE(s.ok()) << key << ": " << s.error_message();
    EXPECT_EQ(r.settings_size(), 1) << key;
    return r.settings_size() == 1 ? r.settings(0) : v1::ConfigSetting{};
  }

  void startPods() {
    v1::AddPortResponse a, b;
    ASSERT_TRUE(node_->addPort(portRequest("pod-la", kIpA.toString()), &a).ok());
    ASSERT_TRUE(node_->addPort(portRequest("pod-lb", kIpB.toString()), &b).ok());
    auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
    ASSERT_TRUE(pa.ok()) << pa.status();
    ASSERT_TRUE(pb.ok()) << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(a.port().port_no())) << node_->log();
    ASSERT_TRUE(node_->waitLinkUp(b.port().port_no())) << node_->log();
  }
  // n frames from A to B over k flows (source ports), all delivered.
  void sendFlows(size_t first, size_t n, size_t k) {
    std::vector<Frame> frames;
    for (size_t i = first; i < first + n; ++i) {
      UdpFrameSpec s{kMacA, kGatewayMac, kIpA, kIpB};
      s.sequence = static_cast<uint32_t>(i);
      s.src_port = static_cast<uint16_t>(4000 + i % k);
      frames.push_back(udpFrame(s));
    }
    ASSERT_EQ(pod_a_->send(frames), frames.size());
    ASSERT_EQ(pod_b_->receive(frames.size()).size(), frames.size()) << node_->stats().DebugString();
  }

  ConfigMapDir config_{::testing::TempDir() + "/live-config-" + std::to_string(::getpid())};
  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
};

TEST_F(LiveConfigTest, LiveKeysSetThroughTheApiReadBack) {
  v1::SetConfigResponse resp;
  ASSERT_TRUE(set("tx-flush-interval", "50", &resp).ok());
  EXPECT_EQ(resp.setting().value(), "50");
  ASSERT_TRUE(set("upcall-rate", "300").ok());
  ASSERT_TRUE(set("log-level", "debug").ok());
  for (auto [key, value] : {std::pair{"tx-flush-interval", "50"}, std::pair{"upcall-rate", "300"},
                            std::pair{"log-level", "debug"}}) {
    v1::ConfigSetting s = get(key);
    EXPECT_EQ(s.value(), value) << key;
    EXPECT_TRUE(s.live()) << key;
    EXPECT_EQ(s.source(), v1::CONFIG_SOURCE_API) << key;
  }
  // The statistics report the flush interval the PMDs now run with.
  EXPECT_EQ(node_->stats().tx_flush_interval_us(), 50u);
  // Every key is listed, each with where its value came from.
  grpc::ClientContext ctx;
  v1::GetConfigResponse all;
  ASSERT_TRUE(node_->api().GetConfig(&ctx, {}, &all).ok());
  EXPECT_GT(all.settings_size(), 20);
  EXPECT_EQ(get("flow-limit").source(), v1::CONFIG_SOURCE_FILE);
  EXPECT_EQ(get("mbufs").source(), v1::CONFIG_SOURCE_FLAG);
  EXPECT_EQ(get("emc-entries").source(), v1::CONFIG_SOURCE_DEFAULT);

  // sluicectl: the same calls.
  CommandResult r = sluicectl(node_->apiSocket(), "config set upcall-burst 64");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  r = sluicectl(node_->apiSocket(), "config get upcall-burst");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("upcall-burst"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("64"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("live"), std::string::npos) << r.output;
}

// icmp-error-rate 0 stops the PMD's Time Exceeded answers (counted as held
// back); set again, the errors come back, exactly one per expired packet.
TEST_F(LiveConfigTest, IcmpErrorRateIsLive) {
  auto expired = [](uint32_t first, uint32_t n) {
    std::vector<Frame> frames;
    for (uint32_t i = first; i < first + n; ++i) {
      UdpFrameSpec s{kMacA, kGatewayMac, kIpA, kIpB};
      s.ttl = 1;
      s.sequence = i;
      frames.push_back(udpFrame(s));
    }
    return frames;
  };
  startPods();
  ASSERT_TRUE(set("icmp-error-rate", "0").ok());
  ASSERT_EQ(pod_a_->send(expired(0, 3)), 3u);
  sendFlows(0, 1, 1);  // once it arrives, the expired ones before it were processed
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(dropCount(s, "ttl_exceeded"), 3u);
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 0u);
  EXPECT_EQ(s.pmds(0).icmp_errors_rate_limited(), 3u);
  EXPECT_EQ(pod_a_->drainCount(), 0u);

  ASSERT_TRUE(set("icmp-error-rate", "1000").ok());
  const std::vector<Frame> answered = expired(3, 2);
  ASSERT_EQ(pod_a_->send(answered), 2u);
  std::vector<Frame> errors = pod_a_->receive(2);
  ASSERT_EQ(errors.size(), 2u);
  for (size_t i = 0; i < errors.size(); ++i)
    EXPECT_EQ(errors[i], icmpTimeExceeded(answered[i], kGatewayMac, kGateway)) << i;
  s = node_->stats();
  EXPECT_EQ(s.pmds(0).icmp_errors_sent(), 2u);
  EXPECT_EQ(s.pmds(0).icmp_errors_rate_limited(), 3u);
}

TEST_F(LiveConfigTest, RestartOnlyUnknownAndBadSettingsAreRefused) {
  grpc::Status s = set("mbufs", "4096");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_NE(s.error_message().find("restart"), std::string::npos) << s.error_message();
  EXPECT_EQ(get("mbufs").value(), "16384");
  s = set("upcall-speed", "1");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("unknown setting"), std::string::npos) << s.error_message();
  s = set("upcall-rate", "fast");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_EQ(get("upcall-rate").value(), "500");

  CommandResult r = sluicectl(node_->apiSocket(), "config set pmd-cores 2");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("FAILED_PRECONDITION"), std::string::npos) << r.output;
  r = sluicectl(node_->apiSocket(), "config get");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("restart"), std::string::npos) << r.output;
}

TEST_F(LiveConfigTest, ConfigMapUpdateChangesLiveKeysOnlyAndAnInvalidOneNothing) {
  EXPECT_EQ(get("upcall-rate").value(), "500");
  EXPECT_EQ(get("upcall-rate").source(), v1::CONFIG_SOURCE_FILE);
  // A live key and a restart-only one change: the first is applied.
  config_.update(R"({"upcall-rate": 700, "log-level": "info", "flow-limit": 50000})");
  ASSERT_TRUE(waitFor([&] { return get("upcall-rate").value() == "700"; })) << node_->log();
  EXPECT_EQ(get("upcall-rate").source(), v1::CONFIG_SOURCE_FILE);
  ASSERT_TRUE(waitFor([&] {
    return node_->log().find("flow-limit changed in the config file: needs a restart") != std::string::npos;
  })) << node_->log();
  EXPECT_EQ(get("flow-limit").value(), "100000");

  // An invalid file: logged, nothing changes.
  config_.update(R"({"upcall-rate": 900, "log-level": "chatty", "flow-limit": 50000})");
  ASSERT_TRUE(waitFor([&] { return node_->log().find("config file not applied") != std::string::npos; }))
      << node_->log();
  EXPECT_EQ(get("upcall-rate").value(), "700");
  EXPECT_EQ(get("log-level").value(), "info");

  // Fixed again: applied; the restart-only change was reported once.
  config_.update(R"({"upcall-rate": 900, "log-level": "info", "flow-limit": 50000})");
  ASSERT_TRUE(waitFor([&] { return get("upcall-rate").value() == "900"; })) << node_->log();
  const std::string log = node_->log();
  size_t reports = 0;
  for (size_t at = log.find("flow-limit changed"); at != std::string::npos; at = log.find("flow-limit changed", at + 1))
    ++reports;
  EXPECT_EQ(reports, 1u) << log;
}

TEST_F(LiveConfigTest, TurningTheEmcOffTakesEffectInTheDatapath) {
  startPods();
  // Every miss cached in the EMC: a flow's packets after its first hit it.
  ASSERT_TRUE(set("emc-insert-inv-prob", "1").ok());
  constexpr size_t kFlows = 50, kRound = 400;
  for (size_t r = 0; r < 4; ++r) sendFlows(r * kRound, kRound, kFlows);
  EXPECT_GT(node_->stats().pmds(0).emc_hits(), 0u) << node_->stats().DebugString();

  // EMC off: from the reply on, no packet is resolved there; the same flows
  // hit the lower tiers.
  ASSERT_TRUE(set("emc-insert-inv-prob", "0").ok());
  grpc::ClientContext ctx;
  v1::ClearStatsResponse cleared;
  ASSERT_TRUE(node_->api().ClearStats(&ctx, {}, &cleared).ok());
  for (size_t r = 4; r < 8; ++r) sendFlows(r * kRound, kRound, kFlows);
  const v1::PmdStats p = node_->stats().pmds(0);
  EXPECT_EQ(p.emc_hits(), 0u) << p.DebugString();
  EXPECT_GT(p.smc_hits() + p.megaflow_hits(), 0u) << p.DebugString();
}

}  // namespace live_config_test
}  // namespace sluice::test

namespace sluice::test {
namespace live_config_test {

TEST_F(LiveConfigTest, AllowingThePmdToSleepTakesEffectAndTurningItOffStopsIt) {
  startPods();
  auto sleeps = [&] { return node_->stats().pmds(0).sleeps(); };
  // Busy-polling (the default): a quiet PMD that has been through a full
  // snapshot hand-over (the set below) has still never slept.
  EXPECT_EQ(sleeps(), 0u);
  ASSERT_TRUE(set("pmd-max-sleep-us", "300").ok());
  EXPECT_EQ(get("pmd-max-sleep-us").value(), "300");
  bool slept = false;
  for (int i = 0; i < 2000 && !slept; ++i) {
    slept = sleeps() > 0;
    if (!slept) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(slept) << node_->stats().DebugString();
  sendFlows(0, 200, 4);  // and it still forwards everything

  // Off again: once SetConfig has returned every PMD has the new settings,
  // so the count stops where it is, even across more quiet iterations.
  ASSERT_TRUE(set("pmd-max-sleep-us", "0").ok());
  const uint64_t after_off = sleeps();
  const uint64_t idle_before = node_->stats().pmds(0).idle_cycles();
  while (node_->stats().pmds(0).idle_cycles() < idle_before + 1'000'000) std::this_thread::yield();
  EXPECT_EQ(sleeps(), after_off);
}

}  // namespace live_config_test
}  // namespace sluice::test
