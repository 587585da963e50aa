// The megaflow listing through the real gRPC stack: the real DataplaneService
// over a real DataplaneControl, served on a unix socket in this process, with
// more megaflows than one gRPC message may carry under the default 4 MiB
// receive limit. The megaflows are real: keys go through the PMD's upcall
// queue to control's flow thread, which translates and installs them (the
// PMD itself does not run, so no EAL is needed). Proves that StreamFlows and
// `sluicectl flows` deliver every megaflow of such a table, in order, while
// the one-message ListFlows cannot.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <grpcpp/grpcpp.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "dataplane/api/grpc_flows.h"
#include "dataplane/api/grpc_service.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/datapath/flow/flow_key.h"
#include "tests/support/fake_control.h"
#include "tests/support/frames.h"

namespace sluice {
namespace {

// gRPC's default maximum received message size (GRPC_DEFAULT_MAX_RECV_MESSAGE_LENGTH).
constexpr size_t kDefaultReceiveLimit = 4 * 1024 * 1024;
// Each megaflow below lists as about 120 bytes: 50k of them are ~6 MB.
constexpr uint32_t kMegaflows = 50'000;
// The table has room beyond them: a table within 1/32 of full evicts its
// least recently used megaflows for new ones.
constexpr uint32_t kTableSize = kMegaflows + kMegaflows / 8;
const Ipv4Address kUnrouted = *Ipv4Address::parse("192.0.2.1");
constexpr uint32_t kFirstEthType = 0x1000;  // kFirstEthType + kMegaflows stays below 0xffff

// A key as the PMD extracts it from a UDP packet to `dst`.
flow::FlowKey keyTo(Ipv4Address dst) {
  const Ipv4Address src = *Ipv4Address::parse("10.64.0.10");
  test::UdpFrameSpec s{MacAddress::fromIpv4(src), MacAddress::fromIpv4(dst), src, dst};
  test::Frame f = test::udpFrame(s);
  flow::FlowKey k;
  EXPECT_EQ(flow::extractFlowKey(f.data(), static_cast<uint32_t>(f.size()), 0, std::nullopt, k),
            flow::ParseResult::kOk);
  return k;
}

std::string runCommand(const std::string& cmd, int* exit_code) {
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (p == nullptr) return out;
  char buf[65536];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  const int status = ::pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++count;
  return count;
}

class FlowListingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/flow-listing-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.pod_cidr = *Ipv4Cidr::parse("10.64.0.0/10");
    config_.gateway = *Ipv4Address::parse("10.64.0.1");
    config_.flow_limit = kTableSize;
    config_.flow_idle_timeout_ms = 3'600'000;  // nothing expires while the test runs
    pmd_context_.megaflows = std::make_unique<flow::MegaflowTable>(kTableSize);
    pmd_context_.lcore = 1;
    backend_.refuse_all = true;  // no ports in this test
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_context_},
                                                  1'000'000'000);
    control_->start();
    service_ = std::make_unique<DataplaneService>(*control_, "test");
    socket_ = dir_ + "/api.sock";
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix:" + socket_, grpc::InsecureServerCredentials());
    builder.RegisterService(service_.get());
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    stub_ = v1::Dataplane::NewStub(grpc::CreateChannel("unix:" + socket_, grpc::InsecureChannelCredentials()));
  }
  void TearDown() override {
    if (server_) server_->Shutdown();
    control_->stopFlowThread();
    std::filesystem::remove_all(dir_);
  }

  // Upcalls `count` keys that each make a megaflow of their own and waits
  // until the flow thread has installed them. One unrouted destination, each
  // key with its own EtherType: keys a PMD never sends (it upcalls IPv4 only),
  // but real traffic cannot fill a table this large on a node without pods
  // (unrouted destinations share prefix megaflows), and the subject here is
  // the listing, not the translation.
  void installMegaflows(uint32_t count) {
    for (uint32_t i = 0; i < count; ++i) {
      flow::FlowKey k = keyTo(kUnrouted);
      k.eth_type = htons(static_cast<uint16_t>(kFirstEthType + i));
      k.hash = flow::hashKey(k);
      // The queue holds 1024 keys; the flow thread drains it every millisecond.
      while (!upcalls_.push(k)) std::this_thread::yield();
    }
    while (control_->stats().pmds[0].megaflows < count) std::this_thread::yield();
  }

  std::string dir_, socket_;
  SluicedConfig config_;
  test::FakePortBackend backend_;
  // Its mailbox is never `running`: control does not wait for acknowledgements.
  PmdContext pmd_context_;
  UpcallQueue& upcalls_ = pmd_context_.upcalls;
  std::unique_ptr<DataplaneControl> control_;
  std::unique_ptr<DataplaneService> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<v1::Dataplane::Stub> stub_;
};

TEST_F(FlowListingTest, StreamFlowsDeliversATableLargerThanOneMessage) {
  installMegaflows(kMegaflows);
  const std::vector<FlowView> expected = control_->listFlows();
  ASSERT_EQ(expected.size(), kMegaflows);

  // The table does not fit one message: the unary call is refused by the
  // client's receive limit (which is why StreamFlows exists).
  {
    grpc::ClientContext ctx;
    v1::ListFlowsResponse one;
    grpc::Status s = stub_->ListFlows(&ctx, {}, &one);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  }

  grpc::ClientContext ctx;
  auto reader = stub_->StreamFlows(&ctx, {});
  v1::ListFlowsResponse chunk, all;
  size_t chunks = 0;
  while (reader->Read(&chunk)) {
    ++chunks;
    EXPECT_LE(chunk.ByteSizeLong(), kFlowChunkBytes + 1024);
    all.mutable_flows()->MergeFrom(chunk.flows());
  }
  grpc::Status s = reader->Finish();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_GT(all.ByteSizeLong(), kDefaultReceiveLimit);  // the test is about a table this large
  EXPECT_GT(chunks, 1u);
  ASSERT_EQ(static_cast<size_t>(all.flows_size()), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    const v1::Flow& f = all.flows(static_cast<int>(i));
    ASSERT_EQ(f.index(), expected[i].index) << i;
    ASSERT_EQ(f.match(), expected[i].match) << i;
    ASSERT_EQ(f.mask(), expected[i].mask) << i;
    ASSERT_EQ(f.actions(), expected[i].actions) << i;
  }
}

TEST_F(FlowListingTest, SluicectlFlowsListsATableLargerThanOneMessage) {
  installMegaflows(kMegaflows);
  int rc = -1;
  const std::string json =
      runCommand(std::string(SLUICECTL_PATH) + " --socket " + socket_ + " --timeout 60000 --json flows", &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_GT(json.size(), kDefaultReceiveLimit);
  EXPECT_EQ(occurrences(json, "\"match\":"), kMegaflows);
  const std::string text =
      runCommand(std::string(SLUICECTL_PATH) + " --socket " + socket_ + " --timeout 60000 flows", &rc);
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(occurrences(text, " -> drop:no_route\n"), kMegaflows);
  // The last megaflow installed is there too.
  char last[32];
  std::snprintf(last, sizeof(last), "eth_type=0x%04x,", kFirstEthType + kMegaflows - 1);
  EXPECT_NE(text.find(last), std::string::npos) << last;
}

TEST_F(FlowListingTest, AnEmptyTableIsOneEmptyChunk) {
  grpc::ClientContext ctx;
  auto reader = stub_->StreamFlows(&ctx, {});
  v1::ListFlowsResponse chunk;
  size_t chunks = 0;
  while (reader->Read(&chunk)) {
    ++chunks;
    EXPECT_EQ(chunk.flows_size(), 0);
  }
  EXPECT_TRUE(reader->Finish().ok());
  EXPECT_EQ(chunks, 1u);
}

}  // namespace
}  // namespace sluice
