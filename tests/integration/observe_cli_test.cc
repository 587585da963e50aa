// sluicectl trace, capture and pmd against a real sluiced: the streams travel the
// whole way an operator's do (sluicectl, gRPC, the control thread's taps, the
// PMD's rings), with two virtio pods sending through the real PMD loop. The
// pcap is read back by libpcap (exact bytes) and by tcpdump, from a file and
// from sluicectl's stdout through a pipe.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>
#include <set>
#include <string>
#include <vector>

#include "sluice/v1/observe.grpc.pb.h"
#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.20");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.21");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");
constexpr char kTcpdump[] = "/usr/bin/tcpdump";

Frame frameAtoB(uint32_t sequence, uint8_t ttl = 64) {
  UdpFrameSpec s{MacAddress::fromIpv4(kIpA), MacAddress::fromIpv4(kGateway), kIpA, kIpB};
  s.sequence = sequence;
  s.ttl = ttl;
  s.src_port = 4000;
  s.dst_port = 5000;
  return udpFrame(s);
}

std::vector<Frame> readPcap(const std::string& path, std::string* error) {
  char err[PCAP_ERRBUF_SIZE];
  std::vector<Frame> frames;
  pcap_t* reader = pcap_open_offline(path.c_str(), err);
  if (reader == nullptr) {
    *error = err;
    return frames;
  }
  if (pcap_datalink(reader) != DLT_EN10MB) *error = "link type is not Ethernet";
  pcap_pkthdr* h = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(reader, &h, &data) == 1) {
    if (h->caplen != h->len) *error = "a packet was cut short";
    frames.emplace_back(data, data + h->caplen);
  }
  pcap_close(reader);
  return frames;
}

class ObserveCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    node_ = SluicedProcess::start(SluicedOptions{}, &error);
    ASSERT_NE(node_, nullptr) << error;
    v1::AddPortResponse a, b;
    ASSERT_TRUE(node_->addPort(portRequest("pod-a", kIpA.toString()), &a).ok());
    ASSERT_TRUE(node_->addPort(portRequest("pod-b", kIpB.toString()), &b).ok());
    auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
    auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
    ASSERT_TRUE(pa.ok() && pb.ok());
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    port_a_ = a.port().port_no();
    port_b_ = b.port().port_no();
    ASSERT_TRUE(node_->waitLinkUp(port_a_) && node_->waitLinkUp(port_b_)) << node_->log();
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  // Runs `command` (a shell command line) while pod A sends numbered frames,
  // a few at a time, until the command ends: a trace or capture is armed
  // some time after it starts, and nothing tells the sender when. Returns the
  // command's result (its stdout and stderr, a pipeline's whole); `sent`
  // gets every frame sent.
  CommandResult whileSending(const std::string& command, std::vector<Frame>* sent, uint8_t ttl = 64) {
    auto done = std::async(std::launch::async, [command] { return runShell(command); });
    uint32_t sequence = static_cast<uint32_t>(next_sequence_);
    while (done.wait_for(std::chrono::milliseconds(20)) != std::future_status::ready) {
      std::vector<Frame> burst;
      for (int i = 0; i < 4; ++i) burst.push_back(frameAtoB(sequence++, ttl));
      pod_a_->send(burst);
      sent->insert(sent->end(), burst.begin(), burst.end());
      // Pod B's queue is drained so that it never fills.
      if (ttl > 1) pod_b_->receive(burst.size());
    }
    next_sequence_ = sequence;
    return done.get();
  }

  std::string ctl() const { return std::string(SLUICECTL_PATH) + " --socket " + node_->apiSocket(); }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint32_t port_a_ = 0, port_b_ = 0;
  uint64_t next_sequence_ = 0;
};

TEST_F(ObserveCliTest, CaptureToAFileHoldsTheExactBytesSentAndTcpdumpReadsIt) {
  const std::string pcap_path = node_->dir() + "/a.pcap";
  std::vector<Frame> sent;
  CommandResult r = whileSending(ctl() + " capture " + std::to_string(port_a_) + " --direction rx --count 20 -w " +
                                     pcap_path,
                                 &sent);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("20 packets captured, 0 dropped"), std::string::npos) << r.output;

  std::string error;
  std::vector<Frame> captured = readPcap(pcap_path, &error);
  ASSERT_TRUE(error.empty()) << error;
  ASSERT_EQ(captured.size(), 20u);
  // Each one is a frame pod A sent, byte for byte, in the order sent.
  const std::set<Frame> sent_set(sent.begin(), sent.end());
  for (size_t i = 0; i < captured.size(); ++i) {
    EXPECT_TRUE(sent_set.count(captured[i])) << "captured frame " << i << " was never sent";
    if (i > 0) {
      EXPECT_EQ(udpSequence(captured[i]), udpSequence(captured[i - 1]) + 1);
    }
  }

  CommandResult td = {0, ""};
  {
    FILE* p = ::popen((std::string(kTcpdump) + " -nn -r " + pcap_path + " 2>/dev/null").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char buf[4096];
    while (size_t n = std::fread(buf, 1, sizeof buf, p)) td.output.append(buf, n);
    td.exit_code = ::pclose(p);
  }
  EXPECT_EQ(td.exit_code, 0);
  size_t lines = 0;
  for (size_t at = 0; (at = td.output.find(" > 10.250.0.21.5000: UDP", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 20u) << td.output;
  EXPECT_NE(td.output.find("IP 10.250.0.20.4000 > 10.250.0.21.5000: UDP, length 18"), std::string::npos)
      << td.output;
}

// Without --count a capture stops by itself after sluicectl's default, and
// sluiced's log says who captured which port and how much.
TEST_F(ObserveCliTest, CaptureWithoutACountStopsAtTheDefaultAndIsLogged) {
  const std::string pcap_path = node_->dir() + "/default.pcap";
  std::vector<Frame> sent;
  // timeout: a capture that never stopped would otherwise hang the test.
  CommandResult r = whileSending("timeout 120 " + ctl() + " capture " + std::to_string(port_a_) + " -w " + pcap_path,
                                 &sent);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("100 packets captured, 0 dropped"), std::string::npos) << r.output;
  std::string error;
  EXPECT_EQ(readPcap(pcap_path, &error).size(), 100u) << error;
  // A new file, readable by its owner (root) only.
  EXPECT_EQ(static_cast<unsigned>(std::filesystem::status(pcap_path).permissions()), 0600u);
  const std::string log = node_->log();
  // The caller as the kernel knows it: sluicectl's process, run as root.
  const std::string started = "capture of port " + std::to_string(port_a_) +
                              " (rx, up to 100 packets, snaplen 2048) started by pid ";
  const size_t at = log.find(started);
  ASSERT_NE(at, std::string::npos) << log;
  const std::string line = log.substr(at, log.find('\n', at) - at);
  EXPECT_NE(line.find(" uid 0 gid 0 (fd:"), std::string::npos) << line;
  const std::string caller = line.substr(line.find("started by ") + 11);
  EXPECT_NE(log.find("capture of port " + std::to_string(port_a_) + " by " + caller +
                     " ended: 100 packets sent, 0 dropped"),
            std::string::npos)
      << log;
}

// -w never overwrites: not an existing file, not through a symlink (run as
// root, that would let whoever made the path pick what gets clobbered).
TEST_F(ObserveCliTest, CaptureRefusesAnExistingFileOrSymlink) {
  const std::string existing = node_->dir() + "/existing.pcap";
  const std::string target = node_->dir() + "/precious";
  const std::string link = node_->dir() + "/link.pcap";
  { std::ofstream(existing) << "keep"; }
  { std::ofstream(target) << "keep"; }
  std::filesystem::create_symlink(target, link);
  for (const std::string& path : {existing, link}) {
    CommandResult r = runShell("timeout 60 " + ctl() + " capture " + std::to_string(port_a_) + " --count 1 -w " + path);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_NE(r.output.find("sluicectl: " + path + " already exists (a file or a symlink): capture writes only a new file"),
              std::string::npos)
        << r.output;
  }
  std::ifstream e(existing), t(target);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(e), {}), "keep");
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(t), {}), "keep");
  EXPECT_TRUE(std::filesystem::is_symlink(link));
}

// A capture asked for with count 0 ends by itself at the server's cap (the
// packets it sent and those its ring had no room for make the cap), and a
// count above the cap is refused.
TEST_F(ObserveCliTest, CaptureOfCountZeroEndsAtTheServersCap) {
  auto channel = grpc::CreateChannel("unix:" + node_->apiSocket(), grpc::InsecureChannelCredentials());
  auto observe = v1::Observe::NewStub(channel);
  v1::CaptureRequest too_many;
  too_many.set_port_no(port_a_);
  too_many.set_count(100'001);
  {
    grpc::ClientContext ctx;
    auto reader = observe->Capture(&ctx, too_many);
    v1::CapturedPacket p;
    EXPECT_FALSE(reader->Read(&p));
    const grpc::Status s = reader->Finish();
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(s.error_message(), "count 100001: a capture takes at most 100000 packets (0: that many)");
  }
  v1::CaptureRequest unbounded;
  unbounded.set_port_no(port_a_);
  unbounded.set_count(0);
  unbounded.set_snaplen(64);
  grpc::ClientContext ctx;
  // A deadline only so that a capture that never ends fails the test.
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  auto reader = observe->Capture(&ctx, unbounded);
  std::atomic<bool> ended{false};
  // Frames to a destination with no route: received (and captured) on A's
  // port, then dropped, so nothing needs draining.
  std::thread sender([&] {
    const Ipv4Address nowhere = *Ipv4Address::parse("10.251.0.1");
    uint32_t sequence = 0;
    while (!ended.load()) {
      std::vector<Frame> burst;
      for (int i = 0; i < 32; ++i) {
        UdpFrameSpec f{MacAddress::fromIpv4(kIpA), MacAddress::fromIpv4(kGateway), kIpA, nowhere};
        f.sequence = sequence++;
        burst.push_back(udpFrame(f));
      }
      pod_a_->send(burst);
    }
  });
  v1::CapturedPacket p;
  uint64_t packets = 0, dropped = 0;
  while (reader->Read(&p)) {
    ++packets;
    dropped = p.dropped();
  }
  const grpc::Status s = reader->Finish();
  ended = true;
  sender.join();
  EXPECT_TRUE(s.ok()) << s.error_code() << " " << s.error_message();
  EXPECT_LE(packets, 100'000u);
  EXPECT_GE(packets + dropped, 100'000u) << packets << " sent, " << dropped << " dropped";
}

TEST_F(ObserveCliTest, CaptureToStdoutPipesIntoTcpdump) {
  std::vector<Frame> sent;
  // tx on pod B's port: what sluiced forwarded to B (source MAC rewritten).
  CommandResult r = whileSending(ctl() + " capture " + std::to_string(port_b_) + " --direction tx --count 8 -w - | " +
                                     kTcpdump + " -nn -e -r - 2>/dev/null",
                                 &sent);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  size_t lines = 0;
  for (size_t at = 0; (at = r.output.find("10.250.0.20.4000 > 10.250.0.21.5000: UDP", at)) != std::string::npos;
       ++at)
    ++lines;
  EXPECT_EQ(lines, 8u) << r.output;
  // Routed: to B's MAC, from the gateway's, one hop later.
  EXPECT_NE(r.output.find(MacAddress::fromIpv4(kIpB).toString()), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("8 packets captured, 0 dropped"), std::string::npos) << r.output;
}

TEST_F(ObserveCliTest, TraceShowsTheOutputAndTheWouldHappenFormAgrees) {
  std::vector<Frame> sent;
  CommandResult r = whileSending(ctl() + " trace " + std::to_string(port_a_) + " --count 3 --dst 10.250.0.21", &sent);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string to_b = "result:   output to port " + std::to_string(port_b_);
  size_t outputs = 0;
  for (size_t at = 0; (at = r.output.find(to_b, at)) != std::string::npos; ++at) ++outputs;
  EXPECT_EQ(outputs, 3u) << r.output;
  EXPECT_NE(r.output.find("#3 pmd"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("  tier:     "), std::string::npos) << r.output;

  CommandResult would = sluicectl(node_->apiSocket(), "trace --packet 'in_port=" + std::to_string(port_a_) +
                                                          ",src=10.250.0.20,dst=10.250.0.21,proto=udp,sport=4000,"
                                                          "dport=5000,ttl=64'");
  ASSERT_EQ(would.exit_code, 0) << would.output;
  EXPECT_NE(would.output.find(to_b), std::string::npos) << would.output;
}

TEST_F(ObserveCliTest, TraceOfATtlOnePacketShowsTheDropReason) {
  std::vector<Frame> sent;
  CommandResult r = whileSending(ctl() + " trace " + std::to_string(port_a_) + " --count 1", &sent, 1);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("result:   dropped (ttl_exceeded)"), std::string::npos) << r.output;

  CommandResult would = sluicectl(node_->apiSocket(), "trace --packet 'in_port=" + std::to_string(port_a_) +
                                                          ",src=10.250.0.20,dst=10.250.0.21,proto=udp,ttl=1'");
  ASSERT_EQ(would.exit_code, 0) << would.output;
  EXPECT_NE(would.output.find("dropped (ttl_exceeded)"), std::string::npos) << would.output;
}

// `sluicectl pmd`: the one PMD, its packets and busy share, and the pod
// ports it polls, each with its share of the PMD's packets and who placed
// it; `port add --pmd` pins a port, and a PMD this sluiced lacks is refused.
TEST_F(ObserveCliTest, PmdShowsEachPodPortsShareAndItsPin) {
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 10; ++i) frames.push_back(frameAtoB(i, 64));
  ASSERT_EQ(pod_a_->send(frames), frames.size());
  ASSERT_EQ(pod_b_->receive(frames.size()).size(), frames.size());
  const std::string ip = "10.250.0.22";
  CommandResult refused = sluicectl(node_->apiSocket(), "port add --container-id pinned --ifname net1 --ip " + ip +
                                                            " --pmd 1");
  EXPECT_EQ(refused.exit_code, 1) << refused.output;
  EXPECT_NE(refused.output.find("pmd: there is no PMD 1 (this sluiced runs 1, 0..0)"), std::string::npos)
      << refused.output;
  CommandResult pinned =
      sluicectl(node_->apiSocket(), "port add --container-id pinned --ifname net1 --ip " + ip + " --pmd 0");
  ASSERT_EQ(pinned.exit_code, 0) << pinned.output;
  CommandResult shown = sluicectl(node_->apiSocket(), "pmd");
  ASSERT_EQ(shown.exit_code, 0) << shown.output;
  EXPECT_NE(shown.output.find(" 10 packets received, "), std::string::npos) << shown.output;
  const std::string a = "  " + std::to_string(port_a_) + " ";
  auto line = [&](const std::string& start) {
    const size_t at = shown.output.find(start);
    return at == std::string::npos ? std::string() : shown.output.substr(at, shown.output.find('\n', at) - at);
  };
  EXPECT_NE(line(a).find(" 10  100.0%  sluiced"), std::string::npos) << shown.output;
  EXPECT_NE(line("  " + std::to_string(port_b_) + " ").find(" 0    0.0%  sluiced"), std::string::npos) << shown.output;
  EXPECT_NE(shown.output.find("pinned/net1"), std::string::npos) << shown.output;
  EXPECT_NE(line("  2 ").find("pin (AddPort pmd)"), std::string::npos) << shown.output;
}

}  // namespace
}  // namespace sluice::test
