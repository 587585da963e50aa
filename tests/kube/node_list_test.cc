// The watch thread's list of the Nodes (NodeWatcher) against the fake
// Kubernetes API server, which pages a list as the real one does (limit,
// continue, 410 Gone once the list's version is compacted): the pages, a
// list started over, a list that fails half way, a page too large to read.
// No sluiced and no root: the NodeCache is what the test reads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "agent/kube_config.h"
#include "agent/node_cache.h"
#include "agent/node_watcher.h"
#include "tests/kube/fake_apiserver.h"

namespace sluice::agent {
namespace {

using nlohmann::json;
using test::FakeApiServer;

constexpr char kToken[] = "list-test-token";

// Polls `done` until it holds or `limit` passes: the watch thread's progress
// is seen only in the cache.
bool waitFor(const std::function<bool()>& done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

json nodes(int count, size_t annotation_bytes = 0) {
  json all = json::array();
  for (int i = 0; i < count; ++i) {
    char name[32];
    std::snprintf(name, sizeof name, "node-%03d", i);
    json n = {{"name", name},
              {"pod_cidrs", {"10.200." + std::to_string(i) + ".0/24"}},
              {"internal_ip", "192.168.77." + std::to_string(i + 1)}};
    // What managedFields and status.images make of a real Node's size.
    if (annotation_bytes > 0) n["annotations"] = {{"example.com/bulk", std::string(annotation_bytes, 'x')}};
    all.push_back(n);
  }
  return all;
}

class NodeListTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/sluice-node-list-" + std::to_string(::getpid());
    std::string error;
    api_ = FakeApiServer::start(dir_, kToken, &error);
    ASSERT_NE(api_, nullptr) << error;
  }
  void TearDown() override {
    stop_ = true;
    cache_.wake();
    if (thread_.joinable()) thread_.join();
    if (HasFailure()) std::cerr << "--- fake API server log\n" << api_->log();
    api_.reset();
    std::filesystem::remove_all(dir_);
  }

  void putNodes(const json& list) { ASSERT_FALSE(api_->control({{"op", "put_many"}, {"nodes", list}}).is_null()); }

  void startWatcher(WatchSettings settings = {}) {
    absl::StatusOr<KubeConfig> config = kubeconfigFile(api_->kubeconfig());
    ASSERT_TRUE(config.ok()) << config.status();
    settings.watch_timeout = std::chrono::seconds(5);
    settings.backoff_initial = std::chrono::milliseconds(50);
    settings.backoff_cap = std::chrono::milliseconds(200);
    watcher_ = std::make_unique<NodeWatcher>(*config, settings, cache_, stop_);
    thread_ = std::thread([this] { watcher_->run(); });
  }

  uint64_t counter(const char* name) { return cache_.snapshot().counters.at(name); }
  bool syncedWith(size_t count) {
    const NodeCache::Snapshot s = cache_.snapshot();
    return s.synced && s.nodes.size() == count;
  }

  std::string dir_;
  std::unique_ptr<FakeApiServer> api_;
  NodeCache cache_;
  std::atomic<bool> stop_{false};
  std::unique_ptr<NodeWatcher> watcher_;
  std::thread thread_;
};

// 250 Nodes come in three pages of at most 100, all of one list.
TEST_F(NodeListTest, ListsInPagesOfAHundred) {
  putNodes(nodes(250));
  startWatcher();
  ASSERT_TRUE(waitFor([&] { return syncedWith(250); }));
  const json stats = api_->stats();
  EXPECT_EQ(stats["list"], 1);
  EXPECT_EQ(stats["list_limits"], json({100, 100, 100}));
  EXPECT_EQ(counter("lists"), 1u);
  EXPECT_EQ(counter("relists_gone"), 0u);
}

// The list's version is compacted after its first page (as etcd compacts
// under a busy cluster): the next page's continue token is answered 410
// Gone. The pages read so far cannot be continued consistently; the list
// starts over from its first page and the cache is replaced only by the
// whole new list, never by the part read before the 410 (nor by nothing).
TEST_F(NodeListTest, AContinueTokenThatExpiredStartsTheListOverAndNeverEmptiesTheTable) {
  putNodes(nodes(250));
  ASSERT_FALSE(api_->control({{"op", "compact_after_pages"}, {"pages", 1}}).is_null());
  startWatcher();
  ASSERT_TRUE(waitFor([&] { return syncedWith(250); }));
  EXPECT_EQ(counter("lists"), 1u);
  EXPECT_EQ(counter("relists_gone"), 1u);
  json stats = api_->stats();
  EXPECT_EQ(stats["gone"], 1);
  EXPECT_EQ(stats["list"], 2) << "started over";
  EXPECT_EQ(stats["list_pages"], 5) << "one page, the 410, then the three pages of the new list";

  // The same while a table is held: the relist after an expired watch hits
  // the compaction half way, and the table stays whole.
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-000"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return syncedWith(249); }));
  ASSERT_FALSE(api_->control({{"op", "compact_after_pages"}, {"pages", 1}}).is_null());
  ASSERT_FALSE(api_->control({{"op", "expire"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return counter("lists") == 2; }));
  EXPECT_EQ(cache_.snapshot().nodes.size(), 249u);
  EXPECT_TRUE(cache_.snapshot().synced);
  EXPECT_EQ(counter("relists_gone"), 3u) << "the expired watch, then the expired continue token";
}

// A page that fails half way (the API server answers 500) leaves the
// table as the last whole list made it: not synced, the error reported,
// nothing removed. Once the server answers again the list completes.
TEST_F(NodeListTest, AListThatFailsHalfWayKeepsTheTable) {
  putNodes(nodes(250));
  startWatcher();
  ASSERT_TRUE(waitFor([&] { return syncedWith(250); }));
  ASSERT_FALSE(api_->control({{"op", "fail_list_pages"}, {"after", 1}, {"status", 500}}).is_null());
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-249"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return syncedWith(249); }));
  ASSERT_FALSE(api_->control({{"op", "expire"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return counter("http_errors") >= 2; }));
  const NodeCache::Snapshot during = cache_.snapshot();
  EXPECT_FALSE(during.synced);
  EXPECT_EQ(during.nodes.size(), 249u) << "no part of a list replaces the table";
  EXPECT_NE(during.last_error.find("list nodes: HTTP 500: Internal error occurred"), std::string::npos)
      << during.last_error;
  ASSERT_FALSE(api_->control({{"op", "fail_list_pages"}, {"after", -1}}).is_null());
  ASSERT_TRUE(waitFor([&] { return counter("lists") == 2 && syncedWith(249); }));
}

// A page larger than the body limit (here 100 Nodes of 170 KB: annotations
// as large as the API allows) is an error that names the limit; it is never
// cut and parsed as half a page, and no table is made of it.
TEST_F(NodeListTest, APageLargerThanTheBodyLimitIsAnError) {
  putNodes(nodes(100, 170 * 1024));
  startWatcher();
  ASSERT_TRUE(waitFor([&] { return counter("connection_errors") >= 1; }, std::chrono::seconds(60)));
  const NodeCache::Snapshot s = cache_.snapshot();
  EXPECT_FALSE(s.synced);
  EXPECT_TRUE(s.nodes.empty());
  EXPECT_EQ(counter("lists"), 0u);
  EXPECT_EQ(s.last_error, "list nodes: a response body larger than 16777216 bytes (not read)");
}

}  // namespace
}  // namespace sluice::agent
