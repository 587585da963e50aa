// sluiced keeps its word across restarts, on real DPDK: pods attached and
// traffic flowing, sluiced killed with SIGKILL and started again on the same
// state directory. The same ports come back with the same numbers and sockets
// before the API serves, client-mode ports reconnect to the pods that kept
// running and traffic resumes with no AddPort call; nothing is leaked or
// duplicated; a pod whose netns vanished meanwhile is collected on return;
// a corrupt checkpoint is moved aside and sluiced starts empty; a checkpoint
// of a newer version stops sluiced and is left as it was, unless it names
// this version among its readers (a rollback: the pods keep their ports and
// traffic); remote nodes added
// through the API come back after SIGKILL and SIGTERM.
//
// Pods are net_virtio_user devices in this process. A pod in server mode
// (sluiced's port in client mode) survives sluiced's death and accepts its
// reconnection; a virtio_user client does not reconnect, so the server-mode
// port is checked by a new pod connecting to the restored socket.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "dataplane/core/checkpoint_migrations.h"
#include "tests/integration/sluiced_process.h"
#include "tests/integration/state_files.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.11");
const Ipv4Address kIpC = *Ipv4Address::parse("10.250.0.12");
const Ipv4Address kIpD = *Ipv4Address::parse("10.250.0.13");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
const MacAddress kGatewayMac = MacAddress::fromIpv4(kGateway);

int shell(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

// Every file under `dir`, relative, sorted (sockets and per-pod directories).
std::set<std::string> tree(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it)
    out.insert(fs::relative(it->path(), dir).string());
  return out;
}

std::vector<Frame> udp(Ipv4Address src, Ipv4Address dst, size_t n, uint32_t first_seq) {
  std::vector<Frame> frames;
  for (size_t i = 0; i < n; ++i) {
    UdpFrameSpec s{MacAddress::fromIpv4(src), kGatewayMac, src, dst};
    s.sequence = first_seq + static_cast<uint32_t>(i);
    frames.push_back(udpFrame(s));
  }
  return frames;
}

struct PortFacts {
  uint32_t port_no;
  std::string socket_path, ip, mac;
  v1::VhostMode mode;
  bool operator==(const PortFacts&) const = default;
};

std::map<std::string, PortFacts> facts(const v1::ListPortsResponse& list) {
  std::map<std::string, PortFacts> out;
  for (const v1::Port& p : list.ports())
    out[p.attachment().container_id()] = {p.port_no(), p.socket_path(), p.ip(), p.mac(), p.vhost_mode()};
  return out;
}

class RestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    netns_ = "sluice-rst-" + std::to_string(::getpid());
    shell("ip netns del " + netns_);
    ASSERT_EQ(shell("ip netns add " + netns_), 0);
    std::string error;
    node_ = SluicedProcess::start({}, &error);
    ASSERT_NE(node_, nullptr) << error;
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    pod_c_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    shell("ip netns del " + netns_);
  }

  uint32_t add(const v1::AddPortRequest& req) {
    v1::AddPortResponse resp;
    grpc::Status s = node_->addPort(req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.port().port_no();
  }
  std::string socketOf(uint32_t port_no) {
    const v1::ListPortsResponse list = node_->ports();
    for (const v1::Port& p : list.ports()) {
      if (p.port_no() == port_no) return p.socket_path();
    }
    return "";
  }
  // Sends `n` frames A→B and returns how many arrived at B, in order.
  size_t aToB(size_t n, uint32_t first_seq) {
    std::vector<Frame> frames = udp(kIpA, kIpB, n, first_seq);
    EXPECT_EQ(pod_a_->send(frames), n);
    std::vector<Frame> got = pod_b_->receive(n);
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(udpSequence(got[i]), first_seq + i);
      EXPECT_EQ(ethDst(got[i]), MacAddress::fromIpv4(kIpB));
    }
    return got.size();
  }
  // Until sluiced's client-mode port is up again. The pod's virtio_user
  // server notices its peer's death only when the application reads the link
  // status (as DPDK apps do, by polling or an LSC interrupt); only then does
  // it listen for the reconnection, which sluiced retries every second.
  bool waitReconnected(VirtioPod& pod, uint32_t port_no) {
    return waitFor(
        [&] {
          rte_eth_link link{};
          rte_eth_link_get_nowait(pod.portId(), &link);
          const v1::ListPortsResponse list = node_->ports();
          for (const v1::Port& p : list.ports()) {
            if (p.port_no() == port_no) return p.link_up() && link.link_status == RTE_ETH_LINK_UP;
          }
          return false;
        },
        std::chrono::seconds(20));
  }
  v1::HealthResponse health() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::HealthResponse h;
    EXPECT_TRUE(node_->api().Health(&ctx, {}, &h).ok());
    return h;
  }

  std::string netns_;
  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_, pod_c_;
};

TEST_F(RestartTest, KilledSluicedRestoresItsPortsTrafficResumesAndAVanishedPodIsCollected) {
  // A and B: the pods' applications are vhost servers, sluiced connects.
  uint32_t port_a = add(portRequest("pod-a", kIpA.toString(), v1::VHOST_MODE_CLIENT));
  uint32_t port_b = add(portRequest("pod-b", kIpB.toString(), v1::VHOST_MODE_CLIENT));
  // C: sluiced listens. D: a pod with a real netns that dies while sluiced is down.
  uint32_t port_c = add(portRequest("pod-c", kIpC.toString(), v1::VHOST_MODE_SERVER));
  v1::AddPortRequest d = portRequest("pod-d", kIpD.toString(), v1::VHOST_MODE_SERVER);
  d.set_netns("/var/run/netns/" + netns_);
  uint32_t port_d = add(d);
  ASSERT_FALSE(HasFailure());
  // sluiced's client-mode ports retry until the pods' sockets exist; a
  // virtio_user server's probe returns once sluiced has connected.
  auto pa = VirtioPod::create(socketOf(port_a), /*server=*/true, podPool());
  auto pb = VirtioPod::create(socketOf(port_b), /*server=*/true, podPool());
  auto pc = VirtioPod::create(socketOf(port_c), /*server=*/false, podPool());
  ASSERT_TRUE(pa.ok() && pb.ok() && pc.ok()) << pa.status() << pb.status() << pc.status();
  pod_a_ = std::move(*pa);
  pod_b_ = std::move(*pb);
  pod_c_ = std::move(*pc);
  for (uint32_t p : {port_a, port_b, port_c}) ASSERT_TRUE(node_->waitLinkUp(p)) << node_->log();
  ASSERT_EQ(aToB(500, 0), 500u);

  const v1::ListPortsResponse before_list = node_->ports();
  ASSERT_EQ(before_list.ports_size(), 4);
  EXPECT_EQ(before_list.ports(3).netns(), "/var/run/netns/" + netns_);
  std::map<std::string, PortFacts> before = facts(before_list);
  const std::set<std::string> files_before = tree(node_->socketDir());

  node_->kill9();
  // The pod's network namespace goes while sluiced is down.
  ASSERT_EQ(shell("ip netns del " + netns_), 0);
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;

  // The same ports, numbers and sockets, without any AddPort; D collected.
  std::map<std::string, PortFacts> after = facts(node_->ports());
  std::map<std::string, PortFacts> expected = before;
  expected.erase("pod-d");
  EXPECT_EQ(after.size(), 3u);
  for (const auto& [cid, f] : expected) {
    ASSERT_TRUE(after.contains(cid)) << cid;
    EXPECT_EQ(after[cid], f) << cid;
  }
  v1::HealthResponse h = health();
  EXPECT_EQ(h.ports(), 3u);
  EXPECT_EQ(h.restored_ports(), 3u);
  EXPECT_EQ(h.garbage_collected_attachments(), 1u);
  CommandResult ctl = sluicectl(node_->apiSocket(), "health");
  EXPECT_EQ(ctl.exit_code, 0);
  EXPECT_NE(ctl.output.find("restored at start: 3 ports; garbage-collected attachments: 1"), std::string::npos)
      << ctl.output;
  // Sockets: exactly those before, less D's (nothing leaked, nothing doubled).
  std::set<std::string> files_expected = files_before;
  files_expected.erase(fs::relative(before["pod-d"].socket_path, node_->socketDir()).string());
  EXPECT_EQ(tree(node_->socketDir()), files_expected);
  EXPECT_TRUE(fs::exists(before["pod-c"].socket_path)) << "server socket re-created";

  // A and B reconnect by themselves; traffic resumes, counted end to end.
  ASSERT_TRUE(waitReconnected(*pod_a_, port_a)) << node_->log();
  ASSERT_TRUE(waitReconnected(*pod_b_, port_b)) << node_->log();
  pod_b_->drainCount();
  EXPECT_EQ(aToB(500, 1000), 500u) << node_->stats().DebugString();
  v1::GetStatsResponse s = node_->stats();
  EXPECT_EQ(portStats(s, port_a)->rx_packets(), 500u);
  EXPECT_EQ(portStats(s, port_b)->tx_packets(), 500u);

  // C's old pod (a virtio_user client) cannot reconnect; its restored socket
  // takes a new connection on the same port number and forwards.
  pod_c_.reset();
  auto pc2 = VirtioPod::create(before["pod-c"].socket_path, /*server=*/false, podPool());
  ASSERT_TRUE(pc2.ok()) << pc2.status();
  pod_c_ = std::move(*pc2);
  ASSERT_TRUE(node_->waitLinkUp(port_c)) << node_->log();
  ASSERT_EQ(pod_c_->send(udp(kIpC, kIpB, 100, 5000)), 100u);
  EXPECT_EQ(pod_b_->receive(100).size(), 100u);
  (void)port_d;

  // A clean restart (SIGTERM: a DaemonSet update) restores them just the same.
  pod_c_.reset();
  ASSERT_TRUE(node_->restart(&error)) << error;
  after = facts(node_->ports());
  EXPECT_EQ(after, expected);
  EXPECT_EQ(health().restored_ports(), 3u);
  ASSERT_TRUE(waitReconnected(*pod_a_, port_a)) << node_->log();
  ASSERT_TRUE(waitReconnected(*pod_b_, port_b)) << node_->log();
  pod_b_->drainCount();
  EXPECT_EQ(aToB(200, 9000), 200u);
}

// A server socket with a group: owner, group and mode as AddPort left them
// after a SIGKILL and after a SIGTERM restart; one without a group has
// sluiced's own mode again.
TEST_F(RestartTest, AServerSocketHasTheSameOwnerGroupAndModeAfterEveryRestart) {
  v1::AddPortRequest grouped = portRequest("pod-g", kIpA.toString(), v1::VHOST_MODE_SERVER);
  grouped.set_socket_group(2345);
  const uint32_t port_g = add(grouped);
  const uint32_t port_p = add(portRequest("pod-p", kIpB.toString(), v1::VHOST_MODE_SERVER));
  const std::string sock_g = socketOf(port_g), sock_p = socketOf(port_p);
  auto statOf = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::lstat(path.c_str(), &st), 0) << path << ": " << std::strerror(errno);
    return st;
  };
  const struct stat g0 = statOf(sock_g), p0 = statOf(sock_p);
  EXPECT_EQ(g0.st_uid, 0u);
  EXPECT_EQ(g0.st_gid, 2345u);
  EXPECT_EQ(g0.st_mode, S_IFSOCK | 0660);
  EXPECT_EQ(p0.st_uid, 0u);
  EXPECT_EQ(p0.st_gid, 0u);
  ASSERT_TRUE(S_ISSOCK(p0.st_mode));

  for (const bool kill9 : {true, false}) {
    SCOPED_TRACE(kill9 ? "after SIGKILL" : "after SIGTERM");
    // Another group and mode on the sockets left behind: what is seen after
    // the restart is what the restore made, not what survived it.
    for (const std::string& path : {sock_g, sock_p}) {
      ASSERT_EQ(::chown(path.c_str(), static_cast<uid_t>(-1), 7), 0) << std::strerror(errno);
      ASSERT_EQ(::chmod(path.c_str(), 0600), 0) << std::strerror(errno);
    }
    if (kill9) node_->kill9();
    std::string error;
    ASSERT_TRUE(node_->restart(&error)) << error;
    ASSERT_EQ(health().restored_ports(), 2u);
    const struct stat g = statOf(sock_g), p = statOf(sock_p);
    EXPECT_EQ(g.st_uid, 0u);
    EXPECT_EQ(g.st_gid, 2345u);
    EXPECT_EQ(g.st_mode, S_IFSOCK | 0660);
    EXPECT_EQ(p.st_uid, p0.st_uid);
    EXPECT_EQ(p.st_gid, p0.st_gid);
    EXPECT_EQ(p.st_mode, p0.st_mode);
  }
}

// Runs the built sluice-cni once with `env` as its environment and `conf` on
// stdin; returns its exit code and stdout.
std::pair<int, std::string> cni(const std::vector<std::string>& env, const std::string& conf) {
  int in[2], out[2];
  if (::pipe(in) != 0 || ::pipe(out) != 0) return {-1, "pipe"};
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(in[0], 0);
    ::dup2(out[1], 1);
    ::close(in[1]);
    ::close(out[0]);
    std::vector<std::string> vars = env;
    // A sanitized build's options (suppressions) reach the plugin too.
    for (const char* name : {"TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS"})
      if (const char* value = std::getenv(name)) vars.push_back(std::string(name) + "=" + value);
    std::vector<char*> envp;
    for (const std::string& e : vars) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    char* argv[] = {const_cast<char*>(SLUICE_CNI_BINARY), nullptr};
    ::execve(SLUICE_CNI_BINARY, argv, envp.data());
    std::_Exit(127);
  }
  ::close(in[0]);
  ::close(out[1]);
  if (::write(in[1], conf.data(), conf.size()) != static_cast<ssize_t>(conf.size())) return {-1, "write"};
  ::close(in[1]);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<size_t>(n));
  ::close(out[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text};
}

TEST_F(RestartTest, CniGcWithValidAttachmentsWorksAgainstARestartedSluiced) {
  const std::string work = node_->dir() + "/cni";
  const std::string conf =
      "{\"cniVersion\": \"1.1.0\", \"name\": \"restart\", \"type\": \"sluice-cni\", \"apiSocket\": \"" +
      node_->apiSocket() + "\", \"socketDir\": \"" + node_->socketDir() + "\", \"dataDir\": \"" + work +
      "/records\", \"ipam\": {\"type\": \"host-local\", \"dataDir\": \"" + work +
      "/ipam\", \"ranges\": [[{\"subnet\": \"10.250.0.0/24\", \"gateway\": \"10.250.0.1\"}]]}";
  // The node's own plugin config lets the records and sockets live in this
  // test's directory (a network config alone may not put them elsewhere than
  // /var/lib/cni and /var/run/sluice; no pod UID here, so below socketDir)
  // and names this sluiced's API socket.
  std::filesystem::create_directories(work);
  const std::string node_config = "SLUICE_CNI_NODE_CONFIG=" + work + "/node-cni.json";
  std::ofstream(work + "/node-cni.json") << "{\"dataDirRoot\": \"" << work << "\", \"socketDirRoot\": \""
                                         << node_->dir() << "\", \"apiSockets\": [\"" << node_->apiSocket()
                                         << "\"], \"allowSharedSocketDir\": true}\n";
  auto env = [&](const std::string& command, const std::string& cid) {
    return std::vector<std::string>{"CNI_COMMAND=" + command, "CNI_CONTAINERID=" + cid,
                                    "CNI_NETNS=/var/run/netns/" + cid, "CNI_IFNAME=net1", "CNI_PATH=/usr/lib/cni",
                                    "PATH=/usr/bin:/bin", node_config};
  };
  for (const char* cid : {"keep0123", "stale0123"}) {
    auto [rc, out] = cni(env("ADD", cid), conf + "}");
    ASSERT_EQ(rc, 0) << out;
  }
  ASSERT_EQ(node_->ports().ports_size(), 2);
  const std::set<std::string> leases_before = tree(work + "/ipam/restart");

  node_->kill9();
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  ASSERT_EQ(node_->ports().ports_size(), 2) << "both restored";

  // The runtime's GC names the valid attachments: the other one goes, with
  // its port, socket, record and address.
  auto [rc, out] = cni({"CNI_COMMAND=GC", "CNI_PATH=/usr/lib/cni", "PATH=/usr/bin:/bin", node_config},
                       conf + ", \"cni.dev/valid-attachments\": [{\"containerID\": \"keep0123\", \"ifname\": \"net1\"}]}");
  EXPECT_EQ(rc, 0) << out;
  const v1::ListPortsResponse ports = node_->ports();
  ASSERT_EQ(ports.ports_size(), 1);
  EXPECT_EQ(ports.ports(0).attachment().container_id(), "keep0123");
  const std::set<std::string> leases_after = tree(work + "/ipam/restart");
  EXPECT_EQ(leases_after.size() + 1, leases_before.size()) << "the stale attachment's address released";
  EXPECT_TRUE(leases_after.contains(ports.ports(0).ip()));
  // And the checkpoint no longer has it: another restart brings back one port.
  ASSERT_TRUE(node_->restart(&error)) << error;
  EXPECT_EQ(node_->ports().ports_size(), 1);
  auto [del_rc, del_out] = cni(env("DEL", "keep0123"), conf + "}");
  EXPECT_EQ(del_rc, 0) << del_out;
  EXPECT_EQ(node_->ports().ports_size(), 0);
}

TEST_F(RestartTest, ACorruptCheckpointIsMovedAsideAndSluicedStartsEmpty) {
  add(portRequest("pod-a", kIpA.toString(), v1::VHOST_MODE_SERVER));
  ASSERT_FALSE(HasFailure());
  node_->kill9();
  const std::string path = node_->stateDir() + "/checkpoint.json";
  std::ofstream(path, std::ios::trunc) << "{\"format\": \"sluice-checkpoint\", \"version\": 1, \"ports\": [{";
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  EXPECT_EQ(node_->ports().ports_size(), 0);
  EXPECT_EQ(health().restored_ports(), 0u);
  std::set<std::string> state = tree(node_->stateDir());
  ASSERT_EQ(state.size(), 2u) << "the corrupt file aside, and a fresh checkpoint";
  EXPECT_EQ(state.begin()->rfind("checkpoint.json", 0), 0u);
  EXPECT_EQ(std::next(state.begin())->rfind("checkpoint.json.corrupt-", 0), 0u);
  EXPECT_NE(node_->log().find("is unusable"), std::string::npos);
  // The node works: a new port can be added at number 0.
  EXPECT_EQ(add(portRequest("pod-b", kIpB.toString())), 0u);
}

// A downgrade onto a newer sluiced's checkpoint: this sluiced does not start
// (it would break that sluiced's promises), says why, and leaves the file.
TEST_F(RestartTest, ACheckpointOfANewerVersionStopsSluicedAndIsLeftInPlace) {
  const uint32_t port_a = add(portRequest("pod-a", kIpA.toString(), v1::VHOST_MODE_SERVER));
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(node_->stop(), 0) << node_->log();
  const std::string path = node_->stateDir() + "/checkpoint.json";
  const std::string ours = fileText(path);
  // The version this sluiced writes, made one it cannot know.
  const std::string marker = "\"version\": " + std::to_string(kCheckpointVersion);
  const size_t at = ours.find(marker);
  ASSERT_NE(at, std::string::npos) << ours;
  std::string newer = ours;
  newer.replace(at, marker.size(), "\"version\": 99");
  std::ofstream(path, std::ios::trunc) << newer;

  std::string error;
  EXPECT_FALSE(node_->restart(&error));
  EXPECT_EQ(node_->exitCode(), std::optional<int>(1)) << node_->log();
  EXPECT_NE(node_->log().find("not starting: " + path + ": checkpoint version 99 is newer than this sluiced "
                              "understands (versions 1 to " + std::to_string(kCheckpointVersion) + "); left in place"),
            std::string::npos)
      << node_->log();
  EXPECT_EQ(fileText(path), newer) << "byte for byte";
  EXPECT_EQ(tree(node_->stateDir()), std::set<std::string>{"checkpoint.json"}) << "nothing moved aside";
  EXPECT_FALSE(fs::exists(node_->apiSocket())) << "it never served";

  // The sluiced that reads it (here: the file at our version again) finds
  // every promise still there.
  std::ofstream(path, std::ios::trunc) << ours;
  ASSERT_TRUE(node_->restart(&error)) << error;
  const v1::ListPortsResponse ports = node_->ports();
  ASSERT_EQ(ports.ports_size(), 1);
  EXPECT_EQ(ports.ports(0).attachment().container_id(), "pod-a");
  EXPECT_EQ(ports.ports(0).port_no(), port_a);
}

// A rollback with pods attached and traffic flowing: the checkpoint a newer
// sluiced left names this version among its readers (its "oldest_reader"),
// with keys this one does not know. This sluiced starts, keeps both pods'
// ports at their numbers and sockets, the pods reconnect and traffic resumes;
// only a port the file says needs a newer reader is left out, by name.
TEST_F(RestartTest, ARollbackOntoANewerCheckpointThatNamesThisVersionKeepsThePodsAndTheirTraffic) {
  // Server-mode ports (sluiced listens): after the restart the pods connect
  // anew to the restored sockets, as a pod's vhost-user client would.
  const uint32_t port_a = add(portRequest("pod-a", kIpA.toString(), v1::VHOST_MODE_SERVER));
  const uint32_t port_b = add(portRequest("pod-b", kIpB.toString(), v1::VHOST_MODE_SERVER));
  add(portRequest("pod-c", kIpC.toString(), v1::VHOST_MODE_SERVER));
  ASSERT_FALSE(HasFailure());
  auto connectPods = [&] {
    pod_a_.reset();
    pod_b_.reset();
    auto pa = VirtioPod::create(socketOf(port_a), /*server=*/false, podPool());
    auto pb = VirtioPod::create(socketOf(port_b), /*server=*/false, podPool());
    ASSERT_TRUE(pa.ok() && pb.ok()) << pa.status() << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    for (uint32_t p : {port_a, port_b}) ASSERT_TRUE(node_->waitLinkUp(p)) << node_->log();
  };
  connectPods();
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(aToB(300, 0), 300u);
  std::map<std::string, PortFacts> before = facts(node_->ports());

  ASSERT_EQ(node_->stop(), 0) << node_->log();
  // What a newer sluiced would have written over this one's file.
  const std::string path = node_->stateDir() + "/checkpoint.json";
  nlohmann::json doc = nlohmann::json::parse(fileText(path));
  const uint64_t newer = kCheckpointVersion + 1;
  doc["version"] = newer;
  doc["oldest_reader"] = kCheckpointVersion;
  doc["a_newer_setting"] = "on";
  for (nlohmann::json& port : doc["ports"]) {
    port["a_newer_field"] = {{"x", 1}};
    if (port["container_id"] == "pod-c") port["oldest_reader"] = newer;
  }
  std::ofstream(path, std::ios::trunc) << doc.dump(1);

  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  std::map<std::string, PortFacts> after = facts(node_->ports());
  before.erase("pod-c");
  EXPECT_EQ(after, before);
  EXPECT_NE(node_->log().find("port pod-c/net1 (needs version " + std::to_string(newer) + ") left out"),
            std::string::npos)
      << node_->log();
  // Its own version from now on, which the newer sluiced migrates forward.
  EXPECT_EQ(nlohmann::json::parse(fileText(path))["version"], kCheckpointVersion);

  connectPods();
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(aToB(300, 1000), 300u) << node_->stats().DebugString();
}

// Remote nodes on a node with an uplink (a net_null device: no traffic here,
// only the node table). The config file lists one node; the API adds others.
class NodeRestartTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_ = "/tmp/sluice-node-restart-" + std::to_string(::getpid()) + ".json";
    std::ofstream(config_) << R"({"vni": 7, "uplink": {"devargs": "net_null_rst0,no-rx=1", "vtep": "192.168.77.1/24"},)"
                           << R"( "remote-nodes": [{"name": "static-1", "vtep": "192.168.77.5",)"
                           << R"( "pod-cidrs": ["10.250.5.0/24"]}]})";
    SluicedOptions o;
    o.extra_flags = {"--config", config_};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
  }
  void TearDown() override {
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
    fs::remove(config_);
  }

  struct NodeFacts {
    std::string vtep, cidrs, mac;
    bool operator==(const NodeFacts&) const = default;
  };
  std::map<std::string, NodeFacts> nodes() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = node_->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::map<std::string, NodeFacts> out;
    for (const v1::RemoteNode& n : r.nodes()) {
      std::string cidrs;
      for (const std::string& c : n.pod_cidrs()) cidrs += (cidrs.empty() ? "" : ",") + c;
      out[n.name()] = {n.vtep(), cidrs, n.mac()};
    }
    return out;
  }
  grpc::Status addNode(const std::string& name, const std::string& vtep, const std::string& cidr,
                       const std::string& mac = "") {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::AddNodeRequest req;
    req.mutable_node()->set_name(name);
    req.mutable_node()->set_vtep(vtep);
    req.mutable_node()->add_pod_cidrs(cidr);
    req.mutable_node()->set_mac(mac);
    v1::AddNodeResponse resp;
    grpc::Status s = node_->remoteNodes().AddNode(&ctx, req, &resp);
    EXPECT_TRUE(!s.ok() || resp.created()) << name;
    return s;
  }
  grpc::Status deleteNode(const std::string& name) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::DeleteNodeRequest req;
    req.set_name(name);
    v1::DeleteNodeResponse resp;
    grpc::Status s = node_->remoteNodes().DeleteNode(&ctx, req, &resp);
    EXPECT_TRUE(!s.ok() || resp.deleted()) << name;
    return s;
  }

  std::string config_;
  std::unique_ptr<SluicedProcess> node_;
};

TEST_F(NodeRestartTest, NodesAddedThroughTheApiComeBackAfterKillAndStop) {
  ASSERT_TRUE(addNode("api-1", "192.168.77.2", "10.250.2.0/24", "02:00:00:00:00:21").ok());
  ASSERT_TRUE(addNode("api-2", "192.168.77.3", "10.250.3.0/24").ok());
  const std::map<std::string, NodeFacts> before = nodes();
  ASSERT_EQ(before, (std::map<std::string, NodeFacts>{
                        {"api-1", {"192.168.77.2", "10.250.2.0/24", "02:00:00:00:00:21"}},
                        {"api-2", {"192.168.77.3", "10.250.3.0/24", MacAddress::fromIpv4(
                                                                        *Ipv4Address::parse("192.168.77.3"))
                                                                        .toString()}},
                        {"static-1", {"192.168.77.5", "10.250.5.0/24", MacAddress::fromIpv4(
                                                                           *Ipv4Address::parse("192.168.77.5"))
                                                                           .toString()}}}));

  // A crash: the nodes were on disk when AddNode answered.
  node_->kill9();
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  EXPECT_EQ(nodes(), before);

  // A clean stop and start, after a DeleteNode: the deleted node stays gone.
  ASSERT_TRUE(deleteNode("api-2").ok());
  std::map<std::string, NodeFacts> expected = before;
  expected.erase("api-2");
  ASSERT_TRUE(node_->restart(&error)) << error;
  EXPECT_EQ(nodes(), expected);
  EXPECT_NE(node_->log().find("checkpoint: 1 remote node(s) restored, 0 dropped"), std::string::npos) << node_->log();
}

}  // namespace
}  // namespace sluice::test
