// Live and restart-only settings: which keys are which, SetConfig's checks
// and status codes, and re-reading the --config files.
#include "dataplane/config/runtime_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dataplane/config/config_keys.h"

namespace sluice {
namespace {

absl::StatusOr<SluicedArgs> parseArgs(std::vector<const char*> args) {
  args.insert(args.begin(), "sluiced");
  return parseSluicedArgs(static_cast<int>(args.size()), args.data());
}

bool live(const char* key) {
  const ConfigKey* k = findConfigKey(key);
  EXPECT_NE(k, nullptr) << key;
  return k != nullptr && isLive(*k);
}

TEST(ConfigReloadTest, KeysThatChangeWhileRunningAreLive) {
  for (const char* key : {"log-level", "tx-flush-interval", "emc-insert-inv-prob", "smc-enable",
                          "flow-idle-timeout-ms", "upcall-rate", "upcall-burst", "icmp-error-rate", "gc-interval-ms",
                          "checkpoint-fsync"})
    EXPECT_TRUE(live(key)) << key;
}

TEST(ConfigReloadTest, KeysSizedOrOpenedAtStartNeedARestart) {
  for (const char* key : {"eal", "pmd-cores", "main-core", "mbufs", "max-ports", "socket-dir", "api-socket",
                          "state-dir", "emc-entries", "pod-cidr", "gateway", "gateway-mac", "pod-cidr-v6",
                          "gateway-v6", "flow-limit",
                          "offload-provider", "offload-max-flows", "offload-port", "allow-vdev-ports",
                          "sysfs-root", "sriov-pf-control"})
    EXPECT_FALSE(live(key)) << key;
}

TEST(ConfigReloadTest, HelpSaysWhichKeysNeedARestart) {
  auto help = parseArgs({"--help"});
  ASSERT_EQ(help.status().code(), absl::StatusCode::kCancelled);
  const std::string text(help.status().message());
  for (const ConfigKey& key : configKeys()) {
    if (key.kind == ConfigKeyKind::kFileOnly) continue;
    const size_t at = text.find(std::string("--") + key.name + " ");
    ASSERT_NE(at, std::string::npos) << key.name;
    const std::string line = text.substr(at, text.find("\n  --", at + 1) - at);
    EXPECT_NE(line.find(isLive(key) ? "(live)" : "(restart)"), std::string::npos) << line;
  }
}

class RuntimeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/runtime-config-" + std::to_string(::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/sluiced.json";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void writeFile(const std::string& text) { std::ofstream(path_) << text; }

  // A RuntimeConfig over sluiced's arguments; what it hands the dataplane
  // is recorded in applied_.
  std::unique_ptr<RuntimeConfig> make(std::vector<const char*> args) {
    auto parsed = parseArgs(std::move(args));
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    if (!parsed.ok()) return nullptr;
    return std::make_unique<RuntimeConfig>(*parsed, [this](const SluicedConfig& c) { applied_.push_back(c); });
  }

  std::string dir_;
  std::string path_;
  std::vector<SluicedConfig> applied_;
};

TEST_F(RuntimeConfigTest, GetReportsEveryKeyWithValueLivenessAndSource) {
  writeFile(R"({"upcall-rate": 500, "mbufs": 4096})");
  auto rc = make({"--config", path_.c_str(), "--log-level", "debug"});
  std::vector<ConfigEntry> entries = rc->entries();
  ASSERT_EQ(entries.size(), configKeys().size());
  auto find = [&](const std::string& key) {
    for (const ConfigEntry& e : entries)
      if (e.key == key) return e;
    ADD_FAILURE() << key;
    return ConfigEntry{};
  };
  EXPECT_EQ(find("upcall-rate").value, "500");
  EXPECT_EQ(find("upcall-rate").source, ConfigSource::kFile);
  EXPECT_TRUE(find("upcall-rate").live);
  EXPECT_EQ(find("mbufs").value, "4096");
  EXPECT_FALSE(find("mbufs").live);
  EXPECT_EQ(find("log-level").value, "debug");
  EXPECT_EQ(find("log-level").source, ConfigSource::kFlag);
  EXPECT_EQ(find("flow-limit").source, ConfigSource::kDefault);
  EXPECT_EQ(rc->entry("no-such-key").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(RuntimeConfigTest, SetAppliesALiveKeyAndRecordsTheApiAsItsSource) {
  auto rc = make({});
  auto e = rc->set("upcall-rate", "1234");
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->value, "1234");
  EXPECT_EQ(e->source, ConfigSource::kApi);
  ASSERT_EQ(applied_.size(), 1u);
  EXPECT_EQ(applied_[0].upcall_rate, 1234u);
  EXPECT_EQ(rc->current().upcall_rate, 1234u);
  EXPECT_EQ(rc->entry("upcall-rate")->source, ConfigSource::kApi);
  // Booleans as the flags take them.
  ASSERT_TRUE(rc->set("smc-enable", "false").ok());
  EXPECT_FALSE(applied_.back().smc_enable);
}

TEST_F(RuntimeConfigTest, SetChecksValuesAsTheFlagsDo) {
  auto rc = make({});
  struct Case {
    const char* key;
    const char* value;
  };
  for (Case c : {Case{"upcall-rate", "0"}, Case{"upcall-rate", "fast"}, Case{"tx-flush-interval", "2000000"},
                 Case{"log-level", "loud"}, Case{"smc-enable", "maybe"}, Case{"flow-idle-timeout-ms", "5"},
                 Case{"emc-insert-inv-prob", "-1"}}) {
    auto e = rc->set(c.key, c.value);
    EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument) << c.key << "=" << c.value;
    EXPECT_NE(e.status().message().find(c.key), std::string::npos) << e.status();
    // The same text is refused by the flag of that name.
    const std::string flag = std::string("--") + c.key;
    EXPECT_FALSE(parseArgs({flag.c_str(), c.value}).ok()) << flag << " " << c.value;
  }
  EXPECT_TRUE(applied_.empty());
  EXPECT_EQ(rc->current().upcall_rate, SluicedConfig{}.upcall_rate);
}

TEST_F(RuntimeConfigTest, SetRefusesAnUnknownKey) {
  auto rc = make({});
  auto e = rc->set("upcall-speed", "10");
  EXPECT_EQ(e.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(e.status().message().find("unknown setting"), std::string::npos) << e.status();
  EXPECT_TRUE(applied_.empty());
}

TEST_F(RuntimeConfigTest, SetRefusesEveryRestartOnlyKeySayingItNeedsARestart) {
  auto rc = make({});
  const SluicedConfig defaults;
  for (const ConfigKey& key : configKeys()) {
    if (isLive(key)) continue;
    auto e = rc->set(key.name, key.value_text(defaults));
    EXPECT_EQ(e.status().code(), absl::StatusCode::kFailedPrecondition) << key.name;
    EXPECT_NE(e.status().message().find("needs a restart"), std::string::npos) << e.status();
    EXPECT_NE(e.status().message().find(key.name), std::string::npos) << e.status();
  }
  EXPECT_TRUE(applied_.empty());
}

TEST_F(RuntimeConfigTest, EveryLiveKeyTakesItsDefaultBack) {
  auto rc = make({});
  const SluicedConfig defaults;
  for (const ConfigKey& key : configKeys()) {
    if (!isLive(key)) continue;
    auto e = rc->set(key.name, key.value_text(defaults));
    ASSERT_TRUE(e.ok()) << key.name << ": " << e.status();
    EXPECT_EQ(e->value, key.value_text(defaults));
  }
}

TEST_F(RuntimeConfigTest, ReloadAppliesChangedLiveKeysOnly) {
  writeFile(R"({"upcall-rate": 500, "tx-flush-interval": 10, "mbufs": 4096})");
  auto rc = make({"--config", path_.c_str()});
  writeFile(R"({"upcall-rate": 700, "tx-flush-interval": 10, "mbufs": 8192})");
  auto r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->changed_files);
  EXPECT_EQ(r->applied, std::vector<std::string>{"upcall-rate"});
  EXPECT_EQ(r->need_restart, std::vector<std::string>{"mbufs"});
  ASSERT_EQ(applied_.size(), 1u);
  EXPECT_EQ(applied_[0].upcall_rate, 700u);
  EXPECT_EQ(applied_[0].mbufs, 4096u) << "a restart-only key is not applied";
  EXPECT_EQ(rc->entry("mbufs")->value, "4096");
  EXPECT_EQ(rc->entry("upcall-rate")->value, "700");
  EXPECT_EQ(rc->entry("upcall-rate")->source, ConfigSource::kFile);

  // Reported once: the next re-read compares with this one.
  writeFile(R"({"upcall-rate": 800, "tx-flush-interval": 10, "mbufs": 8192})");
  r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->applied, std::vector<std::string>{"upcall-rate"});
  EXPECT_TRUE(r->need_restart.empty());
}

TEST_F(RuntimeConfigTest, ReloadOfUnchangedFilesChangesNothing) {
  writeFile(R"({"upcall-rate": 500})");
  auto rc = make({"--config", path_.c_str()});
  ASSERT_TRUE(rc->set("upcall-rate", "900").ok());
  auto r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->changed_files);
  EXPECT_EQ(rc->current().upcall_rate, 900u) << "the API's value stands until the file changes the key";
  EXPECT_EQ(applied_.size(), 1u);
}

TEST_F(RuntimeConfigTest, InvalidFileChangesNothing) {
  writeFile(R"({"upcall-rate": 500})");
  auto rc = make({"--config", path_.c_str()});
  for (const char* text : {R"({"upcall-rate": 700, )", R"({"upcall-rate": 0})",
                           R"({"upcall-rate": 700, "pod-cidr": "nonsense"})",
                           R"({"upcall-rate": 700, "main-core": 1})"}) {  // main-core 1 is pmd-cores' lcore
    writeFile(text);
    auto r = rc->reloadFiles();
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << text;
    EXPECT_FALSE(r.status().message().empty());
    EXPECT_EQ(rc->current().upcall_rate, 500u) << text;
  }
  EXPECT_TRUE(applied_.empty());
  // Once fixed, what changed since the last good file applies.
  writeFile(R"({"upcall-rate": 700})");
  auto r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(rc->current().upcall_rate, 700u);
}

TEST_F(RuntimeConfigTest, MissingFileChangesNothing) {
  writeFile(R"({"upcall-rate": 500})");
  auto rc = make({"--config", path_.c_str()});
  std::filesystem::remove(path_);
  EXPECT_EQ(rc->reloadFiles().status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(rc->current().upcall_rate, 500u);
}

TEST_F(RuntimeConfigTest, AFlagOutranksTheFileOnReload) {
  writeFile(R"({"upcall-rate": 500})");
  auto rc = make({"--config", path_.c_str(), "--upcall-rate", "50"});
  EXPECT_EQ(rc->current().upcall_rate, 50u);
  writeFile(R"({"upcall-rate": 700})");
  auto r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->overridden, std::vector<std::string>{"upcall-rate"});
  EXPECT_EQ(rc->current().upcall_rate, 50u);
  EXPECT_EQ(rc->entry("upcall-rate")->source, ConfigSource::kFlag);
}

TEST_F(RuntimeConfigTest, OverlayAndPoolChangesNeedARestart) {
  writeFile(R"({"vni": 42})");
  auto rc = make({"--config", path_.c_str()});
  writeFile(R"({"vni": 43, "log-level": "debug"})");
  auto r = rc->reloadFiles();
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->need_restart, std::vector<std::string>{"vni"});
  EXPECT_EQ(r->applied, std::vector<std::string>{"log-level"});
}

TEST_F(RuntimeConfigTest, LaterFilesOverrideEarlierOnes) {
  const std::string live_path = dir_ + "/live.json";
  writeFile(R"({"upcall-rate": 500, "mbufs": 4096})");
  std::ofstream(live_path) << R"({"upcall-rate": 600})";
  auto rc = make({"--config", path_.c_str(), "--config", live_path.c_str()});
  EXPECT_EQ(rc->current().upcall_rate, 600u);
  EXPECT_EQ(rc->current().mbufs, 4096u);
  std::ofstream(live_path) << R"({"upcall-rate": 650})";
  ASSERT_TRUE(rc->reloadFiles().ok());
  EXPECT_EQ(rc->current().upcall_rate, 650u);
}

}  // namespace
}  // namespace sluice
