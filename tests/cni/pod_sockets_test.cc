// perPodSockets: a pod's vhost-user sockets in its own emptyDir volume,
// reached by sluiced through a short link under socketDir. The path
// derivation and its validation (pod UIDs, volume names, lengths), the link
// ADD makes and DEL, GC and ADD's undo remove, what the result and the
// device-info say, the group and modes for non-root pods, and the fallback to
// the socket directory when the runtime names no pod.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"
#include "cni-plugin/pod_paths.h"
#include "cni-plugin/pod_socket_volume.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kUid = "0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a93";
constexpr const char* kOtherUid = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d";

// Leaves a unix socket file `name` in `dir` (what sluiced or the pod's
// application leaves there). Bound by a name relative to `dir`: the
// emptyDir's own path is longer than a socket address holds, which is why
// the plugin links to it.
void makeSocketIn(const fs::path& dir, const std::string& name) {
  const fs::path cwd = fs::current_path();
  fs::current_path(dir);
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strcpy(addr.sun_path, name.c_str());
  const int rc = fd < 0 ? -1 : bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  if (fd >= 0) close(fd);
  fs::current_path(cwd);
  ASSERT_EQ(rc, 0) << std::strerror(err);
}

TEST(PodSocketVolumeTest, PodUidsAreUuidsOrStaticPodHashesOnly) {
  EXPECT_TRUE(validatePodUid(kUid).ok());
  EXPECT_TRUE(validatePodUid("0F4E2B8A-6C1D-4E3F-9A7B-5D2C8E1F0A93").ok());
  EXPECT_TRUE(validatePodUid("d41d8cd98f00b204e9800998ecf8427e").ok());  // a static pod's
  for (const char* bad : {"", "..", ".", "../../../etc", "0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a9",
                          "0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a933", "0f4e2b8a/6c1d-4e3f-9a7b-5d2c8e1f0a93",
                          "0f4e2b8a-6c1d-4e3f-9a7b_5d2c8e1f0a93", "0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a9g",
                          "d41d8cd98f00b204e9800998ecf8427", "d41d8cd98f00b204e9800998ecf8427/",
                          "0f4e2b8a6c1d-4e3f-9a7b-5d2c8e1f0a93-"}) {
    EXPECT_FALSE(validatePodUid(bad).ok()) << bad;
  }
  EXPECT_FALSE(validatePodUid(std::string_view("0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a9\0", 36)).ok());
}

TEST(PodSocketVolumeTest, VolumeNamesAreKubernetesLabelsOnly) {
  EXPECT_TRUE(validateVolumeName("sluice-sockets").ok());
  EXPECT_TRUE(validateVolumeName("a").ok());
  EXPECT_TRUE(validateVolumeName(std::string(63, 'v')).ok());
  for (const std::string& bad : std::vector<std::string>{"", ".", "..", "a/b", "../x", "-a", "a-", "Sockets", "a_b",
                                                         "a.b", "a b", std::string(64, 'v'), std::string("a\0b", 3)}) {
    EXPECT_FALSE(validateVolumeName(bad).ok()) << bad;
  }
}

TEST(PodSocketVolumeTest, HostPathIsTheKubeletsEmptyDirConfinedBelowItsRoot) {
  absl::StatusOr<ConfinedPath> p = emptyDirHostPath("/var/lib/kubelet/", kUid, "sluice-sockets");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->root, "/var/lib/kubelet");
  EXPECT_EQ(p->components,
            (std::vector<std::string>{"pods", kUid, "volumes", "kubernetes.io~empty-dir", "sluice-sockets"}));
  EXPECT_EQ(p->str(), std::string("/var/lib/kubelet/pods/") + kUid + "/volumes/kubernetes.io~empty-dir/sluice-sockets");
  EXPECT_FALSE(emptyDirHostPath("/var/lib/kubelet", "../../etc", "x").ok());
  EXPECT_FALSE(emptyDirHostPath("/var/lib/kubelet", kUid, "..").ok());
  EXPECT_FALSE(emptyDirHostPath("/var/lib/kubelet", kUid, "a/../../b").ok());
  EXPECT_FALSE(emptyDirHostPath("relative/kubelet", kUid, "x").ok());
  EXPECT_FALSE(emptyDirHostPath("/var/lib/../kubelet", kUid, "x").ok());
}

TEST(PodSocketVolumeTest, LinkNamesAreShortPerAttachmentAndSafe) {
  const std::string a = podSocketLinkName(kContainerId, "net1");
  const std::string b = podSocketLinkName(kContainerId, "net2");
  EXPECT_NE(a, b) << "each attachment has its own link";
  EXPECT_NE(a, socketSubdir(kContainerId)) << "never the name of a pod directory without perPodSockets";
  EXPECT_EQ(a.substr(0, 12), std::string(kContainerId).substr(0, 12));
  for (const std::string& n :
       std::vector<std::string>{a, b, podSocketLinkName("../..", "x/y"), podSocketLinkName("a.b.c", "..")}) {
    EXPECT_LE(n.size(), 21u) << n;
    EXPECT_EQ(n.find('/'), std::string::npos) << n;
    EXPECT_NE(n, "..");
  }
}

TEST(PodSocketVolumeTest, PodSidePathFitsAUnixSocketAddress) {
  EXPECT_EQ(*podSideSocketPath("/var/run/sluice", "net1"), "/var/run/sluice/net1.sock");
  EXPECT_EQ(*podSideSocketPath("/var/run/sluice/", "net@1"), "/var/run/sluice/net%401.sock");
  // "/" + 97 + "/net1.sock" = 108 bytes: no room left for the NUL.
  EXPECT_FALSE(podSideSocketPath("/" + std::string(97, 'd'), "net1").ok());
  EXPECT_TRUE(podSideSocketPath("/" + std::string(96, 'd'), "net1").ok());
}

TEST(PodSocketVolumeTest, NetworkConfigKeysAreTypedAndVhostUserOnly) {
  json base = {{"cniVersion", "1.1.0"}, {"name", "n"}, {"type", "sluice-cni"}};
  absl::StatusOr<NetConf> c = parseNetConf(base.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->per_pod_sockets) << "on unless the network config says false";
  EXPECT_EQ(c->socket_volume, "sluice-sockets");
  EXPECT_EQ(c->pod_socket_dir, "/var/run/sluice");
  EXPECT_FALSE(c->socket_group);

  json on = base;
  on.update({{"perPodSockets", true}, {"socketVolume", "dpdk-sock"}, {"podSocketDir", "/run//dpdk/"},
             {"socketGroup", 2000}});
  c = parseNetConf(on.dump());
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->per_pod_sockets);
  EXPECT_EQ(c->socket_volume, "dpdk-sock");
  EXPECT_EQ(c->pod_socket_dir, "/run/dpdk");
  EXPECT_EQ(c->socket_group, 2000u);

  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"perPodSockets", "yes"}, {"socketVolume", "../x"}, {"socketVolume", "Upper"}, {"socketVolume", 3},
           {"podSocketDir", "run/x"}, {"podSocketDir", "/run/../etc"}, {"podSocketDir", "/"},
           {"podSocketDir", "/" + std::string(70, 'p')}, {"socketGroup", -1}, {"socketGroup", 4294967295LL},
           {"socketGroup", "1000"}}) {
    json bad = base;
    bad[key] = value;
    absl::StatusOr<NetConf> r = parseNetConf(bad.dump());
    ASSERT_FALSE(r.ok()) << key << "=" << value.dump();
    EXPECT_NE(std::string(r.status().message()).find(key), std::string::npos) << r.status();
  }
  json sriov = base;
  sriov.update({{"interfaceType", "sriov"}, {"perPodSockets", true}});
  EXPECT_FALSE(parseNetConf(sriov.dump()).ok());
}

TEST(PodSocketVolumeTest, KubeletDirIsANodeConfigKey) {
  EXPECT_EQ(NodeConfig{}.kubelet_dir, "/var/lib/kubelet");
  absl::StatusOr<NodeConfig> n = parseNodeConfig(R"({"kubeletDir": "/data/kubelet/"})", "test");
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(n->kubelet_dir, "/data/kubelet");
  EXPECT_FALSE(parseNodeConfig(R"({"kubeletDir": "data/kubelet"})", "test").ok());
  EXPECT_FALSE(parseNodeConfig(R"({"kubeletDir": "/data/../kubelet"})", "test").ok());
}

// The plugin run in-process against the fake sluiced, with a kubelet layout
// under the fixture's directory.
class PodSocketsTest : public CniTest {
 protected:
  void SetUp() override {
    CniTest::SetUp();
    kubelet_ = dir_ / "kubelet";
    writeNodeConfig({{"kubeletDir", kubelet_.string()}});
  }

  // The emptyDir the kubelet made for pod `uid`'s volume `volume`.
  fs::path emptyDir(const std::string& uid = kUid, const std::string& volume = "sluice-sockets") const {
    return kubelet_ / "pods" / uid / "volumes" / "kubernetes.io~empty-dir" / volume;
  }
  fs::path makeEmptyDir(const std::string& uid = kUid, const std::string& volume = "sluice-sockets") const {
    const fs::path d = emptyDir(uid, volume);
    fs::create_directories(d);
    // The kubelet makes emptyDirs world-writable.
    fs::permissions(d, fs::perms::all);
    return d;
  }
  Environment podEnv(const std::string& command, const std::string& uid = kUid,
                     const std::string& container_id = kContainerId, const std::string& ifname = "net1") const {
    Environment e = env(command, container_id, ifname);
    e["CNI_ARGS"] = "IgnoreUnknown=1;K8S_POD_NAMESPACE=default;K8S_POD_NAME=dpdk;K8S_POD_UID=" + uid;
    return e;
  }
  json podConf(const std::string& mode = "client") const {
    json c = conf();
    c["perPodSockets"] = true;
    c["vhostMode"] = mode;
    return c;
  }
  fs::path link(const std::string& container_id = kContainerId, const std::string& ifname = "net1") const {
    return fs::path(socket_dir_) / podSocketLinkName(container_id, ifname);
  }
  json deviceInfo() const {
    std::ifstream in(devinfo_path_);
    return json::parse(in, nullptr, false);
  }

  fs::path kubelet_;
};

TEST_F(PodSocketsTest, AddLinksAShortNameToThePodsEmptyDirAndReportsThePodsPath) {
  const fs::path volume = makeEmptyDir();
  RunResult add = run(podEnv("ADD"), podConf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text << add.stderr_text;

  // sluiced was given the short path through the link.
  ASSERT_EQ(fake_->ports().size(), 1u);
  const std::string sluiced_path = fake_->ports()[0].socket_path();
  EXPECT_EQ(sluiced_path, (link() / "net1.sock").string());
  EXPECT_LT(sluiced_path.size(), sizeof(sockaddr_un::sun_path));
  EXPECT_GE((volume / "net1.sock").string().size(), sluiced_path.size());
  ASSERT_TRUE(fs::is_symlink(link()));
  EXPECT_EQ(fs::read_symlink(link()), volume);
  EXPECT_EQ(fs::canonical(link()), fs::canonical(volume));

  // The pod is told its own path, and that it listens (sluiced is the client).
  EXPECT_EQ(add.out["interfaces"][0]["socketPath"], "/var/run/sluice/net1.sock");
  json info = deviceInfo();
  EXPECT_EQ(info["vhost-user"]["path"], "/var/run/sluice/net1.sock");
  EXPECT_EQ(info["vhost-user"]["mode"], "server");
  EXPECT_EQ(record(kContainerId)["socketLink"], volume.string());

  // CHECK knows the pod's path.
  json check = podConf();
  check["prevResult"] = add.out;
  RunResult checked = run(podEnv("CHECK"), check);
  EXPECT_EQ(checked.rc, 0) << checked.stdout_text;

  // DEL removes the link, never the pod's emptyDir or what is in it. The
  // application's socket, made as sluiced reaches it: by the short path.
  makeSocketIn(link(), "net1.sock");
  EXPECT_TRUE(fs::is_socket(volume / "net1.sock"));
  RunResult del = run(podEnv("DEL"), podConf());
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_FALSE(fs::exists(fs::symlink_status(link())));
  EXPECT_TRUE(fs::exists(volume / "net1.sock"));
  expectNothingLeft();
}

TEST_F(PodSocketsTest, ServerModeTellsThePodToConnectAndSetsTheSocketsGroup) {
  const fs::path volume = makeEmptyDir();
  // What sluiced (the fake does not) makes before AddPort returns.
  makeSocketIn(volume, "net1.sock");
  ASSERT_EQ(chmod((volume / "net1.sock").c_str(), 0755), 0);
  json c = podConf("server");
  c["socketGroup"] = 2345;
  RunResult add = run(podEnv("ADD"), c);
  ASSERT_EQ(add.rc, 0) << add.stdout_text << add.stderr_text;
  EXPECT_EQ(deviceInfo()["vhost-user"]["mode"], "client");
  EXPECT_EQ(deviceInfo()["vhost-user"]["path"], "/var/run/sluice/net1.sock");
  struct stat st {};
  ASSERT_EQ(lstat((volume / "net1.sock").c_str(), &st), 0);
  EXPECT_EQ(st.st_gid, 2345u);
  EXPECT_EQ(st.st_uid, 0u);
  EXPECT_EQ(st.st_mode & 07777, 0660u);
  // sluiced is asked to give the group itself, so that it can again when it
  // re-creates the socket after a restart.
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  ASSERT_TRUE(fake_->addRequests()[0].has_socket_group());
  EXPECT_EQ(fake_->addRequests()[0].socket_group(), 2345u);
  EXPECT_EQ(run(podEnv("DEL"), c).rc, 0);
  expectNothingLeft();
}

TEST_F(PodSocketsTest, ASocketSwappedForASymlinkIsNotChangedThroughIt) {
  const fs::path volume = makeEmptyDir();
  const fs::path victim = dir_ / "victim";
  std::ofstream(victim) << "x";
  ASSERT_EQ(chmod(victim.c_str(), 0600), 0);
  fs::create_symlink(victim, volume / "net1.sock");
  json c = podConf("server");
  c["socketGroup"] = 2345;
  RunResult add = run(podEnv("ADD"), c);
  EXPECT_EQ(add.rc, 1);
  struct stat st {};
  ASSERT_EQ(stat(victim.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(st.st_gid, 0u);
  EXPECT_FALSE(fs::exists(fs::symlink_status(link()))) << "ADD's undo removes its link";
  fs::remove(volume / "net1.sock");
  expectNothingLeft();
}

TEST_F(PodSocketsTest, APodWithoutTheVolumeIsRefusedAndNothingIsLeft) {
  RunResult add = run(podEnv("ADD"), podConf());
  EXPECT_EQ(add.rc, 1);
  EXPECT_EQ(add.code(), 7);
  EXPECT_NE(add.msg().find("socketVolume"), std::string::npos) << add.msg();
  EXPECT_NE(add.msg().find("sluice-sockets"), std::string::npos) << add.msg();
  expectNothingLeft();
}

TEST_F(PodSocketsTest, ABadPodUidIsRefusedWithoutTouchingAnyPath) {
  makeEmptyDir();
  for (const char* uid : {"..", "../../../../etc", "0f4e2b8a-6c1d-4e3f-9a7b-5d2c8e1f0a93/../x"}) {
    RunResult add = run(podEnv("ADD", uid), podConf());
    EXPECT_EQ(add.rc, 1) << uid;
    EXPECT_EQ(add.code(), 4) << uid << ": " << add.msg();
    EXPECT_NE(add.msg().find("K8S_POD_UID"), std::string::npos) << add.msg();
  }
  expectNothingLeft();
}

TEST_F(PodSocketsTest, ASymlinkInTheKubeletLayoutIsNotFollowed) {
  // Another pod's emptyDir, and a "pod directory" that is a symlink to it.
  const fs::path other = makeEmptyDir(kOtherUid);
  fs::create_directories(kubelet_ / "pods");
  fs::create_directory_symlink(kubelet_ / "pods" / kOtherUid, kubelet_ / "pods" / kUid);
  ASSERT_TRUE(fs::exists(emptyDir()));
  RunResult add = run(podEnv("ADD"), podConf());
  EXPECT_EQ(add.rc, 1) << add.stdout_text;
  EXPECT_TRUE(fs::is_empty(other));
  expectNothingLeft();
}

TEST_F(PodSocketsTest, TwoPodsGetTwoLinksEachToItsOwnVolume) {
  const std::string other_container = "9c1d2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d";
  const fs::path mine = makeEmptyDir();
  const fs::path theirs = makeEmptyDir(kOtherUid);
  ASSERT_EQ(run(podEnv("ADD"), podConf()).rc, 0);
  ASSERT_EQ(run(podEnv("ADD", kOtherUid, other_container), podConf()).rc, 0);
  EXPECT_EQ(fs::read_symlink(link()), mine);
  EXPECT_EQ(fs::read_symlink(link(other_container)), theirs);
  // Another interface of the same pod: a link of its own, to the same volume.
  ASSERT_EQ(run(podEnv("ADD", kUid, kContainerId, "net2"), podConf()).rc, 0);
  EXPECT_EQ(fs::read_symlink(link(kContainerId, "net2")), mine);
  EXPECT_EQ(run(podEnv("DEL", kUid, kContainerId, "net2"), podConf()).rc, 0);
  EXPECT_TRUE(fs::is_symlink(link())) << "the first interface's link stays";
  EXPECT_EQ(run(podEnv("DEL"), podConf()).rc, 0);
  EXPECT_EQ(run(podEnv("DEL", kOtherUid, other_container), podConf()).rc, 0);
  expectNothingLeft();
}

TEST_F(PodSocketsTest, ALinkToSomewhereElseIsNeitherReusedNorRemoved) {
  makeEmptyDir();
  const fs::path elsewhere = dir_ / "elsewhere";
  fs::create_directories(elsewhere);
  fs::create_directory_symlink(elsewhere, link());
  RunResult add = run(podEnv("ADD"), podConf());
  EXPECT_EQ(add.rc, 1);
  EXPECT_EQ(fs::read_symlink(link()), elsewhere);
  fs::remove(link());
  expectNothingLeft();
}

TEST_F(PodSocketsTest, DelWithoutARecordStillRemovesTheLink) {
  makeEmptyDir();
  ASSERT_EQ(run(podEnv("ADD"), podConf()).rc, 0);
  for (const fs::directory_entry& e : fs::directory_iterator(data_dir_ + "/sluice-test")) fs::remove(e.path());
  EXPECT_EQ(run(podEnv("DEL"), podConf()).rc, 0);
  EXPECT_FALSE(fs::exists(fs::symlink_status(link())));
}

TEST_F(PodSocketsTest, GcRemovesAStaleAttachmentsLink) {
  makeEmptyDir();
  ASSERT_EQ(run(podEnv("ADD"), podConf()).rc, 0);
  json gc = podConf();
  gc["cni.dev/valid-attachments"] = json::array();
  RunResult r = run(env("GC", kContainerId), gc);
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_FALSE(fs::exists(fs::symlink_status(link())));
  expectNothingLeft();
}

TEST_F(PodSocketsTest, WithoutAPodUidTheSocketGoesBelowSocketDirAsBefore) {
  RunResult add = run(env("ADD"), podConf());
  ASSERT_EQ(add.rc, 0) << add.stdout_text;
  const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
  EXPECT_TRUE(fs::is_directory(fs::symlink_status(pod_dir)));
  EXPECT_EQ(add.out["interfaces"][0]["socketPath"], (pod_dir / "net1.sock").string());
  EXPECT_EQ(deviceInfo()["vhost-user"]["path"], (pod_dir / "net1.sock").string());
  EXPECT_EQ(run(env("DEL"), podConf()).rc, 0);
  expectNothingLeft();
}

TEST_F(PodSocketsTest, WithoutPerPodSocketsAGroupMakesThePodDirectoryGroupWritable) {
  json c = conf();
  c["perPodSockets"] = false;
  c["vhostMode"] = "client";
  c["socketGroup"] = 3456;
  ASSERT_EQ(run(podEnv("ADD"), c).rc, 0);
  const fs::path pod_dir = fs::path(socket_dir_) / socketSubdir(kContainerId);
  struct stat st {};
  ASSERT_EQ(lstat(pod_dir.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_gid, 3456u);
  EXPECT_EQ(st.st_mode & 07777, 02770u);
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_FALSE(fake_->addRequests()[0].has_socket_group()) << "the pod makes its socket in client mode";
  EXPECT_EQ(run(podEnv("DEL"), c).rc, 0);
  expectNothingLeft();
}

}  // namespace
}  // namespace sluice::cni::testing
