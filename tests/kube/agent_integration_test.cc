// The node controller end to end: a real sluiced (uplink on a net_null
// device: no traffic here, only the node table), the real sluice-agent, and
// the fake Kubernetes API server speaking the real list/watch/patch protocol
// over HTTPS. Every step waits on a condition with a deadline.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/integration/sluiced_process.h"
#include "tests/kube/agent_process.h"
#include "tests/kube/fake_apiserver.h"

namespace sluice::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr char kToken[] = "test-token-7f3a";
constexpr uint32_t kVni = 7;

// The annotation a Sluice node publishes (what sluice-agent writes).
std::string vtepAnnotation(const std::string& vtep, const std::string& mac, uint32_t vni = kVni) {
  return json{{"version", 1}, {"vtep", vtep}, {"mac", mac}, {"vni", vni}}.dump();
}

class AgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = "/tmp/sluice-agent-it-" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::string error;
    api_ = FakeApiServer::start(dir_ + "/api", kToken, &error);
    ASSERT_NE(api_, nullptr) << error;
    // No remote node from the agent's world in the config: one static node
    // only, which the agent must never touch.
    config_ = dir_ + "/sluiced.json";
    std::ofstream(config_) << R"({"vni": 7, "uplink": {"devargs": "net_null_agent0,no-rx=1", "vtep": "192.168.77.1/24",)"
                           << R"( "next-hop": "192.168.77.254"},)"
                           << R"( "remote-nodes": [{"name": "static-1", "vtep": "192.168.77.5",)"
                           << R"( "pod-cidrs": ["10.250.5.0/24"]}]})";
    SluicedOptions o;
    o.pod_cidr = "10.250.0.0/24";
    o.extra_flags = {"--config", config_};
    sluiced_ = SluicedProcess::start(o, &error);
    ASSERT_NE(sluiced_, nullptr) << error;
    v1::ListNodesResponse r = list();
    vtep_mac_ = r.overlay().vtep_mac();
    ASSERT_FALSE(vtep_mac_.empty());

    // This node, as the kubelet would have made it: no annotation yet.
    putNode({{"name", "node-a"}, {"pod_cidrs", {"10.250.0.0/24"}}, {"internal_ip", "192.168.77.1"}});
    putNode({{"name", "node-b"},
             {"pod_cidrs", {"10.250.2.0/24"}},
             {"internal_ip", "192.168.77.2"},
             {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.2", "02:00:00:00:00:02")}}}});
    // Not running Sluice: no annotation.
    putNode({{"name", "node-c"}, {"pod_cidrs", {"10.250.3.0/24"}}, {"internal_ip", "192.168.77.3"}});
    // An IPv6-only pod CIDR: no Sluice node (each has an IPv4 one), left out.
    putNode({{"name", "node-d"},
             {"pod_cidrs", {"fd00:4::/64"}},
             {"internal_ip", "192.168.77.4"},
             {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.4", "02:00:00:00:00:04")}}}});
  }
  void TearDown() override {
    if (agent_) {
      EXPECT_EQ(agent_->stop(), 0) << agent_->log();
    }
    if (sluiced_) {
      EXPECT_EQ(sluiced_->stop(), 0) << sluiced_->log();
    }
    if (HasFailure()) {
      if (agent_) std::cerr << "--- agent log\n" << agent_->log();
      if (api_) std::cerr << "--- fake API server log (tail)\n" << api_->log().substr(api_->log().size() > 4000 ? api_->log().size() - 4000 : 0);
    }
    agent_.reset();
    api_.reset();
    fs::remove_all(dir_);
  }

  void startAgent() {
    agent_ = std::make_unique<AgentProcess>(
        dir_ + "/agent.log",
        std::vector<std::string>{SLUICE_AGENT_PATH, "--kubeconfig", api_->kubeconfig(), "--node-name", "node-a",
                                 "--api-socket", sluiced_->apiSocket(), "--resync-interval", "1",
                                 "--watch-timeout", "5", "--backoff-initial-ms", "100", "--backoff-max-ms", "1000",
                                 "--not-ready-grace", "60"});
  }

  void putNode(const json& fields) {
    json cmd = fields;
    cmd["op"] = "put";
    ASSERT_FALSE(api_->control(cmd).is_null()) << cmd.dump();
  }

  v1::ListNodesResponse list() {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListNodesResponse r;
    grpc::Status s = sluiced_->remoteNodes().ListNodes(&ctx, {}, &r);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return r;
  }

  // The table as "name=vtep cidrs source" strings.
  std::map<std::string, std::string> table() {
    std::map<std::string, std::string> out;
    const v1::ListNodesResponse r = list();
    for (const v1::RemoteNode& n : r.nodes()) {
      std::string cidrs;
      for (const std::string& c : n.pod_cidrs()) cidrs += (cidrs.empty() ? "" : ",") + c;
      out[n.name()] = n.vtep() + " " + cidrs + " " + v1::NodeSource_Name(n.source());
    }
    return out;
  }
  uint64_t counter(const std::string& name) {
    const v1::ListNodesResponse r = list();
    auto it = r.controller().counters().find(name);
    return it == r.controller().counters().end() ? 0 : it->second;
  }
  bool tableIs(const std::map<std::string, std::string>& want) {
    return waitFor([&] { return table() == want; }, std::chrono::seconds(30));
  }

  static std::string kube(const std::string& vtep, const std::string& cidrs) {
    return vtep + " " + cidrs + " NODE_SOURCE_KUBERNETES";
  }
  const std::string kStatic = "192.168.77.5 10.250.5.0/24 NODE_SOURCE_STATIC";

  std::string dir_, config_, vtep_mac_;
  std::unique_ptr<FakeApiServer> api_;
  std::unique_ptr<SluicedProcess> sluiced_;
  std::unique_ptr<AgentProcess> agent_;
};

// sluiced's batch call itself, as the agent uses it (no agent here): one
// result per op in order, each refusal with its code and reason, the others
// applied; a request over the limit refused whole.
TEST_F(AgentTest, ApplyNodesAnswersEachOpAndRefusesAnOversizedRequestWhole) {
  auto put = [](v1::ApplyNodesRequest& req, const std::string& name, const std::string& vtep,
                const std::string& cidr) {
    v1::NodeOp* op = req.add_ops();
    op->mutable_put()->set_name(name);
    op->mutable_put()->set_vtep(vtep);
    op->mutable_put()->add_pod_cidrs(cidr);
    op->mutable_put()->set_source(v1::NODE_SOURCE_KUBERNETES);
    op->set_replace(true);
  };
  auto call = [&](const v1::ApplyNodesRequest& req, v1::ApplyNodesResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return sluiced_->remoteNodes().ApplyNodes(&ctx, req, resp);
  };
  v1::ApplyNodesRequest req;
  put(req, "k-1", "192.168.77.11", "10.250.11.0/24");
  put(req, "k-2", "not-an-address", "10.250.12.0/24");
  put(req, "k-3", "192.168.77.5", "10.250.13.0/24");  // static-1's VTEP
  put(req, "static-1", "192.168.77.5", "10.250.5.0/24");  // the same settings: nothing to do
  req.add_ops()->set_remove("static-1-not");
  req.add_ops();  // neither
  put(req, "k-4", "192.168.77.14", "10.250.11.128/25");  // inside k-1's, added just before
  v1::ApplyNodesResponse resp;
  grpc::Status s = call(req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(resp.results_size(), 7);
  std::vector<std::string> got;
  for (const v1::NodeOpResult& r : resp.results())
    got.push_back(r.name() + " " + std::to_string(r.code()) + " " + r.message() + (r.created() ? " created" : "") +
                  (r.removed() ? " removed" : ""));
  EXPECT_EQ(got, (std::vector<std::string>{
                     "k-1 0  created",
                     "k-2 3 vtep: 'not-an-address' is not an IPv4 or IPv6 address",
                     "k-3 6 vtep: 192.168.77.5 belongs to node static-1",
                     "static-1 0 ",
                     "static-1-not 0 ",
                     " 3 op: neither put nor remove",
                     "k-4 6 pod_cidrs: 10.250.11.128/25 overlaps 10.250.11.0/24 of node k-1",
                 }));
  EXPECT_EQ(resp.instance(), list().instance());
  EXPECT_EQ(table(), (std::map<std::string, std::string>{{"static-1", kStatic},
                                                         {"k-1", kube("192.168.77.11", "10.250.11.0/24")}}));

  // VTEPs no node can have: each refused with its reason, nothing added.
  v1::ApplyNodesRequest vteps;
  put(vteps, "v-1", "127.0.0.1", "10.250.21.0/24");
  put(vteps, "v-2", "169.254.169.254", "10.250.22.0/24");
  put(vteps, "v-3", "10.250.0.5", "10.250.23.0/24");  // inside this node's pod CIDR
  put(vteps, "v-4", "0.1.2.3", "10.250.24.0/24");
  put(vteps, "v-5", "192.168.77.254", "10.250.25.0/24");  // the uplink's next hop
  put(vteps, "v-6", "224.0.0.1", "10.250.26.0/24");
  s = call(vteps, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  got.clear();
  for (const v1::NodeOpResult& r : resp.results())
    got.push_back(r.name() + " " + std::to_string(r.code()) + " " + r.message());
  const std::string no = ", no remote node's VTEP";
  EXPECT_EQ(got, (std::vector<std::string>{
                     "v-1 3 vtep: 127.0.0.1 is loopback (127.0.0.0/8)" + no,
                     "v-2 3 vtep: 169.254.169.254 is link-local (169.254.0.0/16, where cloud metadata services answer)" +
                         no,
                     "v-3 3 vtep: 10.250.0.5 is inside this node's pod CIDR 10.250.0.0/24" + no,
                     "v-4 3 vtep: 0.1.2.3 is unspecified (0.0.0.0/8, 'this network')" + no,
                     "v-5 3 vtep: 192.168.77.254 is the uplink's next hop (a router)" + no,
                     "v-6 3 vtep: 224.0.0.1 is multicast (224.0.0.0/4)" + no,
                 }));
  // AddNode, the single-node call, refuses alike.
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    v1::AddNodeRequest add;
    add.mutable_node()->set_name("v-7");
    add.mutable_node()->set_vtep("127.0.0.1");
    add.mutable_node()->add_pod_cidrs("10.250.27.0/24");
    v1::AddNodeResponse added;
    const grpc::Status a = sluiced_->remoteNodes().AddNode(&ctx, add, &added);
    EXPECT_EQ(a.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(a.error_message(), "vtep: 127.0.0.1 is loopback (127.0.0.0/8)" + no);
  }
  EXPECT_EQ(table().size(), 2u) << "nothing added";

  v1::ApplyNodesRequest big;
  for (int i = 0; i <= 8192; ++i) big.add_ops()->set_remove("k-1");
  s = call(big, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(), "ops: 8193 in one request, at most 8192");
  EXPECT_EQ(table().size(), 2u) << "nothing done";
}

TEST_F(AgentTest, FollowsNodesAddedModifiedDeleted) {
  startAgent();
  // Only node-b qualifies: node-a is this node, node-c runs no Sluice,
  // node-d has no IPv4 pod CIDR.
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}})) << agent_->log();
  ASSERT_TRUE(waitFor([&] { return list().controller().synced(); }));
  EXPECT_EQ(list().controller().node_name(), "node-a");
  EXPECT_EQ(counter("node_no_annotation"), 2u);  // node-a (until published) and node-c
  // Reported after the pass that filled the table.
  EXPECT_TRUE(waitFor([&] { return counter("skipped_no_annotation") == 1; }));  // node-c
  EXPECT_TRUE(waitFor([&] { return counter("skipped_no_pod_cidr") == 1; }));    // node-d
  // The initial sync is one batch (node-b); the passes after it (the own
  // Node's patch coming back, the resync every second) change nothing.
  EXPECT_TRUE(waitFor([&] { return counter("nodes_added") == 1; }));
  EXPECT_EQ(counter("sluiced_batches"), 1u);

  // The agent published this node's VTEP on its own Node, through a patch
  // that left the rest of the Node as it was.
  const std::string own = vtepAnnotation("192.168.77.1", vtep_mac_);
  ASSERT_TRUE(waitFor([&] {
    json n = api_->node("node-a");
    return n.is_object() && n["metadata"]["annotations"].value("sluice.dev/vtep", "") == own;
  })) << api_->node("node-a").dump();
  json a = api_->node("node-a");
  EXPECT_EQ(a["spec"]["podCIDR"], "10.250.0.0/24");
  EXPECT_EQ(a["metadata"]["labels"]["kubernetes.io/hostname"], "node-a");
  EXPECT_EQ(a["metadata"]["annotations"].size(), 1u);
  // Through the status subresource, the one the agent's role may patch: a
  // patch of the Node itself would be refused (403) by the same rules.
  EXPECT_EQ(api_->stats()["patch_status"], 1);
  EXPECT_EQ(api_->stats()["patch"], 0);
  EXPECT_EQ(api_->stats()["forbidden"], 0);

  // MODIFIED: a new VTEP address and pod CIDR change the node in place.
  uint32_t tunnel = 0;
  const v1::ListNodesResponse first = list();
  for (const v1::RemoteNode& n : first.nodes())
    if (n.name() == "node-b") tunnel = n.tunnel();
  putNode({{"name", "node-b"},
           {"internal_ip", "192.168.77.12"},
           {"pod_cidrs", {"10.250.12.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.12", "02:00:00:00:00:12")}}}});
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.12", "10.250.12.0/24")}}));
  const v1::ListNodesResponse changed = list();
  for (const v1::RemoteNode& n : changed.nodes())
    if (n.name() == "node-b") {
      EXPECT_EQ(n.tunnel(), tunnel);
      EXPECT_EQ(n.mac(), "02:00:00:00:00:12");
    }
  // The counters arrive with the report that follows the change.
  EXPECT_TRUE(waitFor([&] { return counter("nodes_updated") == 1; }));

  // A Node whose pod CIDR overlaps node-b's is refused (logged once, counted).
  putNode({{"name", "node-e"},
           {"internal_ip", "192.168.77.14"},
           {"pod_cidrs", {"10.250.12.128/25"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.14", "02:00:00:00:00:14")}}}});
  ASSERT_TRUE(waitFor([&] { return counter("skipped_overlap") == 1; }));
  EXPECT_EQ(table().count("node-e"), 0u);

  // DELETED: node-b goes; node-e's CIDR is free now and it comes in.
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-b"}}).is_null());
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-e", kube("192.168.77.14", "10.250.12.128/25")}}));
  EXPECT_TRUE(waitFor([&] { return counter("nodes_removed") == 1; }));

  // Bad input disturbs nothing: a line that is no JSON, a Node whose
  // annotation is not ours.
  ASSERT_FALSE(api_->control({{"op", "raw"}, {"line", "{not json"}}).is_null());
  putNode({{"name", "node-f"},
           {"pod_cidrs", {"10.250.6.0/24"}},
           {"annotations", {{"sluice.dev/vtep", "flannel says hello"}}}});
  putNode({{"name", "node-g"},
           {"pod_cidrs", {"10.250.7.0/24"}},
           {"annotations", {{"sluice.dev/vtep", R"({"version": 9, "whatever": true})"}}}});
  ASSERT_TRUE(waitFor([&] {
    return counter("malformed_events") == 1 && counter("node_bad_annotation") == 1 &&
           counter("node_unknown_annotation") == 1;
  }));
  EXPECT_EQ(table(), (std::map<std::string, std::string>{{"static-1", kStatic},
                                                          {"node-e", kube("192.168.77.14", "10.250.12.128/25")}}));
  // A NotReady Node past the grace period is left out.
  putNode({{"name", "node-h"},
           {"internal_ip", "192.168.77.18"},
           {"pod_cidrs", {"10.250.8.0/24"}},
           {"ready", false},
           {"ready_since", "2020-01-01T00:00:00Z"},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.18", "02:00:00:00:00:18")}}}});
  ASSERT_TRUE(waitFor([&] { return counter("skipped_not_ready") == 1; }));
  EXPECT_EQ(table().count("node-h"), 0u);

  // sluicectl shows the controller and each node's source.
  CommandResult out = sluicectl(sluiced_->apiSocket(), "nodes");
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("node controller (node node-a): synced"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("kubernetes"), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("static"), std::string::npos) << out.output;
}

// A Node annotation is anyone's to write who may patch the Node: the agent
// takes a VTEP only where the kubelet says the node is (one of its
// InternalIPs) and never one that can be no node's, unless told the
// underlay is a network of its own.
TEST_F(AgentTest, LeavesOutNodesWhoseVtepIsNotTheirsUnlessTheUnderlayIsDeclaredApart) {
  putNode({{"name", "node-m"},
           {"internal_ip", "192.168.77.31"},
           {"pod_cidrs", {"10.250.31.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.30", "02:00:00:00:00:30")}}}});
  putNode({{"name", "node-n"},
           {"internal_ip", "127.0.0.1"},
           {"pod_cidrs", {"10.250.32.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("127.0.0.1", "02:00:00:00:00:31")}}}});
  startAgent();
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}})) << agent_->log();
  ASSERT_TRUE(waitFor([&] {
    return counter("skipped_vtep_not_internal_ip") == 1 && counter("skipped_bad_vtep") == 1;
  })) << agent_->log();
  const std::string log = agent_->log();
  EXPECT_NE(log.find("node node-m left out (vtep_not_internal_ip): VTEP 192.168.77.30 is none of its InternalIPs"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("node node-n left out (bad_vtep): VTEP 127.0.0.1 is loopback (127.0.0.0/8)"), std::string::npos)
      << log;

  EXPECT_EQ(agent_->stop(), 0);
  agent_ = std::make_unique<AgentProcess>(
      dir_ + "/agent.log",
      std::vector<std::string>{SLUICE_AGENT_PATH, "--kubeconfig", api_->kubeconfig(), "--node-name", "node-a",
                               "--api-socket", sluiced_->apiSocket(), "--resync-interval", "1", "--watch-timeout",
                               "5", "--allow-vtep-outside-internal-ips"});
  ASSERT_TRUE(tableIs({{"static-1", kStatic},
                       {"node-b", kube("192.168.77.2", "10.250.2.0/24")},
                       {"node-m", kube("192.168.77.30", "10.250.31.0/24")}}))
      << agent_->log();
  EXPECT_TRUE(waitFor([&] { return counter("skipped_bad_vtep") == 1; })) << "never a loopback VTEP";
}

TEST_F(AgentTest, RelistsWhenTheResourceVersionExpires) {
  startAgent();
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}}));
  ASSERT_TRUE(waitFor([&] { return counter("lists") == 1; }));
  // Every version so far expires and the open watch ends: the agent's
  // rewatch is answered 410 Gone (as the status) and it lists again.
  ASSERT_FALSE(api_->control({{"op", "expire"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return counter("lists") == 2 && counter("relists_gone") == 1; }, std::chrono::seconds(30)))
      << agent_->log();
  putNode({{"name", "node-i"},
           {"internal_ip", "192.168.77.19"},
           {"pod_cidrs", {"10.250.9.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.19", "02:00:00:00:00:19")}}}});
  ASSERT_TRUE(tableIs({{"static-1", kStatic},
                       {"node-b", kube("192.168.77.2", "10.250.2.0/24")},
                       {"node-i", kube("192.168.77.19", "10.250.9.0/24")}}));
  // The same as an ERROR event with code 410 inside the watch.
  ASSERT_FALSE(api_->control({{"op", "expire"}, {"as_event", true}}).is_null());
  ASSERT_TRUE(waitFor([&] { return counter("lists") == 3 && counter("relists_gone") >= 2; }, std::chrono::seconds(30)))
      << agent_->log();
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-i"}}).is_null());
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}}));
}

TEST_F(AgentTest, KeepsTheTableWhileTheApiIsDownAndResyncsAfter) {
  startAgent();
  const std::map<std::string, std::string> before = {{"static-1", kStatic},
                                                     {"node-b", kube("192.168.77.2", "10.250.2.0/24")}};
  ASSERT_TRUE(tableIs(before));
  ASSERT_FALSE(api_->control({{"op", "stop"}}).is_null());
  ASSERT_TRUE(waitFor([&] { return !list().controller().synced(); }, std::chrono::seconds(30))) << agent_->log();
  EXPECT_FALSE(list().controller().last_error().empty());
  EXPECT_GE(counter("connection_errors"), 1u);
  // Meanwhile the cluster changes; sluiced keeps its table.
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-b"}}).is_null());
  putNode({{"name", "node-j"},
           {"internal_ip", "192.168.77.20"},
           {"pod_cidrs", {"10.250.10.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.20", "02:00:00:00:00:20")}}}});
  EXPECT_EQ(table(), before);
  ASSERT_FALSE(api_->control({{"op", "start"}}).is_null());
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-j", kube("192.168.77.20", "10.250.10.0/24")}}))
      << agent_->log();
  ASSERT_TRUE(waitFor([&] { return list().controller().synced() && list().controller().last_error().empty(); }));
}

TEST_F(AgentTest, ReconcilesAgainAfterSluicedRestarts) {
  startAgent();
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}}));
  sluiced_->kill9();
  // While sluiced is down the cluster changes.
  ASSERT_FALSE(api_->control({{"op", "delete"}, {"name", "node-b"}}).is_null());
  putNode({{"name", "node-k"},
           {"internal_ip", "192.168.77.21"},
           {"pod_cidrs", {"10.250.11.0/24"}},
           {"annotations", {{"sluice.dev/vtep", vtepAnnotation("192.168.77.21", "02:00:00:00:00:21")}}}});
  std::string error;
  ASSERT_TRUE(sluiced_->restart(&error)) << error;
  // The checkpoint brought node-b back as the agent's; the agent removes it
  // and adds node-k, and reports to the new sluiced.
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-k", kube("192.168.77.21", "10.250.11.0/24")}}))
      << agent_->log();
  ASSERT_TRUE(waitFor([&] { return list().has_controller(); }));
  EXPECT_GE(counter("sluiced_resyncs"), 2u);
}

TEST_F(AgentTest, AWrongTokenIsRefusedUntilTheTokenFileChanges) {
  // The kubeconfig's tokenFile holds a token the server does not accept.
  const std::string token_file = dir_ + "/api/token";
  std::ofstream(token_file, std::ios::trunc) << "expired-token\n";
  startAgent();
  ASSERT_TRUE(waitFor([&] { return list().controller().last_error().find("HTTP 401") != std::string::npos; },
                      std::chrono::seconds(30)))
      << agent_->log();
  EXPECT_FALSE(list().controller().synced());
  EXPECT_EQ(table(), (std::map<std::string, std::string>{{"static-1", kStatic}}));
  EXPECT_GE(api_->stats()["unauthorized"].get<int>(), 1);
  // Rotated, as the kubelet replaces a projected token: read again, in sync.
  const std::string fresh = token_file + ".new";
  std::ofstream(fresh) << kToken << "\n";
  fs::rename(fresh, token_file);
  ASSERT_TRUE(tableIs({{"static-1", kStatic}, {"node-b", kube("192.168.77.2", "10.250.2.0/24")}})) << agent_->log();
  EXPECT_TRUE(waitFor([&] { return list().controller().synced(); }));
}

}  // namespace
}  // namespace sluice::test
