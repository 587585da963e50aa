// The checkpoint (dataplane/core/checkpoint.h) and what DataplaneControl
// does with it, without EAL: the file's round trip, corrupt and unreadable
// files moved aside, every port change written before the call returns, a
// failed write undoing the port, restore with the same port numbers and
// sockets (whatever DPDK port ids the new process gets), records that cannot
// be restored dropped, and garbage collection of vanished pod netns paths.
// Versions: the file the sluiced before versioned checkpoints wrote
// (data/checkpoint-v1.json) migrated with every port and VF restored, the
// overlay's API-added remote nodes kept across a restart (the config file
// winning), and a file of a newer version refused and left byte for byte.
#include "dataplane/core/checkpoint.h"

#include <absl/strings/str_cat.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "dataplane/core/checkpoint_migrations.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/modules/overlay/overlay_control.h"
#include "dataplane/modules/overlay/overlay_module.h"
#include "dataplane/modules/sriov/sriov_module.h"
#include "dataplane/stand_ins/fake_pf/fake_pf_control.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "tests/support/fake_control.h"
#include "tests/support/frames.h"
#include "tests/unit/sriov/fake_sysfs.h"

namespace sluice {
namespace {

namespace fs = std::filesystem;

std::string readText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void writeText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

std::vector<std::string> filesIn(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

CheckpointPort port(uint16_t no, const std::string& cid, const std::string& ip, VhostMode mode = VhostMode::kServer) {
  CheckpointPort p;
  p.port_no = no;
  p.request.container_id = cid;
  p.request.ifname = "net1";
  p.request.pod_namespace = "default";
  p.request.pod_name = "pod-" + cid;
  p.request.ip = ip;
  p.request.mac = "02:00:0a:f4:01:" + ip.substr(ip.rfind('.') + 1);
  p.request.vhost_mode = mode;
  p.request.socket_subdir = cid;
  p.socket_path = "/run/x/" + cid + "/net1.sock";
  p.netns = "/var/run/netns/" + cid;
  return p;
}

class CheckpointFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/checkpoint-test-" + std::to_string(::getpid());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string dir_;
};

TEST_F(CheckpointFileTest, RoundTripKeepsEveryFieldAndTheVfSection) {
  CheckpointState s;
  s.ports = {port(0, "aaaa", "10.244.1.10"), port(5, "bbbb", "10.244.1.11", VhostMode::kClient)};
  s.ports[1].netns.clear();
  s.ports[0].request.socket_group = 2345;
  s.ports[1].request.ipv6 = "fd00:10:244:1::b";
  s.ports[1].request.mtu = 9000;
  s.ports[1].request.source_validation = false;
  s.ports[1].request.pmd = 3;
  s.ports[1].request.queues = 4;
  s.sections["vfs"] = nlohmann::json::array({{{"pci", "0000:3b:02.1"}, {"container_id", "cccc"}}});
  CheckpointStore store(dir_ + "/state");
  ASSERT_TRUE(store.save(s).ok());
  EXPECT_EQ(filesIn(dir_ + "/state"), std::vector<std::string>{"checkpoint.json"}) << "no temporary file left";
  EXPECT_EQ(fs::status(dir_ + "/state").permissions() & fs::perms::all, fs::perms::owner_all);

  CheckpointLoad loaded = *store.load();
  EXPECT_TRUE(loaded.found);
  EXPECT_TRUE(loaded.moved_aside_to.empty());
  ASSERT_EQ(loaded.state.ports.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    const CheckpointPort& a = s.ports[i];
    const CheckpointPort& b = loaded.state.ports[i];
    EXPECT_EQ(b.port_no, a.port_no);
    EXPECT_EQ(b.request.container_id, a.request.container_id);
    EXPECT_EQ(b.request.ifname, a.request.ifname);
    EXPECT_EQ(b.request.pod_namespace, a.request.pod_namespace);
    EXPECT_EQ(b.request.pod_name, a.request.pod_name);
    EXPECT_EQ(b.request.ip, a.request.ip);
    EXPECT_EQ(b.request.ipv6, a.request.ipv6);
    EXPECT_EQ(b.request.mac, a.request.mac);
    EXPECT_EQ(b.request.vhost_mode, a.request.vhost_mode);
    EXPECT_EQ(b.request.kind, a.request.kind);
    EXPECT_EQ(b.request.socket_subdir, a.request.socket_subdir);
    EXPECT_EQ(b.request.socket_group, a.request.socket_group);
    EXPECT_EQ(b.request.mtu, a.request.mtu);
    EXPECT_EQ(b.request.source_validation, a.request.source_validation);
    EXPECT_EQ(b.request.pmd, a.request.pmd);
    EXPECT_EQ(b.request.queues, a.request.queues);
    EXPECT_EQ(b.socket_path, a.socket_path);
    EXPECT_EQ(b.netns, a.netns);
  }
  EXPECT_EQ(loaded.state.sections["vfs"], s.sections["vfs"]);
  // Text → state → text is the identity (what restore rewrites is what it read).
  EXPECT_EQ(serializeCheckpoint(loaded.state), readText(store.path()));
}

TEST_F(CheckpointFileTest, SourceValidationIsReadWithTrueForAnAbsentKeyAndMustBeABoolean) {
  CheckpointState s;
  s.ports = {port(0, "aaaa", "10.244.1.10")};
  s.ports[0].request.source_validation = false;
  nlohmann::json doc = nlohmann::json::parse(serializeCheckpoint(s));
  EXPECT_EQ(doc["ports"][0]["source_validation"], false);
  doc["ports"][0].erase("source_validation");
  auto absent = parseCheckpoint(doc.dump());
  ASSERT_TRUE(absent.ok()) << absent.status();
  EXPECT_TRUE(absent->ports[0].request.source_validation);
  doc["ports"][0]["source_validation"] = "false";
  auto wrong = parseCheckpoint(doc.dump());
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(std::string(wrong.status().message()).find("source_validation"), std::string::npos) << wrong.status();
}

// A port of one queue pair writes no key (files of sluiceds before
// multi-queue ports read the same); a present one is a count of at least 1.
TEST_F(CheckpointFileTest, QueuesAreWrittenOnlyWhenRequestedAndMustBeAPositiveCount) {
  CheckpointState s;
  s.ports = {port(0, "aaaa", "10.244.1.10"), port(1, "bbbb", "10.244.1.11")};
  s.ports[1].request.queues = 4;
  nlohmann::json doc = nlohmann::json::parse(serializeCheckpoint(s));
  EXPECT_FALSE(doc["ports"][0].contains("queues"));
  EXPECT_EQ(doc["ports"][1]["queues"], 4);
  auto read = parseCheckpoint(doc.dump());
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->ports[0].request.queues, std::nullopt);
  EXPECT_EQ(read->ports[1].request.queues, std::optional<unsigned>(4));
  for (const nlohmann::json& bad : {nlohmann::json(0), nlohmann::json(-2), nlohmann::json("4")}) {
    doc["ports"][1]["queues"] = bad;
    auto wrong = parseCheckpoint(doc.dump());
    ASSERT_FALSE(wrong.ok()) << bad;
    EXPECT_NE(std::string(wrong.status().message()).find("queues"), std::string::npos) << wrong.status();
  }
}

TEST_F(CheckpointFileTest, WithoutFsyncASaveIsStillAtomicAndReadable) {
  CheckpointState s;
  s.ports = {port(3, "aaaa", "10.244.1.10")};
  CheckpointStore store(dir_ + "/state", /*fsync=*/false);
  ASSERT_TRUE(store.save(s).ok());
  ASSERT_TRUE(store.save(s).ok());  // over an existing file
  EXPECT_EQ(filesIn(dir_ + "/state"), std::vector<std::string>{"checkpoint.json"});
  CheckpointLoad loaded = *store.load();
  ASSERT_EQ(loaded.state.ports.size(), 1u);
  EXPECT_EQ(loaded.state.ports[0].port_no, 3);
}

// A start reads at most 16 MiB; a save that large would make every port
// vanish at the next start, so the save fails and the file stays as it was.
TEST_F(CheckpointFileTest, ASaveTheNextStartWouldRefuseFailsAndKeepsTheFileAsItWas) {
  CheckpointStore store(dir_ + "/state", /*fsync=*/false);
  CheckpointState small;
  small.ports = {port(3, "aaaa", "10.244.1.10")};
  ASSERT_TRUE(store.save(small).ok());
  const std::string before = readText(store.path());
  CheckpointState big = small;
  big.sections["future"] = nlohmann::json::array({{{"blob", std::string(16u << 20, 'x')}}});
  const absl::Status s = store.save(big);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
  EXPECT_NE(s.message().find("more than the 16777216 a start reads"), std::string::npos) << s;
  EXPECT_EQ(readText(store.path()), before);
  EXPECT_EQ(filesIn(dir_ + "/state"), std::vector<std::string>{"checkpoint.json"}) << "no temp file left";
  // Just within the cap is still written and read back.
  CheckpointState fits = small;
  fits.sections["future"] = nlohmann::json::array({{{"blob", std::string((16u << 20) - 4096, 'x')}}});
  ASSERT_TRUE(store.save(fits).ok());
  EXPECT_EQ(store.load()->state.sections["future"], fits.sections["future"]);
}

TEST_F(CheckpointFileTest, InvalidUtf8IsReplacedNotThrown) {
  CheckpointState s;
  s.ports = {port(0, "aaaa", "10.244.1.10")};
  s.ports[0].request.pod_name = "bad\xff\xfename";
  std::string text = serializeCheckpoint(s);
  auto parsed = parseCheckpoint(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->ports[0].request.pod_name, "bad\xef\xbf\xbd\xef\xbf\xbdname");  // U+FFFD twice
  EXPECT_EQ(parsed->ports[0].request.ip, "10.244.1.10");
}

TEST_F(CheckpointFileTest, MissingFileIsAnEmptyStateNotAnError) {
  CheckpointStore store(dir_ + "/state");
  CheckpointLoad loaded = *store.load();
  EXPECT_FALSE(loaded.found);
  EXPECT_TRUE(loaded.state.ports.empty());
  EXPECT_TRUE(fs::is_directory(dir_ + "/state"));
}

TEST_F(CheckpointFileTest, CorruptFilesAreMovedAsideAndYieldAnEmptyState) {
  const std::vector<std::string> corrupt = {
      "",                                                          // empty (not JSON)
      "{\"format\": \"sluice-checkpoint\", \"version\": 1, \"po",  // truncated
      "[1,2,3]",
      R"({"format": "something-else", "version": 1, "ports": []})",
      R"({"format": "sluice-checkpoint", "version": 0, "ports": []})",
      R"({"format": "sluice-checkpoint", "version": "2", "ports": []})",
      R"({"format": "sluice-checkpoint", "version": 1.5, "ports": []})",
      R"({"format": "sluice-checkpoint", "version": -3, "ports": []})",
      R"({"format": "sluice-checkpoint", "ports": []})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [], "nodes": {"name": "w2"}})",
      R"({"format": "sluice-checkpoint", "version": 2, "ports": [], "nodes": [7]})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [{"port_no": -1, "container_id": "a", "ifname": "b"}]})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [{"port_no": 1, "container_id": 7, "ifname": "b"}]})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [{"port_no": 1, "ifname": "b"}]})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [{"port_no": 1, "container_id": "a", "ifname": "b", "vhost_mode": "both"}]})",
      R"({"format": "sluice-checkpoint", "version": 1, "ports": [], "vfs": [3]})",
  };
  for (size_t i = 0; i < corrupt.size(); ++i) {
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/state");
    CheckpointStore store(dir_ + "/state");
    writeText(store.path(), corrupt[i]);
    CheckpointLoad loaded = *store.load();
    EXPECT_TRUE(loaded.found) << i;
    EXPECT_TRUE(loaded.state.ports.empty()) << i;
    ASSERT_FALSE(loaded.moved_aside_to.empty()) << i;
    EXPECT_EQ(loaded.moved_aside_to.rfind(store.path() + ".corrupt-", 0), 0u) << loaded.moved_aside_to;
    EXPECT_FALSE(fs::exists(store.path())) << i;
    EXPECT_EQ(readText(loaded.moved_aside_to), corrupt[i]) << "the evidence is kept as it was";
    // And the next save works in its place.
    EXPECT_TRUE(store.save({}).ok());
    EXPECT_TRUE(store.load()->moved_aside_to.empty());
  }
}

TEST_F(CheckpointFileTest, UnreadableCheckpointIsMovedAside) {
  fs::create_directories(dir_ + "/state/checkpoint.json");  // a directory where the file should be
  CheckpointStore store(dir_ + "/state");
  CheckpointLoad loaded = *store.load();
  EXPECT_TRUE(loaded.found);
  EXPECT_FALSE(loaded.moved_aside_to.empty());
  EXPECT_TRUE(fs::is_directory(loaded.moved_aside_to));
  EXPECT_TRUE(store.save({}).ok());
}

TEST_F(CheckpointFileTest, SaveIntoAnImpossibleDirectoryFailsAndLeavesNothing) {
  fs::create_directories(dir_);
  writeText(dir_ + "/file", "x");
  CheckpointStore store(dir_ + "/file/state");
  absl::Status s = store.save({});
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_EQ(filesIn(dir_), std::vector<std::string>{"file"});
}

TEST_F(CheckpointFileTest, ATempFileLeftByAKilledSaveIsRemovedAtLoad) {
  CheckpointStore store(dir_ + "/state");
  ASSERT_TRUE(store.save({}).ok());
  // What a save killed between its write and its rename leaves behind.
  writeText(dir_ + "/state/checkpoint.json.tmp", "{\"format\": \"sluice-checkpoint\", \"version\": 1, \"ports\": [");
  CheckpointLoad loaded = *store.load();
  EXPECT_TRUE(loaded.found);
  EXPECT_TRUE(loaded.moved_aside_to.empty());
  EXPECT_EQ(filesIn(dir_ + "/state"), std::vector<std::string>{"checkpoint.json"});
}

// The file the sluiced before versioned checkpoints wrote (its own
// CheckpointStore::save: version 1, two ports, one VF).
std::string v1Fixture() { return readText(std::string(SLUICE_UNIT_TEST_DATA) + "/checkpoint-v1.json"); }

TEST_F(CheckpointFileTest, TheVersion1FileMigratesWithEveryFieldKept) {
  const std::string text = v1Fixture();
  ASSERT_FALSE(text.empty());
  auto parsed = parseCheckpoint(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->read_version, 1u);
  ASSERT_EQ(parsed->ports.size(), 2u);
  const CheckpointPort& a = parsed->ports[0];
  EXPECT_EQ(a.port_no, 0);
  EXPECT_EQ(a.request.container_id, "c0ffee0123456789");
  EXPECT_EQ(a.request.ifname, "net1");
  EXPECT_EQ(a.request.pod_namespace, "default");
  EXPECT_EQ(a.request.pod_name, "web-0");
  EXPECT_EQ(a.request.ip, "10.244.1.10");
  EXPECT_EQ(a.request.mac, "02:53:0a:f4:01:0a");
  EXPECT_EQ(a.request.kind, PortKind::kVhostUser);
  EXPECT_EQ(a.request.vhost_mode, VhostMode::kServer);
  EXPECT_EQ(a.request.socket_subdir, "c0ffee012345-1a2b3c4d");
  EXPECT_EQ(a.socket_path, "/var/run/sluice/vhost/c0ffee012345-1a2b3c4d/net1.sock");
  EXPECT_EQ(a.netns, "");
  const CheckpointPort& b = parsed->ports[1];
  EXPECT_EQ(b.port_no, 3);
  EXPECT_EQ(b.request.container_id, "beef0123456789ab");
  EXPECT_EQ(b.request.ifname, "net2");
  EXPECT_EQ(b.request.pod_namespace, "team-b");
  EXPECT_EQ(b.request.pod_name, "db-1");
  EXPECT_EQ(b.request.ip, "10.244.1.11");
  EXPECT_EQ(b.request.mac, "");
  EXPECT_EQ(b.request.vhost_mode, VhostMode::kClient);
  EXPECT_EQ(b.request.socket_subdir, "");
  EXPECT_EQ(b.socket_path, "/var/run/sluice/vhost/beef01234567-net2.sock");
  // Written back, it is the same document at the current version with an
  // empty "nodes" section, no port's IPv6 and the node's default MTU: nothing
  // else changed, nothing dropped. ("source_validation", which the migration
  // adds too, is not written by this sluiced: an absent key reads as true.)
  nlohmann::json expected = nlohmann::json::parse(text);
  expected["version"] = kCheckpointVersion;
  expected["nodes"] = nlohmann::json::array();
  // Sources checked, as for every port before the setting existed.
  for (nlohmann::json& port : expected["ports"]) {
    port["ipv6"] = "";
    port["mtu"] = 0;
    port["source_validation"] = true;
    port["routed_prefixes"] = nlohmann::json::array();
  }
  EXPECT_TRUE(a.request.source_validation);
  EXPECT_TRUE(b.request.source_validation);
  EXPECT_EQ(nlohmann::json::parse(serializeCheckpoint(*parsed)), expected);
  EXPECT_EQ(parsed->sections.size(), 2u);
  EXPECT_EQ(parsed->sections["vfs"], nlohmann::json::parse(text)["vfs"]);
}

TEST_F(CheckpointFileTest, EachMigrationStepIsItsOwnFunction) {
  nlohmann::json doc = {{"format", "sluice-checkpoint"}, {"version", 1}, {"ports", nlohmann::json::array()}};
  ASSERT_TRUE(migrateV1ToV2(doc).ok());
  EXPECT_EQ(doc["nodes"], nlohmann::json::array());
  // A "nodes" key a version-1 file had (no module's then) is kept as it was.
  nlohmann::json kept = {{"version", 1}, {"nodes", {{{"name", "w2"}}}}};
  ASSERT_TRUE(migrateCheckpoint(kept, 1).ok());
  EXPECT_EQ(kept, (nlohmann::json{{"version", 5}, {"nodes", {{{"name", "w2"}}}}}));
  // Version 2 → 3: every port gets an empty "ipv6"; one it had is kept.
  nlohmann::json v2 = {{"version", 2},
                       {"ports", {{{"port_no", 0}, {"ip", "10.244.1.10"}},
                                  {{"port_no", 1}, {"ip", ""}, {"ipv6", "fd00::5"}}}},
                       {"nodes", nlohmann::json::array()}};
  ASSERT_TRUE(migrateV2ToV3(v2).ok());
  EXPECT_EQ(v2["ports"][0]["ipv6"], "");
  EXPECT_EQ(v2["ports"][1]["ipv6"], "fd00::5");
  nlohmann::json two = {{"version", 2}, {"ports", {{{"port_no", 4}}}}};
  ASSERT_TRUE(migrateCheckpoint(two, 2).ok());
  EXPECT_EQ(two, (nlohmann::json{{"version", 5},
                                  {"ports",
                                   {{{"port_no", 4},
                                     {"ipv6", ""},
                                     {"mtu", 0},
                                     {"source_validation", true},
                                     {"routed_prefixes", nlohmann::json::array()}}}}}));
  // Version 3 → 4: every port gets "mtu": 0 and "source_validation": true;
  // values it had are kept.
  nlohmann::json v3 = {{"version", 3},
                       {"ports", {{{"port_no", 0}, {"ipv6", ""}},
                                  {{"port_no", 1}, {"mtu", 1400}, {"source_validation", false}},
                                  "not an object"}}};
  ASSERT_TRUE(migrateV3ToV4(v3).ok());
  EXPECT_EQ(v3["ports"][0], (nlohmann::json{{"port_no", 0}, {"ipv6", ""}, {"mtu", 0}, {"source_validation", true}}));
  EXPECT_EQ(v3["ports"][1], (nlohmann::json{{"port_no", 1}, {"mtu", 1400}, {"source_validation", false}}));
  EXPECT_EQ(v3["ports"][2], "not an object") << "left for the reader to refuse";
  nlohmann::json no_ports = {{"version", 3}, {"ports", 7}};
  ASSERT_TRUE(migrateV3ToV4(no_ports).ok());
  EXPECT_EQ(no_ports["ports"], 7);
  // Version 4 → 5: every port gets "routed_prefixes": []; a list it had is kept.
  nlohmann::json v4 = {{"version", 4},
                       {"ports", {{{"port_no", 0}}, {{"port_no", 1}, {"routed_prefixes", {"10.100.0.0/16"}}}}}};
  ASSERT_TRUE(migrateV4ToV5(v4).ok());
  EXPECT_EQ(v4["ports"][0]["routed_prefixes"], nlohmann::json::array());
  EXPECT_EQ(v4["ports"][1]["routed_prefixes"], nlohmann::json::array({"10.100.0.0/16"}));
  // The current version needs no step; no other version is migrated.
  nlohmann::json current = {{"version", 5}};
  ASSERT_TRUE(migrateCheckpoint(current, 5).ok());
  EXPECT_EQ(current, (nlohmann::json{{"version", 5}}));
  for (uint64_t v : {0u, 6u}) {
    nlohmann::json doc2 = nlohmann::json::object();
    absl::Status s = migrateCheckpoint(doc2, v);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << v;
    EXPECT_EQ(s.message(), "checkpoint: version: " + std::to_string(v) + " is not 1..5") << v;
  }
  EXPECT_EQ(kCheckpointVersion, 5u);
}

TEST_F(CheckpointFileTest, AVersion1FileIsLoadedMigratedAndNotRewrittenByTheLoad) {
  CheckpointStore store(dir_ + "/state");
  fs::create_directories(store.dir());
  writeText(store.path(), v1Fixture());
  absl::StatusOr<CheckpointLoad> loaded = store.load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_TRUE(loaded->found);
  EXPECT_TRUE(loaded->moved_aside_to.empty());
  EXPECT_EQ(loaded->state.read_version, 1u);
  EXPECT_EQ(loaded->state.ports.size(), 2u);
  EXPECT_EQ(readText(store.path()), v1Fixture()) << "the restore's write replaces it, not the load";
}

TEST_F(CheckpointFileTest, ANewerVersionIsRefusedAndLeftInPlaceByteForByte) {
  // What a later sluiced might write: other keys, other shapes.
  const std::string newer =
      "{\"format\": \"sluice-checkpoint\", \"version\": 99,\n \"ports\": {\"by-number\": {}},\n"
      " \"future\": 7}\n";
  for (const std::string& text : {newer, std::string(R"({"format": "sluice-checkpoint", "version": 6, "ports": []})")}) {
    fs::remove_all(dir_);
    CheckpointStore store(dir_ + "/state");
    fs::create_directories(store.dir());
    writeText(store.path(), text);
    const std::string version = text == newer ? "99" : "6";
    absl::StatusOr<CheckpointLoad> loaded = store.load();
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_EQ(loaded.status().message(), store.path() + ": checkpoint version " + version +
                                             " is newer than this sluiced understands (versions 1 to 5); "
                                             "left in place");
    EXPECT_EQ(readText(store.path()), text);
    EXPECT_EQ(filesIn(store.dir()), std::vector<std::string>{"checkpoint.json"}) << "nothing moved aside";
    EXPECT_EQ(parseCheckpoint(text).status().code(), absl::StatusCode::kFailedPrecondition);
  }
}

// A rollback: a newer sluiced's file that names this version among its
// readers is read for what this one knows. Its unknown keys are ignored, its
// module sections kept, and only the port that needs a newer reader is left
// out (named).
TEST(CheckpointRollbackTest, ANewerFileThatNamesThisVersionAsAReaderKeepsEveryPortThisOneCanServe) {
  const uint64_t newer = kCheckpointVersion + 1;
  const std::string text = absl::StrCat(
      R"({"format": "sluice-checkpoint", "version": )", newer, R"(, "oldest_reader": )", kCheckpointVersion, R"(,
 "future_scalar": 7, "future_section": [{"a": 1}], "nodes": [],
 "ports": [
  {"port_no": 3, "container_id": "c1", "ifname": "net1", "ip": "10.244.1.3", "mac": "02:00:0a:f4:01:03",
   "type": "vhost-user", "vhost_mode": "client", "socket_path": "/run/x/c1/net1.sock", "mtu": 0,
   "source_validation": true, "routed_prefixes": [], "a_future_field": {"x": [1, 2]}},
  {"port_no": 4, "container_id": "c2", "ifname": "net1", "ip": "10.244.1.4", "type": "vhost-user",
   "vhost_mode": "server", "oldest_reader": )", newer, R"(}
 ]})");
  absl::StatusOr<CheckpointState> state = parseCheckpoint(text);
  ASSERT_TRUE(state.ok()) << state.status();
  EXPECT_EQ(state->read_version, newer);
  ASSERT_EQ(state->ports.size(), 1u);
  EXPECT_EQ(state->ports[0].port_no, 3u);
  EXPECT_EQ(state->ports[0].request.container_id, "c1");
  EXPECT_EQ(state->ports[0].request.vhost_mode, VhostMode::kClient);
  EXPECT_EQ(state->ports[0].socket_path, "/run/x/c1/net1.sock");
  EXPECT_EQ(state->ports_left_out, std::vector<std::string>{absl::StrCat("c2/net1 (needs version ", newer, ")")});
  EXPECT_EQ(state->sections.count("future_section"), 1u) << "a module's section is kept for the next save";
  EXPECT_EQ(state->sections.count("future_scalar"), 0u);

  // What this sluiced then writes is its own version, without the key.
  const std::string written = serializeCheckpoint(*state);
  EXPECT_NE(written.find(absl::StrCat("\"version\": ", kCheckpointVersion)), std::string::npos) << written;
  EXPECT_EQ(written.find("oldest_reader"), std::string::npos) << written;
  EXPECT_EQ(written.find("a_future_field"), std::string::npos) << written;
}

TEST(CheckpointRollbackTest, ANewerFileWhoseOldestReaderIsNewerThanThisOneIsRefusedNamingIt) {
  const uint64_t newer = kCheckpointVersion + 2;
  const std::string text = absl::StrCat(R"({"format": "sluice-checkpoint", "version": )", newer,
                                        R"(, "oldest_reader": )", kCheckpointVersion + 1, R"(, "ports": []})");
  absl::StatusOr<CheckpointState> state = parseCheckpoint(text);
  ASSERT_FALSE(state.ok());
  EXPECT_EQ(state.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(state.status().message(),
            absl::StrCat("checkpoint version ", newer, " is newer than this sluiced understands (versions ",
                         kOldestCheckpointVersion, " to ", kCheckpointVersion, "; it needs ", kCheckpointVersion + 1,
                         " or later)"));
  // A malformed key is a corrupt file, not a newer one.
  EXPECT_EQ(parseCheckpoint(absl::StrCat(R"({"format": "sluice-checkpoint", "version": )", newer,
                                         R"(, "oldest_reader": "5", "ports": []})"))
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

// The sluiced before the "oldest_reader" key reads what this one writes:
// the same version, and no top-level key that is not an array.
TEST(CheckpointRollbackTest, WhatThisVersionWritesHasOnlyTheKeysTheSluicedBeforeItRead) {
  CheckpointState state;
  state.ports.push_back(port(0, "c1", "10.244.1.10"));
  state.sections["nodes"] = nlohmann::json::array();
  const nlohmann::json doc = nlohmann::json::parse(serializeCheckpoint(state));
  for (const auto& [key, value] : doc.items()) {
    if (key != "format" && key != "version") {
      EXPECT_TRUE(value.is_array()) << key;
    }
  }
  EXPECT_EQ(doc["version"], kCheckpointVersion);
}

TEST(CheckpointConfigTest, StateDirAndGcIntervalKeys) {
  SluicedConfig d;
  EXPECT_EQ(d.state_dir, "/var/lib/sluice");
  EXPECT_EQ(d.gc_interval_ms, 10000u);
  EXPECT_FALSE(d.checkpoint_fsync);
  auto nf = applyConfigJson(R"({"checkpoint-fsync": true})", d);
  ASSERT_TRUE(nf.ok()) << nf.status();
  EXPECT_TRUE(nf->checkpoint_fsync);
  EXPECT_EQ(applyConfigJson(R"({"checkpoint-fsync": "maybe"})", d).status().code(),
            absl::StatusCode::kInvalidArgument);
  auto c = applyConfigJson(R"({"state-dir": "/srv/sluice-state", "gc-interval-ms": 0})", d);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->state_dir, "/srv/sluice-state");
  EXPECT_EQ(c->gc_interval_ms, 0u);
  const char* argv[] = {"sluiced", "--state-dir", "/x/y", "--gc-interval-ms", "250"};
  auto f = parseSluicedConfig(5, argv);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->state_dir, "/x/y");
  EXPECT_EQ(f->gc_interval_ms, 250u);
  for (const char* bad : {R"({"state-dir": "relative"})", R"({"state-dir": ""})", R"({"gc-interval-ms": -1})",
                          R"({"gc-interval-ms": 86400001})", R"({"gc-interval-ms": "soon"})"}) {
    auto r = applyConfigJson(bad, d);
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
  auto r = applyConfigJson(R"({"state-dir": "relative"})", d);
  EXPECT_NE(r.status().message().find("state-dir"), absl::string_view::npos) << r.status();
}

// --- DataplaneControl with a checkpoint ---------------------------------

// One "sluiced life": a control with its own backend and PMD, over a shared
// socket and state directory.
struct Node {
  Node(const SluicedConfig& config, uint16_t first_dpdk_port) : backend(first_dpdk_port), store(config.state_dir) {
    control = std::make_unique<DataplaneControl>(config, backend, std::vector<PmdContext*>{&pmd.context},
                                                 2'600'000'000);
    control->start();
    pmd.start();
    control->setCheckpointStore(&store);
  }
  ~Node() {
    control->stopGarbageCollector();
    // As sluiced's shutdown: ports closed, the checkpoint left as it was.
    control->removeAllPorts();
    pmd.stop();
  }
  test::FakePortBackend backend;
  CheckpointStore store;
  test::AckingPmd pmd;
  std::unique_ptr<DataplaneControl> control;
};

class ControlCheckpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/control-checkpoint-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/vhost");
    fs::create_directories(dir_ + "/netns");
    config_.socket_dir = dir_ + "/vhost";
    config_.state_dir = dir_ + "/state";
    config_.pod_cidr = *Ipv4Cidr::parse("10.244.1.0/24");
    config_.gateway = *Ipv4Address::parse("10.244.1.1");
    config_.max_ports = 8;
  }
  void TearDown() override { fs::remove_all(dir_); }

  RawPortRequest request(const std::string& id, const std::string& ip, VhostMode mode = VhostMode::kServer) {
    RawPortRequest r;
    r.container_id = id;
    r.ifname = "net1";
    r.ip = ip;
    r.vhost_mode = mode;
    r.socket_subdir = id;
    return r;
  }
  // A checkpoint record of a server-mode port in its own socket subdir.
  CheckpointPort record(uint16_t port_no, const std::string& id, const std::string& ip) {
    CheckpointPort p;
    p.port_no = port_no;
    p.request = request(id, ip);
    p.socket_path = config_.socket_dir + "/" + id + "/net1.sock";
    return p;
  }
  // Stands in for a pod's netns file (`ip netns add` makes one like it).
  std::string netns(const std::string& name) {
    std::string path = dir_ + "/netns/" + name;
    writeText(path, "");
    return path;
  }
  CheckpointState onDisk() {
    auto parsed = parseCheckpoint(readText(config_.state_dir + "/checkpoint.json"));
    EXPECT_TRUE(parsed.ok()) << parsed.status();
    return parsed.ok() ? *parsed : CheckpointState{};
  }
  static std::vector<uint16_t> numbers(const CheckpointState& s) {
    std::vector<uint16_t> out;
    for (const CheckpointPort& p : s.ports) out.push_back(p.port_no);
    return out;
  }

  std::string dir_;
  SluicedConfig config_;
};

TEST_F(ControlCheckpointTest, EveryAddAndDeleteIsOnDiskWhenTheCallReturns) {
  Node node(config_, 0);
  ASSERT_TRUE(node.control->addPort(request("aaaa", "10.244.1.10"), netns("a")).ok());
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{0}));
  ASSERT_TRUE(node.control->addPort(request("bbbb", "10.244.1.11", VhostMode::kClient)).ok());
  ASSERT_TRUE(node.control->addPort(request("cccc", "10.244.1.12")).ok());
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{0, 1, 2}));
  ASSERT_TRUE(*node.control->deletePort({"bbbb", "net1"}));
  CheckpointState s = onDisk();
  ASSERT_EQ(numbers(s), (std::vector<uint16_t>{0, 2}));
  EXPECT_EQ(s.ports[0].request.ip, "10.244.1.10");
  EXPECT_EQ(s.ports[0].netns, dir_ + "/netns/a");
  EXPECT_EQ(s.ports[0].socket_path, config_.socket_dir + "/aaaa/net1.sock");
  EXPECT_EQ(s.ports[1].netns, "");
  // Deleting an unknown attachment changes nothing.
  EXPECT_FALSE(*node.control->deletePort({"zzzz", "net1"}));
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{0, 2}));
}

// What the tables in force decide for an IPv6 UDP packet to `dst`.
FlowTranslation ipv6Decision(DataplaneControl& control, const std::string& dst) {
  test::Udp6FrameSpec s{*MacAddress::parse("02:aa:00:00:00:01"), *MacAddress::parse("02:00:00:00:00:01"),
                        *Ipv6Address::parse("fd00:10:244:1::99"), *Ipv6Address::parse(dst)};
  test::Frame f = test::udp6Frame(s);
  flow::FlowKey key;
  // From a port no pod has (the uplink's number): the routes are under
  // test here, not the sources, which no pod's are.
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), kUplinkPortNo, std::nullopt, key),
            flow::ParseResult::kOk);
  return control.translate(key);
}

TEST_F(ControlCheckpointTest, Ipv6PortsAreCheckedCheckpointedAndRestoredWithTheirRoutes) {
  {
    // Without pod-cidr-v6 an IPv6 address is refused, naming the setting.
    Node plain(config_, 0);
    RawPortRequest r = request("aaaa", "10.244.1.10");
    r.ipv6 = "fd00:10:244:1::a";
    absl::StatusOr<AddPortResult> refused = plain.control->addPort(r);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(refused.status().message().find("pod-cidr-v6"), std::string::npos) << refused.status();
    EXPECT_TRUE(plain.control->listPorts().empty());
  }
  fs::remove_all(config_.state_dir);
  config_.pod_cidr_v6 = *Ipv6Cidr::parse("fd00:10:244:1::/64");
  config_.gateway_v6 = *Ipv6Address::parse("fd00:10:244:1::1");
  {
    Node node(config_, 0);
    RawPortRequest dual = request("aaaa", "10.244.1.10");
    dual.ipv6 = "fd00:10:244:1::a";
    ASSERT_TRUE(node.control->addPort(dual).ok());
    RawPortRequest only6 = request("bbbb", "");
    only6.ipv6 = "fd00:10:244:1::b";
    auto added = node.control->addPort(only6);
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_FALSE(added->port.request.hasIpv4());
    EXPECT_EQ(added->port.request.mac.toString(), "06:53:00:00:00:0b") << "derived from the IPv6 address";
    // Unique across ports; inside the CIDR; not the gateway; one family at least.
    RawPortRequest again = request("cccc", "10.244.1.12");
    again.ipv6 = "fd00:10:244:1::b";
    EXPECT_EQ(node.control->addPort(again).status().code(), absl::StatusCode::kAlreadyExists);
    again.ipv6 = "fd00:99::b";
    EXPECT_EQ(node.control->addPort(again).status().code(), absl::StatusCode::kFailedPrecondition);
    again.ipv6 = "fd00:10:244:1::1";
    EXPECT_EQ(node.control->addPort(again).status().code(), absl::StatusCode::kFailedPrecondition);
    again.ipv6 = "fd00:10:244:1::c/64";
    EXPECT_EQ(node.control->addPort(again).status().code(), absl::StatusCode::kInvalidArgument);
    RawPortRequest neither = request("dddd", "");
    EXPECT_EQ(node.control->addPort(neither).status().code(), absl::StatusCode::kInvalidArgument);
    CheckpointState disk = onDisk();
    ASSERT_EQ(disk.ports.size(), 2u);
    EXPECT_EQ(disk.ports[0].request.ipv6, "fd00:10:244:1::a");
    EXPECT_EQ(disk.ports[1].request.ip, "");
    EXPECT_EQ(disk.ports[1].request.ipv6, "fd00:10:244:1::b");
    EXPECT_EQ(ipv6Decision(*node.control, "fd00:10:244:1::b").actions.out_port, 1);
    node.control->removeAllPorts();
  }
  // A restarted sluiced brings both back, their IPv6 routes with them.
  Node second(config_, 0);
  RestoreSummary r = second.control->restore(second.store.load()->state);
  EXPECT_EQ(r.restored, 2u);
  std::vector<PortView> ports = second.control->listPorts();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[1].request.ipv6->toString(), "fd00:10:244:1::b");
  for (auto [dst, port] : {std::pair{"fd00:10:244:1::a", 0}, {"fd00:10:244:1::b", 1}}) {
    FlowTranslation t = ipv6Decision(*second.control, dst);
    EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kOutput) << dst;
    EXPECT_EQ(t.actions.out_port, port) << dst;
    EXPECT_EQ(t.actions.rewrite_flags, kRewriteL3v6);
  }
  EXPECT_EQ(ipv6Decision(*second.control, "fd00:10:244:1::1").actions.drop_reason,
            static_cast<uint16_t>(DropReason::kToGateway));
  second.control->removeAllPorts();
}

// The decision for a packet from port 0, which the tests give to pod aaaa
// (10.244.1.10, its derived MAC): its own sources, so source validation
// lets it through to the destination.
FlowTranslation ipv4Decision(DataplaneControl& control, const std::string& dst) {
  test::UdpFrameSpec s{*MacAddress::parse("02:53:0a:f4:01:0a"), *MacAddress::parse("02:00:00:00:00:01"),
                       *Ipv4Address::parse("10.244.1.10"), *Ipv4Address::parse(dst)};
  test::Frame f = test::udpFrame(s);
  flow::FlowKey key;
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), 0, std::nullopt, key),
            flow::ParseResult::kOk);
  return control.translate(key);
}

TEST_F(ControlCheckpointTest, PortMtusAreCheckedCheckpointedRestoredAndCarriedByOutputActions) {
  config_.pod_cidr_v6 = *Ipv6Cidr::parse("fd00:10:244:1::/64");
  config_.gateway_v6 = *Ipv6Address::parse("fd00:10:244:1::1");
  {
    Node node(config_, 0);
    RawPortRequest named = request("aaaa", "10.244.1.10");
    named.mtu = 1400;
    auto added = node.control->addPort(named);
    ASSERT_TRUE(added.ok()) << added.status();
    EXPECT_EQ(added->port.request.mtu, 1400u);
    auto plain = node.control->addPort(request("bbbb", "10.244.1.11"));
    ASSERT_TRUE(plain.ok()) << plain.status();
    EXPECT_EQ(plain->port.request.mtu, 1500u) << "port-mtu's default";
    // Out of range, or below IPv6's minimum on a port with IPv6: refused, naming the field.
    for (uint32_t bad : {67u, 9217u}) {
      RawPortRequest r = request("cccc", "10.244.1.12");
      r.mtu = bad;
      absl::StatusOr<AddPortResult> refused = node.control->addPort(r);
      EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument) << bad;
      EXPECT_EQ(refused.status().message(), absl::StrCat("mtu: ", bad, " is not in 68..9216 (0: the node's default)"));
    }
    RawPortRequest v6 = request("cccc", "10.244.1.12");
    v6.ipv6 = "fd00:10:244:1::c";
    v6.mtu = 1279;
    absl::StatusOr<AddPortResult> refused = node.control->addPort(v6);
    EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(refused.status().message(),
              "mtu: 1279 is below IPv6's minimum link MTU 1280, and the port carries IPv6 (fd00:10:244:1::c)");
    v6.mtu = 1280;
    ASSERT_TRUE(node.control->addPort(v6).ok());
    // The same attachment with another MTU is another request.
    named.mtu = 1500;
    EXPECT_EQ(node.control->addPort(named).status().code(), absl::StatusCode::kAlreadyExists);
    named.mtu = 1400;
    EXPECT_TRUE(node.control->addPort(named).ok());
    // Each output action carries its port's longest frame (MTU + 14).
    EXPECT_EQ(ipv4Decision(*node.control, "10.244.1.10").actions.max_frame, 1414);
    EXPECT_EQ(ipv4Decision(*node.control, "10.244.1.11").actions.max_frame, 1514);
    EXPECT_EQ(ipv6Decision(*node.control, "fd00:10:244:1::c").actions.max_frame, 1294);
    CheckpointState disk = onDisk();
    ASSERT_EQ(disk.ports.size(), 3u);
    EXPECT_EQ(disk.ports[0].request.mtu, 1400u);
    EXPECT_EQ(disk.ports[1].request.mtu, 0u) << "what was asked: the node's default";
    EXPECT_EQ(disk.ports[2].request.mtu, 1280u);
    node.control->removeAllPorts();
  }
  // Restarted with another default: the port that named none takes it.
  config_.port_mtu = 9000;
  Node second(config_, 0);
  EXPECT_EQ(second.control->restore(second.store.load()->state).restored, 3u);
  std::vector<PortView> ports = second.control->listPorts();
  ASSERT_EQ(ports.size(), 3u);
  EXPECT_EQ(ports[0].request.mtu, 1400u);
  EXPECT_EQ(ports[1].request.mtu, 9000u);
  EXPECT_EQ(ipv4Decision(*second.control, "10.244.1.11").actions.max_frame, 9014);
  second.control->removeAllPorts();
}

TEST_F(ControlCheckpointTest, UnusedPodAddressesAreAnsweredAsUnreachableByAPrefixInsideThePodCidr) {
  config_.pod_cidr_v6 = *Ipv6Cidr::parse("fd00:10:244:1::/64");
  config_.gateway_v6 = *Ipv6Address::parse("fd00:10:244:1::1");
  Node node(config_, 0);
  ASSERT_TRUE(node.control->addPort(request("aaaa", "10.244.1.10")).ok());
  auto decided = [&](const std::string& dst) {
    const FlowTranslation t = ipv4Decision(*node.control, dst);
    EXPECT_EQ(t.actions.kind, flow::MegaflowActions::Kind::kDrop) << dst;
    EXPECT_EQ(t.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute)) << dst;
    return std::pair{(t.actions.rewrite_flags & kAnswerUnreachable) != 0,
                     static_cast<uint32_t>(std::popcount(ntohl(t.mask.ipv4_dst)))};
  };
  // In the pod CIDR 10.244.1.0/24, no pod: answered; the prefix stays in the CIDR.
  EXPECT_EQ(decided("10.244.1.99"), std::pair(true, 32u)) << "beside pod .10 and the gateway";
  // Its network and broadcast addresses name no host: not answered, /32 each.
  EXPECT_EQ(decided("10.244.1.0"), std::pair(false, 32u));
  EXPECT_EQ(decided("10.244.1.255"), std::pair(false, 32u));
  // Outside it: not answered, a prefix that stays outside.
  EXPECT_EQ(decided("10.244.2.7"), std::pair(false, 24u));
  EXPECT_EQ(decided("192.0.2.1"), std::pair(false, 8u));
  // IPv6 likewise: an unused address of pod-cidr-v6 is answered, one outside not.
  FlowTranslation in6 = ipv6Decision(*node.control, "fd00:10:244:1::99");
  EXPECT_EQ(in6.actions.rewrite_flags, kAnswerUnreachable);
  FlowTranslation out6 = ipv6Decision(*node.control, "fd00:99::1");
  EXPECT_EQ(out6.actions.rewrite_flags, 0);
  EXPECT_EQ(out6.actions.drop_reason, static_cast<uint16_t>(DropReason::kNoRoute));
  EXPECT_EQ(describeActions(in6.actions), "drop:no_route(icmp_unreachable)");
  node.control->removeAllPorts();
}

TEST_F(ControlCheckpointTest, AnAddWhoseCheckpointCannotBeWrittenIsUndone) {
  writeText(dir_ + "/not-a-dir", "");
  config_.state_dir = dir_ + "/not-a-dir/state";
  Node node(config_, 0);
  auto added = node.control->addPort(request("aaaa", "10.244.1.10"));
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInternal) << added.status();
  EXPECT_TRUE(node.control->listPorts().empty());
  EXPECT_TRUE(node.backend.live.empty()) << "the DPDK port was destroyed again";
  EXPECT_FALSE(fs::exists(config_.socket_dir + "/aaaa")) << "its socket directory removed";
}

TEST_F(ControlCheckpointTest, AnAddIsOnDiskBeforeItsPortIsMadeSoAFailedWriteMakesNothing) {
  writeText(dir_ + "/not-a-dir", "");
  config_.state_dir = dir_ + "/not-a-dir/state";
  Node node(config_, 0);
  auto added = node.control->addPort(request("aaaa", "10.244.1.10"));
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInternal) << added.status();
  EXPECT_NE(added.status().message().find("state directory " + config_.state_dir + " cannot be written"),
            std::string::npos)
      << added.status();
  EXPECT_TRUE(node.backend.created.empty()) << "no DPDK port was ever opened";
  EXPECT_TRUE(fs::is_empty(config_.socket_dir)) << "no socket, no subdirectory";
}

TEST_F(ControlCheckpointTest, ARefusedAddDoesNotForgetTheWriteAFailedDeleteOwes) {
  auto node = std::make_unique<Node>(config_, 0);
  ASSERT_TRUE(node->control->addPort(request("aaaa", "10.244.1.10")).ok());
  // The state directory becomes unwritable: the delete removes the port and
  // reports; the file still names it.
  fs::rename(config_.state_dir, dir_ + "/state-away");
  writeText(config_.state_dir, "");
  EXPECT_EQ(node->control->deletePort({"aaaa", "net1"}).status().code(), absl::StatusCode::kInternal);
  EXPECT_FALSE(node->control->addPort(request("bbbb", "10.244.1.11")).ok());
  // Writable again: the runtime's retried DEL finds nothing and writes the
  // checkpoint still owed.
  fs::remove(config_.state_dir);
  fs::rename(dir_ + "/state-away", config_.state_dir);
  auto retried = node->control->deletePort({"aaaa", "net1"});
  ASSERT_TRUE(retried.ok()) << retried.status();
  EXPECT_FALSE(*retried);
  EXPECT_TRUE(onDisk().ports.empty());
}

TEST_F(ControlCheckpointTest, RestoreBringsBackTheSameNumbersAndSocketsWhateverTheDpdkPortIds) {
  std::vector<PortView> before;
  {
    Node first(config_, 0);
    ASSERT_TRUE(first.control->addPort(request("aaaa", "10.244.1.10"), netns("a")).ok());
    ASSERT_TRUE(first.control->addPort(request("bbbb", "10.244.1.11")).ok());
    ASSERT_TRUE(first.control->addPort(request("cccc", "10.244.1.12", VhostMode::kClient)).ok());
    ASSERT_TRUE(*first.control->deletePort({"bbbb", "net1"}));  // leaves a hole at 1
    before = first.control->listPorts();
  }
  // The restarted process's hot-plugged ethdevs get other ids (here from 20).
  Node second(config_, 20);
  CheckpointLoad loaded = *second.store.load();
  RestoreSummary r = second.control->restore(loaded.state);
  EXPECT_EQ(r.restored, 2u);
  EXPECT_EQ(r.dropped, 0u);
  EXPECT_EQ(r.garbage_collected, 0u);
  std::vector<PortView> after = second.control->listPorts();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < after.size(); ++i) {
    EXPECT_EQ(after[i].port_no, before[i].port_no);
    EXPECT_EQ(after[i].socket_path, before[i].socket_path);
    EXPECT_EQ(after[i].request.ip, before[i].request.ip);
    EXPECT_EQ(after[i].request.mac, before[i].request.mac);
    EXPECT_EQ(after[i].request.vhost_mode, before[i].request.vhost_mode);
    EXPECT_EQ(after[i].netns, before[i].netns);
  }
  ASSERT_EQ(second.backend.created.size(), 2u);
  EXPECT_EQ(second.backend.created[0].port_no, 0);
  EXPECT_FALSE(second.backend.created[0].client);
  EXPECT_EQ(second.backend.created[1].port_no, 2);
  EXPECT_TRUE(second.backend.created[1].client);
  EXPECT_EQ(second.control->health().restored_ports, 2u);
  // The hole is filled by the next new port, as before the restart.
  auto d = second.control->addPort(request("dddd", "10.244.1.13"));
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port.port_no, 1);
  // Restoring is not adding: the same attachment again is the existing port.
  auto again = second.control->addPort(request("aaaa", "10.244.1.10"));
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(again->created);
  EXPECT_EQ(again->port.port_no, 0);
}

// A multi-queue port is checkpointed with its queue count and reopened with
// it; a sluiced restarted with a lower max-queues-per-port opens it with its
// maximum instead of dropping the pod.
TEST_F(ControlCheckpointTest, AMultiQueuePortIsRestoredWithItsQueues) {
  {
    Node first(config_, 0);
    RawPortRequest r = request("aaaa", "10.244.1.10");
    r.queues = 4;
    ASSERT_TRUE(first.control->addPort(r).ok());
    ASSERT_EQ(onDisk().ports.size(), 1u);
    EXPECT_EQ(onDisk().ports[0].request.queues, std::optional<unsigned>(4));
  }
  {
    Node second(config_, 0);
    EXPECT_EQ(second.control->restore(second.store.load()->state).restored, 1u);
    ASSERT_EQ(second.control->listPorts().size(), 1u);
    EXPECT_EQ(second.control->listPorts()[0].request.queues, 4u);
    EXPECT_EQ(second.control->listPorts()[0].queue_pmds, std::vector<unsigned>(4, 0)) << "one PMD polls all four";
  }
  config_.max_queues_per_port = 2;
  Node third(config_, 0);
  EXPECT_EQ(third.control->restore(third.store.load()->state).restored, 1u);
  ASSERT_EQ(third.control->listPorts().size(), 1u);
  EXPECT_EQ(third.control->listPorts()[0].request.queues, 2u);
  EXPECT_EQ(third.control->listPorts()[0].queue_pmds.size(), 2u);
}

TEST_F(ControlCheckpointTest, RecordsThatCannotBeRestoredAreDroppedTheOthersRestored) {
  CheckpointState s;
  s.ports.push_back(record(0, "good0", "10.244.1.10"));
  s.ports.push_back(record(1, "outside", "10.9.9.9"));           // not in the pod CIDR any more
  s.ports.push_back(record(2, "refused", "10.244.1.12"));        // DPDK refuses the port
  s.ports.push_back(record(3, "moved", "10.244.1.13"));
  s.ports[3].socket_path = "/elsewhere/moved/net1.sock";     // socket-dir changed
  s.ports.push_back(record(0, "twice", "10.244.1.14"));          // number already taken
  s.ports.push_back(record(9, "beyond", "10.244.1.15"));         // max-ports is 8
  s.ports.push_back(record(5, "dupip", "10.244.1.10"));          // IP of good0
  s.ports.push_back(record(6, "good6", "10.244.1.16"));
  s.sections["vfs"] = nlohmann::json::array({{{"pci", "0000:3b:02.1"}}});
  Node node(config_, 0);
  node.backend.refuse_socket = config_.socket_dir + "/refused/net1.sock";
  RestoreSummary r = node.control->restore(s);
  EXPECT_EQ(r.restored, 2u);
  EXPECT_EQ(r.dropped, 6u);
  std::vector<PortView> ports = node.control->listPorts();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].request.attachment.container_id, "good0");
  EXPECT_EQ(ports[1].request.attachment.container_id, "good6");
  EXPECT_EQ(ports[1].port_no, 6);
  // The dropped ones are forgotten on disk too; the VF section is kept.
  CheckpointState disk = onDisk();
  EXPECT_EQ(numbers(disk), (std::vector<uint16_t>{0, 6}));
  EXPECT_EQ(disk.sections["vfs"], s.sections["vfs"]);
  EXPECT_FALSE(fs::exists(config_.socket_dir + "/refused")) << "the refused port's directory is not left behind";
}

// The uplink as overlay control needs it, without a device.
class NoUplink final : public UplinkIo {
 public:
  MacAddress mac() const override { return *MacAddress::parse("02:00:00:00:77:01"); }
  bool ipChecksumOffload() const override { return false; }
  uint16_t dpdkPort() const override { return 99; }
  rte_spinlock_t* txLock() override { return nullptr; }
  rte_ring* puntRing() override { return nullptr; }
  absl::Status send(const std::vector<uint8_t>&) override { return absl::OkStatus(); }
  void drainPunted(const std::function<void(const uint8_t*, size_t)>&) override {}
  bool linkUp() override { return true; }
};

// A node checkpointed its pods without an overlay; it restarts with one, whose
// uplink takes the last port number, where a pod was. The pod comes back on
// another number with its socket, never on the uplink's.
TEST_F(ControlCheckpointTest, APortCheckpointedAtTheUplinksNumberIsRestoredElsewhere) {
  const uint16_t uplink_port = static_cast<uint16_t>(config_.max_ports - 1);
  CheckpointState s;
  s.ports.push_back(record(uplink_port, "onuplink", "10.244.1.20"));  // first on disk, restored last
  s.ports.push_back(record(0, "zero", "10.244.1.10"));
  s.ports.push_back(record(2, "two", "10.244.1.12"));
  OverlayConfig overlay_config;
  overlay_config.uplink = UplinkConfig{};
  overlay_config.uplink->devargs = "none";
  overlay_config.uplink->vtep = *Ipv4Address::parse("192.168.77.1");
  overlay_config.uplink->vtep_prefix = 24;
  overlay_config.vni = 42;
  NoUplink uplink;
  OverlayControl overlay(overlay_config, config_.pod_cidr, uplink, uplink_port, 1);
  Node node(config_, 0);
  auto module = OverlayModule::attach(*node.control, overlay);
  ASSERT_TRUE(module.ok()) << module.status();
  RestoreSummary r = node.control->restore(s);
  EXPECT_EQ(r.restored, 3u);
  EXPECT_EQ(r.dropped, 0u);
  std::map<std::string, uint16_t> number;
  for (const PortView& p : node.control->listPorts()) {
    number[p.request.attachment.container_id] = p.port_no;
    EXPECT_NE(p.port_no, uplink_port) << p.request.attachment.container_id;
  }
  EXPECT_EQ(number, (std::map<std::string, uint16_t>{{"onuplink", 1}, {"zero", 0}, {"two", 2}}));
  for (const PortView& p : node.control->listPorts()) {
    if (p.request.attachment.container_id == "onuplink") {
      EXPECT_EQ(p.socket_path, config_.socket_dir + "/onuplink/net1.sock");
    }
  }
  // The checkpoint says where it is now.
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{0, 1, 2}));
  node.control->removeAllPorts();
  module->reset();
}

TEST_F(ControlCheckpointTest, PortsOfVanishedNetnsAreCollectedOthersKept) {
  Node node(config_, 0);
  std::string ns_a = netns("a"), ns_b = netns("b");
  ASSERT_TRUE(node.control->addPort(request("aaaa", "10.244.1.10"), ns_a).ok());
  ASSERT_TRUE(node.control->addPort(request("bbbb", "10.244.1.11"), ns_b).ok());
  ASSERT_TRUE(node.control->addPort(request("cccc", "10.244.1.12")).ok());  // netns unknown
  // A path that does not exist at ADD time is not watched (else a runtime
  // that passes an odd path would lose the pod's port at the next check).
  auto d = node.control->addPort(request("dddd", "10.244.1.13"), dir_ + "/netns/never");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->port.netns, "");
  EXPECT_EQ(node.control->addPort(request("eeee", "10.244.1.14"), "relative/path").status().code(),
            absl::StatusCode::kInvalidArgument);

  EXPECT_EQ(node.control->collectGarbage(), 0u);
  fs::remove(ns_a);
  EXPECT_EQ(node.control->collectGarbage(), 1u);
  std::vector<std::string> left;
  for (const PortView& p : node.control->listPorts()) left.push_back(p.request.attachment.container_id);
  EXPECT_EQ(left, (std::vector<std::string>{"bbbb", "cccc", "dddd"}));
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{1, 2, 3}));
  EXPECT_FALSE(fs::exists(config_.socket_dir + "/aaaa"));
  EXPECT_EQ(node.control->health().garbage_collected, 1u);
  EXPECT_EQ(node.control->collectGarbage(), 0u);
  EXPECT_EQ(node.control->health().garbage_collected, 1u);
}

TEST_F(ControlCheckpointTest, TheCollectorThreadRemovesAPortOnceItsNetnsGoes) {
  Node node(config_, 0);
  std::string ns = netns("a");
  ASSERT_TRUE(node.control->addPort(request("aaaa", "10.244.1.10"), ns).ok());
  node.control->startGarbageCollector(std::chrono::milliseconds(5));
  fs::remove(ns);
  // A deadline on the condition, not a measurement.
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!node.control->listPorts().empty() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(node.control->listPorts().empty());
  EXPECT_EQ(node.control->health().garbage_collected, 1u);
  node.control->stopGarbageCollector();
}

TEST_F(ControlCheckpointTest, APodThatVanishedWhileSluicedWasDownIsCollectedAtRestore) {
  std::string ns_a = netns("a");
  {
    Node first(config_, 0);
    ASSERT_TRUE(first.control->addPort(request("aaaa", "10.244.1.10"), ns_a).ok());
    ASSERT_TRUE(first.control->addPort(request("bbbb", "10.244.1.11"), netns("b")).ok());
  }
  fs::remove(ns_a);
  Node second(config_, 0);
  RestoreSummary r = second.control->restore(second.store.load()->state);
  EXPECT_EQ(r.restored, 1u);
  EXPECT_EQ(r.garbage_collected, 1u);
  ASSERT_EQ(second.backend.created.size(), 1u) << "no port made just to be removed";
  EXPECT_EQ(second.backend.created[0].port_no, 1);
  EXPECT_EQ(second.control->health().garbage_collected, 1u);
  EXPECT_EQ(numbers(onDisk()), (std::vector<uint16_t>{1}));
}

// The version-1 file on a node with its pool: both ports come back with their
// numbers and sockets, the VF is held again, and the file is rewritten at
// the current version with the VF's record unchanged.
TEST_F(ControlCheckpointTest, TheVersion1FileRestoresEveryPortAndVf) {
  // The file's sockets are under sluiced's default socket-dir; this test's
  // sluiced has its own (the path prefix is the only text changed).
  std::string text = v1Fixture();
  for (size_t at; (at = text.find("/var/run/sluice/vhost")) != std::string::npos;)
    text.replace(at, std::strlen("/var/run/sluice/vhost"), config_.socket_dir);
  fs::create_directories(config_.state_dir);
  writeText(config_.state_dir + "/checkpoint.json", text);
  sriov::testing::FakeSysfs sys;
  sys.addVf("pf0", 0, "0000:3b:02.0", "pf0v0");
  sriov::FakePfControl pf;
  auto pool = sriov::SriovControl::create({{"pf0", ""}}, sys.root(), pf);
  ASSERT_TRUE(pool.ok()) << pool.status();
  Node node(config_, 0);
  SriovModule vfs(*node.control, pool->get());
  absl::StatusOr<CheckpointLoad> loaded = node.store.load();
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  RestoreSummary r = node.control->restore(loaded->state);
  EXPECT_EQ(r.restored, 2u);
  EXPECT_EQ(r.dropped, 0u);
  std::vector<PortView> ports = node.control->listPorts();
  ASSERT_EQ(ports.size(), 2u);
  EXPECT_EQ(ports[0].port_no, 0);
  EXPECT_EQ(ports[0].request.attachment.container_id, "c0ffee0123456789");
  EXPECT_EQ(ports[0].socket_path, config_.socket_dir + "/c0ffee012345-1a2b3c4d/net1.sock");
  EXPECT_EQ(ports[0].request.ip.toString(), "10.244.1.10");
  EXPECT_EQ(ports[0].request.mac.toString(), "02:53:0a:f4:01:0a");
  EXPECT_EQ(ports[1].port_no, 3);
  EXPECT_EQ(ports[1].request.attachment.container_id, "beef0123456789ab");
  EXPECT_EQ(ports[1].socket_path, config_.socket_dir + "/beef01234567-net2.sock");
  EXPECT_EQ(ports[1].request.vhost_mode, VhostMode::kClient);
  std::vector<sriov::VfAttachment> held = vfs.attachments();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].request.attachment.container_id, "feed0123456789ab");
  EXPECT_EQ(held[0].vf.pci_address, "0000:3b:02.0");
  EXPECT_EQ(held[0].settings.vlan, 42u);
  EXPECT_TRUE(pf.calls().empty()) << "the VF is held again without touching the PF";
  // Rewritten at the current version: the same ports (without IPv6, with
  // the node's default MTU, their sources checked as before the setting
  // existed, no routed prefixes) and VF record, an empty "nodes".
  nlohmann::json before = nlohmann::json::parse(text);
  for (nlohmann::json& port : before["ports"]) {
    port["ipv6"] = "";
    port["mtu"] = 0;
    port["source_validation"] = true;
    port["routed_prefixes"] = nlohmann::json::array();
  }
  const nlohmann::json after = nlohmann::json::parse(readText(config_.state_dir + "/checkpoint.json"));
  EXPECT_EQ(after["version"], kCheckpointVersion);
  EXPECT_EQ(after["ports"], before["ports"]);
  EXPECT_EQ(after["vfs"], before["vfs"]);
  EXPECT_EQ(after["nodes"], nlohmann::json::array());
  node.control->removeAllPorts();
}

// A module's section on a node without that module (no uplink: no overlay
// module), and a registered module with nothing to restore into (SR-IOV
// without pools): both sections are written back as they were, by every
// change, not only by the restore.
TEST_F(ControlCheckpointTest, SectionsOfModulesThatCannotUseThemAreKeptVerbatim) {
  CheckpointState s;
  s.sections["nodes"] = nlohmann::json::parse(R"([{"name": "w2", "vtep": "192.168.77.2", "pod-cidrs": ["10.244.2.0/24"]}])");
  s.sections["vfs"] = nlohmann::json::parse(R"([{"pci_address": "0000:3b:02.1", "container_id": "cccc"}])");
  Node node(config_, 0);
  SriovModule no_pools(*node.control, nullptr);
  node.control->restore(s);
  EXPECT_EQ(onDisk().sections, s.sections);
  ASSERT_TRUE(node.control->addPort(request("aaaa", "10.244.1.10")).ok());
  CheckpointState disk = onDisk();
  EXPECT_EQ(numbers(disk), (std::vector<uint16_t>{0}));
  EXPECT_EQ(disk.sections, s.sections);
  node.control->removeAllPorts();
}

// The API call that would grow the checkpoint beyond what a start reads is
// the one that fails (RESOURCE_EXHAUSTED), and its port is undone.
TEST_F(ControlCheckpointTest, AnAddThatWouldOutgrowTheCheckpointFailsAndIsUndone) {
  // An unknown module's section, kept verbatim, sized so that the restore's
  // own write is 64 bytes short of the cap: any port's record is more.
  CheckpointState s;
  s.sections["future"] = nlohmann::json::array({{{"blob", ""}}});
  const size_t bare = serializeCheckpoint(s).size();
  s.sections["future"] = nlohmann::json::array({{{"blob", std::string((16u << 20) - bare - 64, 'x')}}});
  ASSERT_EQ(serializeCheckpoint(s).size(), (16u << 20) - 64);
  Node node(config_, 0);
  node.control->restore(s);
  auto added = node.control->addPort(request("aaaa", "10.244.1.10"));
  EXPECT_EQ(added.status().code(), absl::StatusCode::kResourceExhausted) << added.status();
  EXPECT_TRUE(node.control->listPorts().empty());
  EXPECT_TRUE(node.backend.live.empty());
  EXPECT_TRUE(onDisk().ports.empty()) << "the file on disk is still the one a start reads";
  EXPECT_EQ(onDisk().sections, s.sections);
}

RemoteNodeConfig remoteNode(const std::string& name, const std::string& vtep, const std::string& cidr,
                            std::optional<std::string> mac = std::nullopt) {
  RemoteNodeConfig n;
  n.name = name;
  n.vtep = *Ipv4Address::parse(vtep);
  n.pod_cidrs = {*Ipv4Cidr::parse(cidr)};
  if (mac) n.mac = *MacAddress::parse(*mac);
  return n;
}

// One sluiced life with an overlay: the uplink stands in, the config file's
// remote nodes are `configured`.
struct OverlayNode {
  OverlayNode(const SluicedConfig& config, const std::vector<RemoteNodeConfig>& configured)
      : overlay(overlayConfig(configured), config.pod_cidr, uplink, static_cast<uint16_t>(config.max_ports - 1), 1),
        node(config, 0) {
    auto attached = OverlayModule::attach(*node.control, overlay);
    EXPECT_TRUE(attached.ok()) << attached.status();
    if (attached.ok()) module = std::move(*attached);
  }
  ~OverlayNode() {
    node.control->removeAllPorts();
    module.reset();
  }
  static OverlayConfig overlayConfig(const std::vector<RemoteNodeConfig>& configured) {
    OverlayConfig c;
    c.uplink = UplinkConfig{};
    c.uplink->devargs = "none";
    c.uplink->vtep = *Ipv4Address::parse("192.168.77.1");
    c.uplink->vtep_prefix = 24;
    c.vni = 42;
    c.remote_nodes = configured;
    return c;
  }
  std::map<std::string, RemoteNodeConfig> nodes() {
    std::map<std::string, RemoteNodeConfig> out;
    for (const RemoteNodeView& v : module->listNodes()) out[v.node.name] = v.node;
    return out;
  }
  NoUplink uplink;
  OverlayControl overlay;
  Node node;
  std::unique_ptr<OverlayModule> module;
};

TEST_F(ControlCheckpointTest, NodesAddedThroughTheApiAreCheckpointedAndComeBackTheConfigFileWinning) {
  const RemoteNodeConfig static1 = remoteNode("static-1", "192.168.77.5", "10.244.5.0/24");
  {
    OverlayNode first(config_, {static1});
    ASSERT_TRUE(*first.module->addNode(remoteNode("api-1", "192.168.77.2", "10.244.2.0/24", "02:00:00:00:00:21")));
    ASSERT_TRUE(*first.module->addNode(remoteNode("api-2", "192.168.77.3", "10.244.3.0/24")));
    ASSERT_TRUE(*first.module->addNode(remoteNode("api-3", "192.168.77.4", "10.244.4.0/24")));
    EXPECT_FALSE(*first.module->addNode(remoteNode("api-3", "192.168.77.4", "10.244.4.0/24")));
    ASSERT_TRUE(*first.module->deleteNode("api-3"));
    // On disk when the calls return: the API's nodes, never the config file's.
    EXPECT_EQ(onDisk().sections["nodes"], nlohmann::json::parse(R"([
      {"name": "api-1", "vtep": "192.168.77.2", "pod-cidrs": ["10.244.2.0/24"], "mac": "02:00:00:00:00:21",
       "source": "api"},
      {"name": "api-2", "vtep": "192.168.77.3", "pod-cidrs": ["10.244.3.0/24"], "source": "api"}])"));
    EXPECT_EQ(nlohmann::json::parse(readText(config_.state_dir + "/checkpoint.json"))["version"], kCheckpointVersion);
  }
  // Meanwhile the config file has come to list api-2 itself, elsewhere; and
  // records that no longer fit are on disk (unreadable; overlapping static-1).
  CheckpointStore store(config_.state_dir);
  CheckpointState saved = store.load()->state;
  saved.sections["nodes"].push_back({{"name", "bad"}, {"vtep", 7}, {"pod-cidrs", {"10.244.7.0/24"}}});
  saved.sections["nodes"].push_back({{"name", "overlap"}, {"vtep", "192.168.77.8"}, {"pod-cidrs", {"10.244.5.0/25"}}});
  ASSERT_TRUE(store.save(saved).ok());
  const RemoteNodeConfig api2_configured = remoteNode("api-2", "192.168.77.6", "10.244.6.0/24");
  OverlayNode second(config_, {static1, api2_configured});
  second.node.control->restore(second.node.store.load()->state);
  std::map<std::string, RemoteNodeConfig> nodes = second.nodes();
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_EQ(nodes["static-1"].vtep, static1.vtep);
  EXPECT_EQ(nodes["api-1"].vtep.toString(), "192.168.77.2");
  EXPECT_EQ(nodes["api-1"].pod_cidrs, (std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.2.0/24")}));
  EXPECT_EQ(nodes["api-1"].mac->toString(), "02:00:00:00:00:21");
  EXPECT_EQ(nodes["api-2"].vtep.toString(), "192.168.77.6") << "the config file's api-2, not the checkpoint's";
  // Rewritten by the restore: the API's node only (api-2 is the file's now,
  // the two that did not fit are dropped).
  EXPECT_EQ(onDisk().sections["nodes"], nlohmann::json::parse(R"([
      {"name": "api-1", "vtep": "192.168.77.2", "pod-cidrs": ["10.244.2.0/24"], "mac": "02:00:00:00:00:21",
       "source": "api"}])"));
}

// IPv6 pod CIDRs are kept in the record's one list beside the IPv4 ones and
// come back; a record written before IPv6 (IPv4 only) reads as it did.
TEST_F(ControlCheckpointTest, RemoteNodesIpv6PodCidrsAreCheckpointed) {
  {
    OverlayNode first(config_, {});
    RemoteNodeConfig dual = remoteNode("api-1", "192.168.77.2", "10.244.2.0/24");
    dual.pod_cidrs_v6 = {*Ipv6Cidr::parse("fd00:10:244:2::/64")};
    ASSERT_TRUE(*first.module->addNode(dual));
    EXPECT_EQ(onDisk().sections["nodes"], nlohmann::json::parse(R"([
      {"name": "api-1", "vtep": "192.168.77.2", "pod-cidrs": ["10.244.2.0/24", "fd00:10:244:2::/64"],
       "source": "api"}])"));
  }
  CheckpointStore store(config_.state_dir);
  CheckpointState saved = store.load()->state;
  saved.sections["nodes"].push_back({{"name", "old"}, {"vtep", "192.168.77.9"}, {"pod-cidrs", {"10.244.9.0/24"}}});
  ASSERT_TRUE(store.save(saved).ok());
  OverlayNode second(config_, {});
  second.node.control->restore(second.node.store.load()->state);
  std::map<std::string, RemoteNodeConfig> nodes = second.nodes();
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes["api-1"].pod_cidrs, (std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.2.0/24")}));
  EXPECT_EQ(nodes["api-1"].pod_cidrs_v6, (std::vector<Ipv6Cidr>{*Ipv6Cidr::parse("fd00:10:244:2::/64")}));
  EXPECT_EQ(nodes["old"].pod_cidrs, (std::vector<Ipv4Cidr>{*Ipv4Cidr::parse("10.244.9.0/24")}));
  EXPECT_TRUE(nodes["old"].pod_cidrs_v6.empty());
  const vxlan::RemoteRoute6* route =
      second.overlay.tables()->longestMatch6(Ipv6Address::parse("fd00:10:244:2::5")->bytes.data());
  ASSERT_NE(route, nullptr) << "routed again after the restore";
  EXPECT_EQ(route->tunnel, second.module->listNodes()[0].tunnel) << "api-1's (the list is by name)";
}

TEST_F(ControlCheckpointTest, TheNodeControllersNodesKeepTheirSourceAndAreChangedInPlace) {
  {
    OverlayNode first(config_, {remoteNode("static-1", "192.168.77.5", "10.244.5.0/24")});
    ASSERT_EQ(*first.module->putNode(remoteNode("k-1", "192.168.77.2", "10.244.2.0/24"), NodeSource::kKubernetes, true),
              NodeChange::kCreated);
    const uint16_t tunnel = first.module->listNodes()[0].tunnel;
    // Changed in place: same tunnel index, new VTEP and CIDR, on disk.
    ASSERT_EQ(*first.module->putNode(remoteNode("k-1", "192.168.77.12", "10.244.12.0/24"), NodeSource::kKubernetes,
                                     true),
              NodeChange::kUpdated);
    for (const RemoteNodeView& v : first.module->listNodes())
      if (v.node.name == "k-1") {
        EXPECT_EQ(v.tunnel, tunnel);
        EXPECT_EQ(v.source, NodeSource::kKubernetes);
        EXPECT_EQ(v.node.vtep.toString(), "192.168.77.12");
      }
    // Never a node of another source, replace or not.
    absl::StatusOr<NodeChange> foreign =
        first.module->putNode(remoteNode("static-1", "192.168.77.6", "10.244.5.0/24"), NodeSource::kKubernetes, true);
    EXPECT_EQ(foreign.status().code(), absl::StatusCode::kAlreadyExists) << foreign.status();
    absl::StatusOr<NodeChange> without =
        first.module->putNode(remoteNode("k-1", "192.168.77.13", "10.244.12.0/24"), NodeSource::kKubernetes, false);
    EXPECT_EQ(without.status().code(), absl::StatusCode::kAlreadyExists) << without.status();
    EXPECT_EQ(onDisk().sections["nodes"], nlohmann::json::parse(R"([
      {"name": "k-1", "vtep": "192.168.77.12", "pod-cidrs": ["10.244.12.0/24"], "source": "kubernetes"}])"));
  }
  // A record of an unknown source is dropped; one without a source is the API's.
  CheckpointStore store(config_.state_dir);
  CheckpointState saved = store.load()->state;
  saved.sections["nodes"].push_back(
      {{"name", "odd"}, {"vtep", "192.168.77.8"}, {"pod-cidrs", {"10.244.8.0/24"}}, {"source", "static"}});
  saved.sections["nodes"].push_back({{"name", "old"}, {"vtep", "192.168.77.9"}, {"pod-cidrs", {"10.244.9.0/24"}}});
  ASSERT_TRUE(store.save(saved).ok());
  OverlayNode second(config_, {});
  second.node.control->restore(second.node.store.load()->state);
  std::map<std::string, NodeSource> sources;
  for (const RemoteNodeView& v : second.module->listNodes()) sources[v.node.name] = v.source;
  EXPECT_EQ(sources, (std::map<std::string, NodeSource>{{"k-1", NodeSource::kKubernetes}, {"old", NodeSource::kApi}}));
}

TEST_F(ControlCheckpointTest, AnAddNodeWhoseCheckpointCannotBeWrittenIsUndone) {
  OverlayNode node(config_, {});
  fs::create_directories(config_.state_dir);
  ASSERT_TRUE(*node.module->addNode(remoteNode("api-1", "192.168.77.2", "10.244.2.0/24")));
  // The state directory becomes a file: no write can succeed.
  fs::rename(config_.state_dir, dir_ + "/state-away");
  writeText(config_.state_dir, "");
  absl::StatusOr<bool> added = node.module->addNode(remoteNode("api-2", "192.168.77.3", "10.244.3.0/24"));
  EXPECT_EQ(added.status().code(), absl::StatusCode::kInternal) << added.status();
  EXPECT_NE(added.status().message().find("state directory " + config_.state_dir + " cannot be written"),
            std::string::npos)
      << added.status();
  EXPECT_EQ(node.nodes().size(), 1u) << "api-2 is not there";
  // Writable again: the same call succeeds and is on disk.
  fs::remove(config_.state_dir);
  fs::rename(dir_ + "/state-away", config_.state_dir);
  ASSERT_TRUE(*node.module->addNode(remoteNode("api-2", "192.168.77.3", "10.244.3.0/24")));
  EXPECT_EQ(onDisk().sections["nodes"].size(), 2u);
}

// The version of the snapshot the core published last (one per republish).
uint64_t publishedVersion(const Node& node) {
  const PmdSnapshot* s = node.pmd.context.mailbox.published.load();
  return s == nullptr ? 0 : s->version;
}

NodeOp putOp(const RemoteNodeConfig& n, NodeSource source = NodeSource::kKubernetes) {
  return NodeOp{NodeOp::Kind::kPut, n, source, true};
}

NodeOp removeOp(const std::string& name) {
  NodeOp op;
  op.kind = NodeOp::Kind::kRemove;
  op.node.name = name;
  return op;
}

TEST_F(ControlCheckpointTest, ABatchOfNodesIsOneCheckpointWriteAndOneSnapshotWhateverItsSize) {
  OverlayNode node(config_, {});
  std::vector<NodeOp> ops;
  for (int i = 0; i < 250; ++i)
    ops.push_back(putOp(remoteNode("k-" + std::to_string(i), "192.168.78." + std::to_string(i + 1),
                                   "10.245." + std::to_string(i) + ".0/24")));
  // And 50 refused: each a VTEP one of the above has.
  for (int i = 0; i < 50; ++i)
    ops.push_back(putOp(remoteNode("dup-" + std::to_string(i), "192.168.78." + std::to_string(i + 1),
                                   "10.246." + std::to_string(i) + ".0/24")));
  const uint64_t saves = node.node.store.saves();
  const uint64_t version = publishedVersion(node.node);
  auto results = node.module->applyNodes(std::move(ops));
  size_t created = 0, refused = 0;
  for (const auto& r : results) {
    created += r.ok() && *r == NodeChange::kCreated;
    refused += r.status().code() == absl::StatusCode::kAlreadyExists;
  }
  EXPECT_EQ(created, 250u);
  EXPECT_EQ(refused, 50u);
  EXPECT_EQ(node.node.store.saves(), saves + 1);
  EXPECT_EQ(publishedVersion(node.node), version + 1);
  EXPECT_EQ(onDisk().sections["nodes"].size(), 250u);
  // Nothing that changes anything: no write, no snapshot.
  results = node.module->applyNodes({putOp(remoteNode("k-0", "192.168.78.1", "10.245.0.0/24")), removeOp("nobody"),
                                     putOp(remoteNode("x", "192.168.78.1", "10.246.0.0/24"))});
  EXPECT_TRUE(results[0].ok() && *results[0] == NodeChange::kUnchanged);
  EXPECT_TRUE(results[1].ok() && *results[1] == NodeChange::kUnchanged);
  EXPECT_EQ(results[2].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(node.node.store.saves(), saves + 1);
  EXPECT_EQ(publishedVersion(node.node), version + 1);
  // A change, a removal and a refusal: one of each.
  results = node.module->applyNodes({putOp(remoteNode("k-1", "192.168.79.2", "10.245.1.0/24")), removeOp("k-2"),
                                     putOp(remoteNode("k-3", "192.168.79.2", "10.245.3.0/24"))});
  EXPECT_TRUE(results[0].ok() && *results[0] == NodeChange::kUpdated);
  EXPECT_TRUE(results[1].ok() && *results[1] == NodeChange::kRemoved);
  EXPECT_EQ(results[2].status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(node.node.store.saves(), saves + 2);
  EXPECT_EQ(publishedVersion(node.node), version + 2);
  EXPECT_EQ(onDisk().sections["nodes"].size(), 249u);
}

TEST_F(ControlCheckpointTest, ABatchWhoseCheckpointCannotBeWrittenIsUndoneWhole) {
  OverlayNode node(config_, {});
  ASSERT_TRUE(node.module
                  ->applyNodes({putOp(remoteNode("k-a", "192.168.77.2", "10.244.2.0/24")),
                                putOp(remoteNode("k-b", "192.168.77.3", "10.244.3.0/24"))})[1]
                  .ok());
  auto vteps = [&node] {
    std::map<std::string, std::string> out;
    for (const auto& [name, n] : node.nodes()) out[name] = n.vtep.toString() + " " + n.pod_cidrs[0].toString();
    return out;
  };
  const std::map<std::string, std::string> before = vteps();
  ASSERT_EQ(before.size(), 2u);
  const uint64_t saves = node.node.store.saves();
  const uint64_t version = publishedVersion(node.node);
  // b goes and c takes its CIDR; a changes; the write fails.
  auto batch = [] {
    return std::vector<NodeOp>{removeOp("k-b"), putOp(remoteNode("k-c", "192.168.77.4", "10.244.3.0/24")),
                               putOp(remoteNode("k-a", "192.168.77.5", "10.244.2.0/24"))};
  };
  fs::rename(config_.state_dir, dir_ + "/state-away");
  writeText(config_.state_dir, "");
  auto results = node.module->applyNodes(batch());
  ASSERT_EQ(results.size(), 3u);
  for (const auto& r : results) {
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInternal) << r.status();
    EXPECT_NE(r.status().message().find("state directory " + config_.state_dir + " cannot be written"),
              std::string::npos)
        << r.status();
  }
  EXPECT_EQ(vteps(), before) << "all three undone";
  EXPECT_EQ(node.node.store.saves(), saves);
  EXPECT_EQ(publishedVersion(node.node), version) << "the PMDs never saw it";
  // Writable again: the same batch goes through, once.
  fs::remove(config_.state_dir);
  fs::rename(dir_ + "/state-away", config_.state_dir);
  results = node.module->applyNodes(batch());
  EXPECT_TRUE(results[0].ok() && *results[0] == NodeChange::kRemoved) << results[0].status();
  EXPECT_TRUE(results[1].ok() && *results[1] == NodeChange::kCreated) << results[1].status();
  EXPECT_TRUE(results[2].ok() && *results[2] == NodeChange::kUpdated) << results[2].status();
  EXPECT_EQ(node.node.store.saves(), saves + 1);
  EXPECT_EQ(onDisk().sections["nodes"], nlohmann::json::parse(R"([
    {"name": "k-a", "vtep": "192.168.77.5", "pod-cidrs": ["10.244.2.0/24"], "source": "kubernetes"},
    {"name": "k-c", "vtep": "192.168.77.4", "pod-cidrs": ["10.244.3.0/24"], "source": "kubernetes"}])"));
}

}  // namespace
}  // namespace sluice
