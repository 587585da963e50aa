// The CNI verbs end to end through the in-process dispatcher, against the
// fake sluiced and Debian's host-local IPAM: results, side effects, and
// that DEL / GC / failed ADDs leave nothing behind.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>

#include "cni-plugin/pod_paths.h"
#include "tests/cni/cni_fixture.h"

namespace sluice::cni::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json readJson(const std::string& path) {
  std::ifstream f(path);
  return json::parse(f, nullptr, false);
}

TEST_F(CniTest, VersionListsEverySupportedVersionInTheAskedOne) {
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    RunResult r = run({{"CNI_COMMAND", "VERSION"}}, json{{"cniVersion", version}});
    ASSERT_EQ(r.rc, 0) << r.stdout_text;
    EXPECT_EQ(r.out, json({{"cniVersion", version},
                           {"supportedVersions", {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}}}));
  }
  // One we do not speak: answered in the latest, the list unchanged.
  RunResult r = run({{"CNI_COMMAND", "VERSION"}}, std::string(R"({"cniVersion":"0.2.0"})"));
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(r.out["cniVersion"], "1.1.0");
}

TEST_F(CniTest, VersionWithoutStdinAnswersInLatestVersion) {
  RunResult r = run({{"CNI_COMMAND", "VERSION"}}, std::string());
  ASSERT_EQ(r.rc, 0);
  EXPECT_EQ(r.out["cniVersion"], "1.1.0");
}

TEST_F(CniTest, AddReturnsSocketInterfaceAddressesAndRoutes) {
  RunResult r = run(env("ADD"), conf("1.1.0"));
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  ASSERT_EQ(fake_->ports().size(), 1u);
  const v1::Port port = fake_->ports()[0];
  const std::string subdir = socketSubdir(kContainerId);

  EXPECT_EQ(r.out["cniVersion"], "1.1.0");
  ASSERT_EQ(r.out["interfaces"].size(), 1u);
  const json& iface = r.out["interfaces"][0];
  EXPECT_EQ(iface["name"], "net1");
  EXPECT_EQ(iface["mac"], port.mac());
  EXPECT_EQ(iface["sandbox"], "/var/run/netns/test-pod");
  EXPECT_EQ(iface["socketPath"], socket_dir_ + "/" + subdir + "/net1.sock");
  EXPECT_EQ(iface["mtu"], 1500);
  ASSERT_EQ(r.out["ips"].size(), 1u);
  EXPECT_EQ(r.out["ips"][0]["address"], "10.244.1.2/24");
  EXPECT_EQ(r.out["ips"][0]["gateway"], "10.244.1.1");
  EXPECT_EQ(r.out["ips"][0]["interface"], 0);
  EXPECT_EQ(r.out["routes"], json({{{"dst", "10.244.0.0/16"}}}));

  // What sluiced was asked for.
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  const v1::AddPortRequest req = fake_->addRequests()[0];
  EXPECT_EQ(req.attachment().container_id(), kContainerId);
  EXPECT_EQ(req.attachment().ifname(), "net1");
  EXPECT_EQ(req.pod_namespace(), "default");
  EXPECT_EQ(req.pod_name(), "pod-a");
  EXPECT_EQ(req.ip(), "10.244.1.2");
  EXPECT_EQ(req.type(), v1::PORT_TYPE_VHOST_USER);
  EXPECT_EQ(req.vhost_mode(), v1::VHOST_MODE_SERVER);
  EXPECT_EQ(req.socket_subdir(), subdir);
  EXPECT_EQ(req.mtu(), 1500u) << "the network's mtu is the port's";

  // Side effects: the address held, the record, the pod dir, device-info
  // (sluiced serves the socket, so the pod app is the vhost client).
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  EXPECT_EQ(records(), std::vector<std::string>{std::string(kContainerId) + ":net1"});
  EXPECT_TRUE(fs::is_directory(socket_dir_ + "/" + subdir));
  json info = readJson(devinfo_path_);
  EXPECT_EQ(info, json({{"type", "vhost-user"},
                        {"version", "1.1.0"},
                        {"vhost-user", {{"mode", "client"}, {"path", port.socket_path()}}},
                        {"ips", {"10.244.1.2"}}}));
  // stdout holds the result alone; logs went to stderr.
  EXPECT_EQ(r.stdout_text.find("sluice-cni["), std::string::npos);
  EXPECT_NE(r.stderr_text.find("added port"), std::string::npos);
}

TEST_F(CniTest, AddInSpec100LeavesOut11InterfaceFields) {
  RunResult r = run(env("ADD"), conf("1.0.0"));
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(r.out["cniVersion"], "1.0.0");
  const json& iface = r.out["interfaces"][0];
  EXPECT_FALSE(iface.contains("socketPath"));
  EXPECT_FALSE(iface.contains("mtu"));
  EXPECT_TRUE(iface.contains("mac"));
}

TEST_F(CniTest, AddReportsTheOverlayMtuInResultAndDeviceInfo) {
  // sluiced has a VXLAN uplink: pods must not send more than 1450 bytes of
  // IPv4 toward other nodes. The result's interface MTU is the smaller of
  // the netconf's (1500 here) and the overlay's; device-info carries it too.
  fake_->setOverlayMtu(1450);
  RunResult r = run(env("ADD"), conf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(r.out["interfaces"][0]["mtu"], 1450);
  EXPECT_EQ(readJson(devinfo_path_)["mtu"], 1450);
  json c = conf();
  c["mtu"] = 1400;  // already below the overlay's: kept
  RunResult r2 = run(env("ADD", kContainerId, "net2"), c);
  ASSERT_EQ(r2.rc, 0) << r2.stdout_text;
  EXPECT_EQ(r2.out["interfaces"][0]["mtu"], 1400);
}

TEST_F(CniTest, TheNetworksMtuReachesSluicedAndWithoutOneSluicedsDefaultApplies) {
  json c = conf();
  c["mtu"] = 1280;
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  c.erase("mtu");
  RunResult r2 = run(env("ADD", kContainerId, "net2"), c);
  ASSERT_EQ(r2.rc, 0) << r2.stdout_text;
  ASSERT_EQ(fake_->addRequests().size(), 2u);
  EXPECT_EQ(fake_->addRequests()[0].mtu(), 1280u);
  EXPECT_EQ(fake_->addRequests()[1].mtu(), 0u) << "0: sluiced's port-mtu";
}

TEST_F(CniTest, SourceValidationIsOnUnlessTheNetworkTurnsItOffAsABoolean) {
  // Unset: the request leaves the field unset (on, also to an older sluiced).
  RunResult r = run(env("ADD"), conf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_FALSE(fake_->addRequests()[0].has_source_validation());
  // true: the same as unset.
  json on = conf();
  on["sourceValidation"] = true;
  r = run(env("ADD", kContainerId, "net2"), on);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_FALSE(fake_->addRequests()[1].has_source_validation());
  // false (a router pod's network, on a node that allows it): asked for
  // explicitly.
  writeNodeConfig({{"allowSourceValidationOff", true}});
  json off = conf();
  off["sourceValidation"] = false;
  r = run(env("ADD", kContainerId, "net3"), off);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_TRUE(fake_->addRequests()[2].has_source_validation());
  EXPECT_FALSE(fake_->addRequests()[2].source_validation());
  // Anything but a JSON boolean is a config error naming the key.
  for (const json& bad : {json("false"), json(0), json("off")}) {
    json c = conf();
    c["sourceValidation"] = bad;
    RunResult e = run(env("ADD", kContainerId, "net4"), c);
    EXPECT_NE(e.rc, 0) << bad.dump();
    EXPECT_EQ(e.code(), 7) << e.stdout_text;
    EXPECT_NE(e.msg().find("\"sourceValidation\" must be true or false"), std::string::npos) << e.stdout_text;
  }
  EXPECT_EQ(fake_->addRequests().size(), 3u);
}

TEST_F(CniTest, QueuesReachSluicedAsAPositiveCountForVhostUserOnly) {
  RunResult r = run(env("ADD"), conf());
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_FALSE(fake_->addRequests()[0].has_queues()) << "unset: sluiced's 1";
  json four = conf();
  four["queues"] = 4;
  r = run(env("ADD", kContainerId, "net2"), four);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_TRUE(fake_->addRequests()[1].has_queues());
  EXPECT_EQ(fake_->addRequests()[1].queues(), 4u);
  for (const json& bad : {json(0), json(-1), json(17), json("4"), json(2.5)}) {
    json c = conf();
    c["queues"] = bad;
    RunResult e = run(env("ADD", kContainerId, "net3"), c);
    EXPECT_EQ(e.code(), 7) << bad.dump() << ": " << e.stdout_text;
    EXPECT_NE(e.msg().find("\"queues\" must be"), std::string::npos) << e.stdout_text;
  }
  // A VF's queues are its driver's business, not sluiced's.
  json vf = conf();
  vf["interfaceType"] = "sriov";
  vf["queues"] = 2;
  RunResult e = run(env("ADD", kContainerId, "net5"), vf);
  EXPECT_EQ(e.code(), 7) << e.stdout_text;
  EXPECT_NE(e.msg().find("\"queues\" applies to interfaceType \"vhost-user\" only"), std::string::npos)
      << e.stdout_text;
  EXPECT_EQ(fake_->addRequests().size(), 2u);
}

TEST_F(CniTest, RoutedPrefixesComeFromTheNetworkOrThePodsCniArgsAndCheckComparesThem) {
  writeNodeConfig({{"routedPrefixRanges", {"10.100.0.0/15", "10.102.0.0/16", "fd00:100::/32"}}});
  // The network's list, normalised, goes to sluiced.
  json net = conf();
  net["routedPrefixes"] = {"10.100.0.0/16", "FD00:100::/48"};
  net["allowPodRoutedPrefixes"] = true;
  RunResult r = run(env("ADD"), net);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(fake_->addRequests()[0].routed_prefixes_size(), 2);
  EXPECT_EQ(fake_->addRequests()[0].routed_prefixes(0), "10.100.0.0/16");
  EXPECT_EQ(fake_->addRequests()[0].routed_prefixes(1), "fd00:100::/48");
  json check = net;
  check["prevResult"] = r.out;
  EXPECT_EQ(run(env("CHECK"), check).rc, 0);
  // CHECK against a config naming other prefixes: the port differs.
  check["routedPrefixes"] = {"10.100.0.0/16"};
  RunResult differs = run(env("CHECK"), check);
  EXPECT_EQ(differs.code(), 101) << differs.stdout_text;
  EXPECT_NE(differs.msg().find("routed prefixes"), std::string::npos) << differs.stdout_text;
  // The pod's cni-args (Multus: args.cni) replace the network's; [] means none.
  json pod = net;
  pod["args"] = {{"cni", {{"routedPrefixes", {"10.102.0.0/24"}}}}};
  r = run(env("ADD", kContainerId, "net2"), pod);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(fake_->addRequests()[1].routed_prefixes_size(), 1);
  EXPECT_EQ(fake_->addRequests()[1].routed_prefixes(0), "10.102.0.0/24");
  pod["args"]["cni"]["routedPrefixes"] = json::array();
  r = run(env("ADD", kContainerId, "net3"), pod);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(fake_->addRequests()[2].routed_prefixes_size(), 0);
  // Wrong types, no CIDR, host bits set, twice: config errors naming the key.
  const std::pair<json, std::string> bad[] = {
      {json("10.100.0.0/16"), "\"routedPrefixes\" must be an array"},
      {json::array({16}), "\"routedPrefixes\" entries must be IPv4 or IPv6 CIDRs"},
      {json::array({"10.100.0.1/16"}), "\"routedPrefixes\" entries must be IPv4 or IPv6 CIDRs"},
      {json::array({"10.100.0.0/16", "10.100.0.0/16"}), "\"routedPrefixes\" lists 10.100.0.0/16 twice"}};
  for (const auto& [value, message] : bad) {
    json c = conf();
    c["routedPrefixes"] = value;
    RunResult e = run(env("ADD", kContainerId, "net4"), c);
    EXPECT_EQ(e.code(), 7) << value.dump() << ": " << e.stdout_text;
    EXPECT_NE(e.msg().find(message), std::string::npos) << e.stdout_text;
    json a = conf();
    a["args"] = {{"cni", {{"routedPrefixes", value}}}};
    e = run(env("ADD", kContainerId, "net4"), a);
    EXPECT_EQ(e.code(), 7) << value.dump() << ": " << e.stdout_text;
    EXPECT_NE(e.msg().find("\"args.cni.routedPrefixes\""), std::string::npos) << e.stdout_text;
  }
  json sriov = conf();
  sriov["interfaceType"] = "sriov";
  sriov["routedPrefixes"] = {"10.100.0.0/16"};
  RunResult vf = run(env("ADD", kContainerId, "net4"), sriov);
  EXPECT_EQ(vf.code(), 7) << vf.stdout_text;
  EXPECT_NE(vf.msg().find("\"routedPrefixes\" applies to interfaceType \"vhost-user\" only"), std::string::npos)
      << vf.stdout_text;
  EXPECT_EQ(fake_->addRequests().size(), 3u);
}

// A routed prefix draws every node's traffic for it to the pod: the node's
// administrator names the ranges (none by default), the network's author
// decides whether pods may name their own, and the special ranges are never
// allowed. Each refusal is a config error (7) naming the field, and nothing
// reaches sluiced.
TEST_F(CniTest, RoutedPrefixesNeedTheNodesRangesAndTheNetworksConsentForThePods) {
  json net = conf();
  net["routedPrefixes"] = {"10.100.0.0/16"};
  RunResult none = run(env("ADD"), net);
  EXPECT_EQ(none.code(), 7) << none.stdout_text;
  EXPECT_EQ(none.msg(), "routedPrefixes: 10.100.0.0/16 is not allowed: this node allows no routed prefixes (node "
                        "config routedPrefixRanges is empty)");

  writeNodeConfig({{"routedPrefixRanges", {"10.100.0.0/16", "fd00:100::/32"}}});
  json pod = conf();
  pod["args"] = {{"cni", {{"routedPrefixes", {"128.0.0.0/1"}}}}};
  RunResult no_consent = run(env("ADD"), pod);
  EXPECT_EQ(no_consent.code(), 7) << no_consent.stdout_text;
  EXPECT_EQ(no_consent.msg(), "args.cni.routedPrefixes: this network does not let pods name routed prefixes (network "
                              "config allowPodRoutedPrefixes is not true)");
  pod["allowPodRoutedPrefixes"] = true;
  RunResult special = run(env("ADD"), pod);
  EXPECT_EQ(special.code(), 7) << special.stdout_text;
  EXPECT_EQ(special.msg(), "args.cni.routedPrefixes: 128.0.0.0/1 overlaps 169.254.0.0/16 (link-local, cloud metadata)");
  pod["args"]["cni"]["routedPrefixes"] = {"10.101.0.0/24"};
  RunResult outside = run(env("ADD"), pod);
  EXPECT_EQ(outside.code(), 7) << outside.stdout_text;
  EXPECT_EQ(outside.msg(), "args.cni.routedPrefixes: 10.101.0.0/24 is outside this node's routedPrefixRanges "
                           "(10.100.0.0/16,fd00:100::/32)");
  net["routedPrefixes"] = {"fe80::/64"};
  RunResult link_local = run(env("ADD"), net);
  EXPECT_EQ(link_local.code(), 7) << link_local.stdout_text;
  EXPECT_EQ(link_local.msg(), "routedPrefixes: fe80::/64 overlaps fe80::/10 (link-local)");
  EXPECT_TRUE(fake_->addRequests().empty()) << "no refused claim reached sluiced";

  pod["args"]["cni"]["routedPrefixes"] = {"10.100.5.0/24"};
  RunResult inside = run(env("ADD"), pod);
  ASSERT_EQ(inside.rc, 0) << inside.stdout_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  ASSERT_EQ(fake_->addRequests()[0].routed_prefixes_size(), 1);
  EXPECT_EQ(fake_->addRequests()[0].routed_prefixes(0), "10.100.5.0/24");
  // DEL is not ADD: a policy narrowed since never keeps a port from going.
  writeNodeConfig();
  pod["allowPodRoutedPrefixes"] = false;
  EXPECT_EQ(run(env("DEL"), pod).rc, 0);

  // The node config's ranges: CIDR strings only.
  for (const json& bad : {json("10.100.0.0/16"), json::array({"10.100.0.1/16"}), json::array({7})}) {
    writeNodeConfig({{"routedPrefixRanges", bad}});
    RunResult e = run(env("ADD", kContainerId, "net2"), net);
    EXPECT_EQ(e.code(), 7) << bad.dump() << ": " << e.stdout_text;
    EXPECT_NE(e.msg().find("\"routedPrefixRanges\""), std::string::npos) << e.stdout_text;
  }
}

TEST_F(CniTest, AddInClientModeAsksForClientPortAndTellsPodToServe) {
  json c = conf();
  c["vhostMode"] = "client";
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(fake_->addRequests()[0].vhost_mode(), v1::VHOST_MODE_CLIENT);
  EXPECT_EQ(readJson(devinfo_path_)["vhost-user"]["mode"], "server");
}

TEST_F(CniTest, AddWithoutVhostModeIsClientModeAndThePodServes) {
  // The fixture's config names "server"; without the key the plugin asks
  // sluiced for a client port, and the pod's application, told by the
  // device-info that it is the vhost-user server, creates the socket at the
  // path the result names, in the pod directory ADD made for it.
  json c = conf();
  c.erase("vhostMode");
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;
  ASSERT_EQ(fake_->addRequests().size(), 1u);
  EXPECT_EQ(fake_->addRequests()[0].vhost_mode(), v1::VHOST_MODE_CLIENT);
  ASSERT_EQ(fake_->ports().size(), 1u);
  const v1::Port port = fake_->ports()[0];
  EXPECT_EQ(port.vhost_mode(), v1::VHOST_MODE_CLIENT);
  const std::string socket = socket_dir_ + "/" + socketSubdir(kContainerId) + "/net1.sock";
  EXPECT_EQ(port.socket_path(), socket);
  EXPECT_EQ(r.out["interfaces"][0]["socketPath"], socket);
  EXPECT_TRUE(fs::is_directory(fs::path(socket).parent_path()));
  EXPECT_EQ(readJson(devinfo_path_), json({{"type", "vhost-user"},
                                           {"version", "1.1.0"},
                                           {"vhost-user", {{"mode", "server"}, {"path", socket}}},
                                           {"ips", {"10.244.1.2"}}}));
  // The pod's application listens there; DEL removes its socket with the
  // pod directory (sluiced, the client, never owned it).
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(socket.size(), sizeof(addr.sun_path));
  std::memcpy(addr.sun_path, socket.c_str(), socket.size() + 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0) << socket;
  ASSERT_TRUE(fs::is_socket(socket));
  RunResult del = run(env("DEL"), c);
  ::close(fd);
  ASSERT_EQ(del.rc, 0) << del.stdout_text << del.stderr_text;
  EXPECT_FALSE(fs::exists(socket));
  EXPECT_FALSE(fs::exists(fs::path(socket).parent_path()));
}

TEST_F(CniTest, AddAppendsToPrevResult) {
  json c = conf();
  c["prevResult"] = {{"cniVersion", "1.1.0"},
                     {"interfaces", {{{"name", "eth0"}, {"sandbox", "/var/run/netns/test-pod"}}}},
                     {"ips", {{{"address", "192.168.5.7/24"}, {"interface", 0}}}},
                     {"dns", {{"nameservers", {"10.96.0.10"}}}}};
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0) << r.stdout_text;
  ASSERT_EQ(r.out["interfaces"].size(), 2u);
  EXPECT_EQ(r.out["interfaces"][0]["name"], "eth0");
  EXPECT_EQ(r.out["interfaces"][1]["name"], "net1");
  ASSERT_EQ(r.out["ips"].size(), 2u);
  EXPECT_EQ(r.out["ips"][0]["address"], "192.168.5.7/24");
  EXPECT_EQ(r.out["ips"][1]["interface"], 1);
  // host-local gave no DNS, so the earlier plugin's stays.
  EXPECT_EQ(r.out["dns"]["nameservers"], json({"10.96.0.10"}));
}

TEST_F(CniTest, DelAfterAddLeavesNothingAndRepeatsHarmlessly) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  RunResult del = run(env("DEL"), conf());
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_TRUE(del.stdout_text.empty());
  expectNothingLeft();
  // containerd's second DEL comes with an empty CNI_NETNS.
  Environment again = env("DEL");
  again["CNI_NETNS"] = "";
  RunResult del2 = run(again, conf());
  EXPECT_EQ(del2.rc, 0) << del2.stdout_text;
  expectNothingLeft();
}

TEST_F(CniTest, DelOfUnknownAttachmentSucceeds) {
  Environment e = env("DEL", "never-added");
  e.erase("CNI_NETNS");
  RunResult r = run(e, conf());
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  expectNothingLeft();
}

TEST_F(CniTest, DelWhileSluicedIsDownSucceedsAndGcFinishesLater) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  server_->stop();
  RunResult del = run(env("DEL"), conf());
  EXPECT_EQ(del.rc, 0) << del.stdout_text;
  EXPECT_NE(del.stderr_text.find("delete pending"), std::string::npos);
  EXPECT_FALSE(fs::exists(devinfo_path_));
  // sluiced may still route the address to the port: both stay, the record
  // marked, until sluiced confirms the port is gone.
  EXPECT_EQ(heldIps(), std::vector<std::string>{"10.244.1.2"});
  EXPECT_EQ(record(kContainerId)["pendingDelete"], true);

  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);
  json gc = conf();
  gc["cni.dev/valid-attachments"] = json::array();
  RunResult r = run(env("GC"), gc);
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  expectNothingLeft();
}

TEST_F(CniTest, DelTakesDeviceInfoPathFromRecordWhenRuntimeOmitsIt) {
  ASSERT_EQ(run(env("ADD"), conf()).rc, 0);
  ASSERT_TRUE(fs::exists(devinfo_path_));
  json c = conf();
  c.erase("runtimeConfig");
  EXPECT_EQ(run(env("DEL"), c).rc, 0);
  expectNothingLeft();
}

TEST_F(CniTest, CheckPassesForAnIntactAttachment) {
  for (const std::string version : {"1.0.0", "1.1.0"}) {
    RunResult add = run(env("ADD"), conf(version));
    ASSERT_EQ(add.rc, 0) << add.stdout_text;
    json c = conf(version);
    c["prevResult"] = add.out;
    RunResult check = run(env("CHECK"), c);
    EXPECT_EQ(check.rc, 0) << version << ": " << check.stdout_text;
    EXPECT_TRUE(check.stdout_text.empty());
    ASSERT_EQ(run(env("DEL"), conf(version)).rc, 0);
  }
}

TEST_F(CniTest, CheckFailsWhenPortIsGoneOrDifferent) {
  RunResult add = run(env("ADD"), conf());
  ASSERT_EQ(add.rc, 0);
  json c = conf();
  c["prevResult"] = add.out;

  fake_->setMac(kContainerId, "net1", "02:aa:bb:cc:dd:ee");
  RunResult wrong_mac = run(env("CHECK"), c);
  EXPECT_EQ(wrong_mac.code(), 101) << wrong_mac.stdout_text;
  EXPECT_NE(wrong_mac.msg().find("MAC"), std::string::npos);

  json other = c;
  other["prevResult"]["ips"][0]["address"] = "10.244.1.9/24";
  fake_->setMac(kContainerId, "net1", add.out["interfaces"][0]["mac"].get<std::string>());
  RunResult wrong_ip = run(env("CHECK"), other);
  EXPECT_EQ(wrong_ip.code(), 101) << wrong_ip.stdout_text;
  EXPECT_NE(wrong_ip.msg().find("IP"), std::string::npos);

  server_->stop();
  RunResult down = run(env("CHECK"), c);
  EXPECT_EQ(down.code(), 11) << down.stdout_text;
  server_ = std::make_unique<FakeServer>(*fake_, api_socket_);

  fake_->dropPort(kContainerId, "net1");
  RunResult missing = run(env("CHECK"), c);
  EXPECT_EQ(missing.code(), 101) << missing.stdout_text;
  EXPECT_NE(missing.msg().find("no port"), std::string::npos);
}

TEST_F(CniTest, CheckWithoutPrevResultIsInvalidConfig) {
  RunResult r = run(env("CHECK"), conf());
  EXPECT_EQ(r.code(), 7);
  EXPECT_NE(r.msg().find("prevResult"), std::string::npos);
}

TEST_F(CniTest, StatusReflectsSluicedHealth) {
  Environment e = {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_ + ":" + kSystemCniPath}};
  RunResult ok = run(e, conf());
  EXPECT_EQ(ok.rc, 0) << ok.stdout_text;
  EXPECT_TRUE(ok.stdout_text.empty());

  fake_->setReady(false);
  EXPECT_EQ(run(e, conf()).code(), 51);
  fake_->setReady(true);

  fake_->setMaxPorts(0);
  fake_->injectPort("other", "net1", "10.244.1.50");
  fake_->setMaxPorts(1);
  EXPECT_EQ(run(e, conf()).code(), 50);

  server_->stop();
  RunResult down = run(e, conf());
  EXPECT_EQ(down.code(), 50);
  EXPECT_NE(down.msg().find("sluiced"), std::string::npos);
}

TEST_F(CniTest, StatusChecksIpamDelegateWhenCniPathIsGiven) {
  json c = conf();
  c["ipam"]["type"] = "no-such-ipam";
  EXPECT_EQ(run({{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_}}, c).code(), 50);
  // CNI_PATH is optional for STATUS: then only sluiced is judged.
  EXPECT_EQ(run({{"CNI_COMMAND", "STATUS"}}, c).rc, 0);
}

TEST_F(CniTest, StatusAndGcNeedSpec110) {
  ASSERT_EQ(run(env("ADD"), conf("1.0.0")).rc, 0);
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0"}) {
    Environment e = {{"CNI_COMMAND", "STATUS"}};
    RunResult status = run(e, conf(version));
    EXPECT_EQ(status.code(), 1) << status.stdout_text;
    EXPECT_EQ(status.msg(), "STATUS needs cniVersion 1.1.0 or later, config says " + version);
    EXPECT_EQ(status.out["cniVersion"], version);
    Environment g = {{"CNI_COMMAND", "GC"}, {"CNI_PATH", kSystemCniPath}};
    json c = conf(version);
    c["cni.dev/valid-attachments"] = json::array();
    RunResult gc = run(g, c);
    EXPECT_EQ(gc.code(), 1) << gc.stdout_text;
    EXPECT_EQ(gc.msg(), "GC needs cniVersion 1.1.0 or later, config says " + version);
  }
  // The refused GC collected nothing.
  EXPECT_EQ(fake_->ports().size(), 1u);
  EXPECT_EQ(records().size(), 1u);
}

TEST_F(CniTest, GcRemovesOnlyStaleAttachmentsOfThisNetwork) {
  ASSERT_EQ(run(env("ADD", "pod-keep"), conf()).rc, 0);
  ASSERT_EQ(run(env("ADD", "pod-stale"), conf()).rc, 0);
  // A port no record of this dataDir claims and one another network of
  // this dataDir claims.
  fake_->injectPort("pod-orphan", "net1", "10.244.1.77");
  fake_->injectPort("pod-othernet", "net2", "10.244.1.78");
  fs::create_directories(data_dir_ + "/other-net");
  std::ofstream(data_dir_ + "/other-net/pod-othernet:net2")
      << R"({"containerID":"pod-othernet","ifname":"net2"})";

  json gc = conf();
  gc["cni.dev/valid-attachments"] = {{{"containerID", "pod-keep"}, {"ifname", "net1"}}};
  RunResult r = run(env("GC"), gc);
  ASSERT_EQ(r.rc, 0) << r.stdout_text << r.stderr_text;

  // Ports without a record of this network may be another network's (one
  // with another dataDir has its records elsewhere): GC leaves them.
  std::set<std::string> left;
  for (const v1::Port& p : fake_->ports()) left.insert(p.attachment().container_id());
  EXPECT_EQ(left, (std::set<std::string>{"pod-keep", "pod-orphan", "pod-othernet"}));
  EXPECT_EQ(heldIps().size(), 1u);
  EXPECT_EQ(records(), std::vector<std::string>{"pod-keep:net1"});
}

TEST_F(CniTest, GcWithoutValidAttachmentsIsInvalidConfig) {
  RunResult r = run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", kSystemCniPath}}, conf());
  EXPECT_EQ(r.code(), 7);
}

TEST_F(CniTest, ParallelAddsForDifferentPodsAllSucceed) {
  constexpr int kPods = 6;
  std::vector<RunResult> results(kPods);
  std::vector<std::thread> threads;
  const json c = conf();
  for (int i = 0; i < kPods; ++i) {
    json pod_conf = c;
    pod_conf["runtimeConfig"]["CNIDeviceInfoFile"] = devinfo_dir_ + "/devinfo-" + std::to_string(i) + ".json";
    threads.emplace_back([this, &results, i, pod_conf] {
      results[i] = run(env("ADD", "pod-" + std::to_string(i)), pod_conf);
    });
  }
  for (std::thread& t : threads) t.join();
  std::set<std::string> ips;
  for (const RunResult& r : results) {
    ASSERT_EQ(r.rc, 0) << r.stdout_text;
    ips.insert(r.out["ips"][0]["address"].get<std::string>());
  }
  EXPECT_EQ(ips.size(), static_cast<size_t>(kPods));
  EXPECT_EQ(fake_->ports().size(), static_cast<size_t>(kPods));
  for (int i = 0; i < kPods; ++i) {
    ASSERT_TRUE(fs::exists(devinfo_dir_ + "/devinfo-" + std::to_string(i) + ".json"));
    ASSERT_EQ(run(env("DEL", "pod-" + std::to_string(i)), c).rc, 0);
  }
  EXPECT_TRUE(fake_->ports().empty());
  EXPECT_TRUE(heldIps().empty());
  EXPECT_TRUE(records().empty());
  for (int i = 0; i < kPods; ++i) EXPECT_FALSE(fs::exists(devinfo_dir_ + "/devinfo-" + std::to_string(i) + ".json"));
}

TEST_F(CniTest, LogFileReceivesLogsInsteadOfStderr) {
  json c = conf();
  const std::string log = log_dir_ + "/cni.log";
  c["logFile"] = log;
  c["someRuntimeField"] = true;
  RunResult r = run(env("ADD"), c);
  ASSERT_EQ(r.rc, 0);
  EXPECT_TRUE(r.stderr_text.empty()) << r.stderr_text;
  std::ifstream f(log);
  const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("ignoring unknown field \"someRuntimeField\""), std::string::npos);
}

}  // namespace
}  // namespace sluice::cni::testing

namespace sluice::cni::testing {
namespace {

// An IPAM delegate that speaks 1.1.0: STATUS and GC are forwarded to it
// (spec: plugins pass these verbs on to their delegates); one that speaks
// only up to 1.0.0 (host-local above) is not sent them.
class Ipam11Test : public CniTest {
 protected:
  void SetUp() override {
    CniTest::SetUp();
    writeIpamScript("ipam11", R"(case "$CNI_COMMAND" in
  VERSION) echo '{"cniVersion":"1.1.0","supportedVersions":["1.0.0","1.1.0"]}' ;;
  ADD) echo '{"cniVersion":"1.1.0","ips":[{"address":"10.244.1.40/24","gateway":"10.244.1.1"}]}' ;;
  STATUS) if [ -e )" + (dir_ / "ipam-down").string() + R"( ]; then echo '{"cniVersion":"1.1.0","code":50,"msg":"pool offline"}'; exit 1; fi ;;
esac
exit 0)");
  }
  json conf11() const {
    json c = conf();
    c["ipam"] = {{"type", "ipam11"}};
    return c;
  }
  std::vector<std::string> commandsExceptVersion() const {
    std::vector<std::string> out;
    for (const std::string& c : ipamCommands()) {
      if (c != "VERSION") out.push_back(c);
    }
    return out;
  }
};

TEST_F(Ipam11Test, StatusIsForwardedToTheDelegate) {
  Environment e = {{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", bin_dir_}};
  EXPECT_EQ(run(e, conf11()).rc, 0);
  EXPECT_EQ(commandsExceptVersion(), std::vector<std::string>{"STATUS"});
  std::ofstream(dir_ / "ipam-down") << "";
  RunResult down = run(e, conf11());
  EXPECT_EQ(down.code(), 50);
  EXPECT_NE(down.msg().find("pool offline"), std::string::npos);
}

TEST_F(Ipam11Test, GcReleasesStaleAddressesThenForwardsGc) {
  ASSERT_EQ(run(env("ADD", "stale"), conf11()).rc, 0);
  json gc = conf11();
  gc["cni.dev/valid-attachments"] = json::array();
  RunResult r = run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", bin_dir_}}, gc);
  EXPECT_EQ(r.rc, 0) << r.stdout_text;
  EXPECT_EQ(commandsExceptVersion(), (std::vector<std::string>{"ADD", "DEL", "GC"}));
  EXPECT_TRUE(fake_->ports().empty());
  EXPECT_TRUE(records().empty());
}

TEST_F(Ipam11Test, CheckIsForwardedToTheDelegate) {
  RunResult add = run(env("ADD"), conf11());
  ASSERT_EQ(add.rc, 0);
  json c = conf11();
  c["prevResult"] = add.out;
  EXPECT_EQ(run(env("CHECK"), c).rc, 0);
  EXPECT_EQ(commandsExceptVersion(), (std::vector<std::string>{"ADD", "CHECK"}));
}

TEST_F(CniTest, OlderIpamIsNotSentStatusOrGc) {
  // host-local (plugins 1.1.1) speaks up to 1.0.0 and would fail either
  // verb (incompatible version), so success means it was not asked.
  EXPECT_EQ(run({{"CNI_COMMAND", "STATUS"}, {"CNI_PATH", kSystemCniPath}}, conf()).rc, 0);
  json gc = conf();
  gc["cni.dev/valid-attachments"] = json::array();
  EXPECT_EQ(run({{"CNI_COMMAND", "GC"}, {"CNI_PATH", kSystemCniPath}}, gc).rc, 0);
}

}  // namespace
}  // namespace sluice::cni::testing
