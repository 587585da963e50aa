// sluiced killed at every step of AddPort (SLUICE_CRASH_AT, the points of
// crash_points.def) and started again: the port is either whole (listed,
// its socket there, in the checkpoint) or absent (no socket, no socket
// subdirectory, no checkpoint record), no temp file is left in the state
// directory, the pod attached before comes back, and the CNI plugin's retry
// (AddPort again with the same attachment) gives a working port.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <csignal>
#include <filesystem>
#include <string_view>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/state_files.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kCrashPoints[] = {
#define SLUICE_CRASH_POINT(id, name, state) name,
#include "dataplane/core/crash_points.def"
#undef SLUICE_CRASH_POINT
};

const v1::Port* findPort(const v1::ListPortsResponse& list, const std::string& container_id) {
  for (const v1::Port& p : list.ports())
    if (p.attachment().container_id() == container_id) return &p;
  return nullptr;
}

TEST(AddPortCrashTest, AfterACrashAtEveryStepThePortIsWholeOrAbsentAndTheRetrySucceeds) {
  for (std::string_view point : kCrashPoints) {
    SCOPED_TRACE(point);
    std::string error;
    std::unique_ptr<SluicedProcess> node = SluicedProcess::start({}, &error);
    ASSERT_NE(node, nullptr) << error;
    v1::AddPortResponse a;
    ASSERT_TRUE(node->addPort(portRequest("pod-a", "10.250.0.10"), &a).ok());
    const std::set<std::string> sockets_before = filesUnder(node->socketDir());
    node->setEnvironment("SLUICE_CRASH_AT", std::string(point));
    ASSERT_TRUE(node->restart(&error)) << error;

    // B has its own socket subdirectory: the most AddPort makes on disk.
    v1::AddPortRequest b = portRequest("pod-b", "10.250.0.11");
    b.set_socket_subdir("pod-b-dir");
    v1::AddPortResponse resp;
    EXPECT_FALSE(node->addPort(b, &resp).ok()) << "sluiced answered instead of dying";
    std::optional<int> status = node->waitExited();
    ASSERT_TRUE(status && WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL) << node->log();
    EXPECT_NE(node->log().find("crash point " + std::string(point) + " reached"), std::string::npos);

    node->setEnvironment("SLUICE_CRASH_AT", "");
    ASSERT_TRUE(node->restart(&error)) << error;
    const v1::ListPortsResponse list = node->ports();
    ASSERT_NE(findPort(list, "pod-a"), nullptr) << node->log();
    EXPECT_EQ(findPort(list, "pod-a")->socket_path(), a.port().socket_path());
    EXPECT_TRUE(fs::exists(a.port().socket_path()));
    const v1::Port* restored = findPort(list, "pod-b");
    if (restored != nullptr) {
      EXPECT_TRUE(fs::exists(restored->socket_path())) << "restored without its socket";
      EXPECT_TRUE(checkpointNames(node->stateDir(), "pod-b")) << "restored but not in the checkpoint";
    } else {
      EXPECT_EQ(filesUnder(node->socketDir()), sockets_before) << "a socket or subdirectory of an absent port";
      EXPECT_FALSE(checkpointNames(node->stateDir(), "pod-b")) << "in the checkpoint but not restored";
    }
    EXPECT_EQ(filesUnder(node->stateDir()), std::set<std::string>{"checkpoint.json"});

    // The CNI plugin retries ADD: the port is there, on disk, and takes a pod.
    grpc::Status retried = node->addPort(b, &resp);
    ASSERT_TRUE(retried.ok()) << retried.error_message() << node->log();
    EXPECT_EQ(resp.created(), restored == nullptr);
    EXPECT_TRUE(checkpointNames(node->stateDir(), "pod-b"));
    auto pod = VirtioPod::create(resp.port().socket_path(), /*server=*/false, podPool());
    ASSERT_TRUE(pod.ok()) << pod.status();
    EXPECT_TRUE(node->waitLinkUp(resp.port().port_no())) << node->log();
    pod->reset();
    EXPECT_EQ(node->stop(), 0) << node->log();
  }
}

}  // namespace
}  // namespace sluice::test
