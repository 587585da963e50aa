// sluiced on a state directory it cannot write: full (ENOSPC, a 64 KiB tmpfs
// filled up) or read-only (the tmpfs remounted ro). Real sluiced, real vdevs.
// AddPort fails naming the state directory and the errno and leaves nothing
// behind (no port, socket, socket subdirectory or temp file), the other pods
// keep forwarding; DeletePort removes the port and reports the error, the
// file keeps the port until a later write succeeds (a restart meanwhile
// brings it back whole, the runtime's retried DEL removes it); sluiced
// starts on such a directory, restores its ports and says why it cannot
// write.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/state_files.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.11");
const Ipv4Address kIpC = *Ipv4Address::parse("10.250.0.12");
const MacAddress kGatewayMac = MacAddress::fromIpv4(*Ipv4Address::parse("10.250.0.1"));

int shell(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

enum class Fault { kFull, kReadOnly };

struct FaultCase {
  const char* name;
  Fault fault;
  int error;  // what every write into the state directory then fails with
};

class StateDirFaultTest : public ::testing::TestWithParam<FaultCase> {
 protected:
  void SetUp() override {
    std::string error;
    node_ = SluicedProcess::start({}, &error);
    ASSERT_NE(node_, nullptr) << error;
    // The state directory becomes a tmpfs small enough to fill (64 KiB:
    // sixteen pages, a checkpoint takes one).
    node_->stop();
    ASSERT_EQ(shell("mount -t tmpfs -o size=64k,mode=0700 sluice-state " + node_->stateDir()), 0);
    mounted_ = true;
    ASSERT_TRUE(node_->restart(&error)) << error;
  }
  void TearDown() override {
    pod_a_.reset();
    pod_b_.reset();
    if (!node_) return;
    repair();
    EXPECT_EQ(node_->stop(), 0) << node_->log();
    if (mounted_) {
      EXPECT_EQ(shell("umount " + node_->stateDir()), 0);
    }
  }

  void breakStateDir() {
    if (GetParam().fault == Fault::kReadOnly) {
      ASSERT_EQ(shell("mount -o remount,ro " + node_->stateDir()), 0);
      return;
    }
    int fd = ::open((node_->stateDir() + "/filler").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const std::string page(4096, 'x');
    while (::write(fd, page.data(), page.size()) > 0) {
    }
    EXPECT_EQ(errno, ENOSPC);
    ::close(fd);
  }
  void repair() {
    if (GetParam().fault == Fault::kReadOnly)
      shell("mount -o remount,rw " + node_->stateDir());
    else
      ::unlink((node_->stateDir() + "/filler").c_str());
  }
  // A refusal for the broken state directory: one code, the directory and
  // the errno's text in the message.
  void expectStateDirError(const grpc::Status& s) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
    EXPECT_NE(s.error_message().find("state directory " + node_->stateDir()), std::string::npos)
        << s.error_message();
    EXPECT_NE(s.error_message().find(std::strerror(GetParam().error)), std::string::npos) << s.error_message();
  }
  uint32_t add(const v1::AddPortRequest& req) {
    v1::AddPortResponse resp;
    grpc::Status s = node_->addPort(req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.port().port_no();
  }
  // A and B attached as server-mode ports with pods connected.
  void attachAAndB() {
    uint32_t a = add(portRequest("pod-a", kIpA.toString()));
    uint32_t b = add(portRequest("pod-b", kIpB.toString()));
    ASSERT_FALSE(HasFailure());
    const v1::ListPortsResponse list = node_->ports();
    auto pa = VirtioPod::create(list.ports(0).socket_path(), /*server=*/false, podPool());
    auto pb = VirtioPod::create(list.ports(1).socket_path(), /*server=*/false, podPool());
    ASSERT_TRUE(pa.ok() && pb.ok()) << pa.status() << pb.status();
    pod_a_ = std::move(*pa);
    pod_b_ = std::move(*pb);
    ASSERT_TRUE(node_->waitLinkUp(a) && node_->waitLinkUp(b)) << node_->log();
  }
  // Sends `n` frames A→B and returns how many arrived.
  size_t aToB(size_t n, uint32_t first_seq) {
    std::vector<Frame> frames;
    for (size_t i = 0; i < n; ++i) {
      UdpFrameSpec s{MacAddress::fromIpv4(kIpA), kGatewayMac, kIpA, kIpB};
      s.sequence = first_seq + static_cast<uint32_t>(i);
      frames.push_back(udpFrame(s));
    }
    EXPECT_EQ(pod_a_->send(frames), n);
    return pod_b_->receive(n).size();
  }
  v1::AddPortRequest podC() {
    v1::AddPortRequest c = portRequest("pod-c", kIpC.toString());
    c.set_socket_subdir("pod-c-dir");
    return c;
  }
  std::string checkpoint() { return fileText(node_->stateDir() + "/checkpoint.json"); }

  std::unique_ptr<SluicedProcess> node_;
  bool mounted_ = false;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
};

TEST_P(StateDirFaultTest, AddPortFailsLeavingNothingDeletePortReportsAndTheRetryCatchesUp) {
  attachAAndB();
  ASSERT_EQ(aToB(100, 0), 100u);
  breakStateDir();
  const std::string checkpoint_before = checkpoint();
  const std::set<std::string> sockets_before = filesUnder(node_->socketDir());
  const std::set<std::string> state_before = filesUnder(node_->stateDir());

  v1::AddPortResponse resp;
  expectStateDirError(node_->addPort(podC(), &resp));
  EXPECT_EQ(node_->ports().ports_size(), 2);
  EXPECT_EQ(filesUnder(node_->socketDir()), sockets_before) << "no socket, no subdirectory";
  EXPECT_EQ(filesUnder(node_->stateDir()), state_before) << "no temp file";
  EXPECT_EQ(checkpoint(), checkpoint_before);
  EXPECT_EQ(aToB(100, 100), 100u) << "the other pods keep forwarding";

  // DeletePort: the port goes, the error is reported; the file still has it.
  const std::string b_socket = node_->ports().ports(1).socket_path();
  pod_b_.reset();
  expectStateDirError(node_->deletePort("pod-b", "net1"));
  EXPECT_EQ(node_->ports().ports_size(), 1);
  EXPECT_FALSE(fs::exists(b_socket));
  EXPECT_EQ(checkpoint(), checkpoint_before);
  // Another refused AddPort must not make sluiced forget that the file still
  // holds B.
  expectStateDirError(node_->addPort(podC(), &resp));

  // Space again: the runtime's retried DEL finds no port and writes the
  // checkpoint it owes.
  repair();
  v1::DeletePortResponse del;
  grpc::Status s = node_->deletePort("pod-b", "net1", &del);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(del.deleted());
  EXPECT_FALSE(checkpointNames(node_->stateDir(), "pod-b"));
  EXPECT_TRUE(checkpointNames(node_->stateDir(), "pod-a"));
  // A crash now brings back exactly A; C's retried ADD succeeds.
  pod_a_.reset();
  node_->kill9();
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  const v1::ListPortsResponse list = node_->ports();
  ASSERT_EQ(list.ports_size(), 1);
  EXPECT_EQ(list.ports(0).attachment().container_id(), "pod-a");
  ASSERT_TRUE(node_->addPort(podC(), &resp).ok());
  EXPECT_TRUE(fs::exists(resp.port().socket_path()));
  EXPECT_TRUE(checkpointNames(node_->stateDir(), "pod-c"));
}

TEST_P(StateDirFaultTest, SluicedStartsOnItRestoresItsPortsAndSaysWhy) {
  add(portRequest("pod-a", kIpA.toString()));
  add(portRequest("pod-b", kIpB.toString()));
  ASSERT_FALSE(HasFailure());
  const std::set<std::string> sockets_before = filesUnder(node_->socketDir());
  breakStateDir();
  // A DEL whose checkpoint write failed, then a crash: the file still holds
  // B, so B comes back whole (and the runtime's retried DEL removes it).
  expectStateDirError(node_->deletePort("pod-b", "net1"));
  node_->kill9();
  const std::string checkpoint_before = checkpoint();
  const std::set<std::string> state_before = filesUnder(node_->stateDir());
  std::string error;
  ASSERT_TRUE(node_->restart(&error)) << error;
  EXPECT_EQ(node_->ports().ports_size(), 2);
  EXPECT_EQ(filesUnder(node_->socketDir()), sockets_before) << "both sockets back";
  const std::string log = node_->log();
  EXPECT_NE(log.find("state directory " + node_->stateDir() + " cannot be written"), std::string::npos) << log;
  EXPECT_NE(log.find(std::strerror(GetParam().error)), std::string::npos) << log;
  EXPECT_EQ(checkpoint(), checkpoint_before);
  EXPECT_EQ(filesUnder(node_->stateDir()), state_before) << "no temp file";

  v1::AddPortResponse resp;
  expectStateDirError(node_->addPort(podC(), &resp));
  EXPECT_EQ(filesUnder(node_->socketDir()), sockets_before);

  repair();
  grpc::Status s = node_->deletePort("pod-b", "net1");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_FALSE(checkpointNames(node_->stateDir(), "pod-b"));
  ASSERT_TRUE(node_->addPort(podC(), &resp).ok());
  EXPECT_TRUE(checkpointNames(node_->stateDir(), "pod-c"));
}

INSTANTIATE_TEST_SUITE_P(Faults, StateDirFaultTest,
                         ::testing::Values(FaultCase{"Full", Fault::kFull, ENOSPC},
                                           FaultCase{"ReadOnly", Fault::kReadOnly, EROFS}),
                         [](const ::testing::TestParamInfo<FaultCase>& test) { return std::string(test.param.name); });

}  // namespace
}  // namespace sluice::test
