// The config-file watcher calls back for the ways a config file changes:
// written in place, replaced by a rename, and a Kubernetes ConfigMap volume's
// `..data` symlink swap (where the file's own inode never changes).
#include "dataplane/core/config_file_watcher.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>

namespace sluice {
namespace {

namespace fs = std::filesystem;

class ConfigFileWatcherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/config-watcher-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    watcher_.reset();
    fs::remove_all(dir_);
  }

  // Watches `file`; each callback reads it, as sluiced's re-read does.
  void watch(const std::string& file) {
    auto w = ConfigFileWatcher::start({file}, [this, file] {
      std::ifstream in(file);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::lock_guard lock(mu_);
      read_ = text;
      cv_.notify_all();
    });
    ASSERT_TRUE(w.ok()) << w.status();
    watcher_ = *std::move(w);
  }
  // Waits until a callback read `text` (a deadline on a condition, not a
  // measurement).
  bool callbackRead(const std::string& text) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return read_ == text; });
  }

  std::string dir_;
  std::unique_ptr<ConfigFileWatcher> watcher_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::string read_;  // what the last callback read
};

TEST_F(ConfigFileWatcherTest, WriteInPlace) {
  const std::string file = dir_ + "/sluiced.json";
  std::ofstream(file) << "{}";
  watch(file);
  std::ofstream(file) << R"({"upcall-rate": 5})";
  EXPECT_TRUE(callbackRead(R"({"upcall-rate": 5})"));
}

TEST_F(ConfigFileWatcherTest, ReplacedByRename) {
  const std::string file = dir_ + "/sluiced.json";
  std::ofstream(file) << "{}";
  watch(file);
  std::ofstream(dir_ + "/.sluiced.json.tmp") << R"({"upcall-rate": 5})";
  fs::rename(dir_ + "/.sluiced.json.tmp", file);
  EXPECT_TRUE(callbackRead(R"({"upcall-rate": 5})"));
}

// As the kubelet's atomic writer updates a ConfigMap volume: a new
// timestamped directory, a new `..data` symlink renamed over the old one,
// the old directory removed; sluiced.json -> ..data/sluiced.json throughout.
TEST_F(ConfigFileWatcherTest, ConfigMapDataSymlinkSwap) {
  fs::create_directories(dir_ + "/..2026_12_02_01");
  std::ofstream(dir_ + "/..2026_12_02_01/sluiced.json") << "{}";
  fs::create_directory_symlink("..2026_12_02_01", dir_ + "/..data");
  fs::create_symlink("..data/sluiced.json", dir_ + "/sluiced.json");
  watch(dir_ + "/sluiced.json");
  // Everything up to the swap happens in the new directory, which is not watched.
  fs::create_directories(dir_ + "/..2026_12_02_02");
  std::ofstream(dir_ + "/..2026_12_02_02/sluiced.json") << R"({"upcall-rate": 5})";
  fs::create_directory_symlink("..2026_12_02_02", dir_ + "/..data_tmp");
  fs::rename(dir_ + "/..data_tmp", dir_ + "/..data");
  fs::remove_all(dir_ + "/..2026_12_02_01");
  // Only a callback after the swap can read the new text.
  EXPECT_TRUE(callbackRead(R"({"upcall-rate": 5})"));
}

TEST_F(ConfigFileWatcherTest, MissingDirectoryIsAnError) {
  EXPECT_FALSE(ConfigFileWatcher::start({dir_ + "/nowhere/sluiced.json"}, [] {}).ok());
}

}  // namespace
}  // namespace sluice
