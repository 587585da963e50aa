// DPDK vdev ports standing in for pods (the node benchmark's pcap input and
// null sinks): devargs validation, the allow-vdev-ports setting, and
// DataplaneControl creating them only when allowed (on a fake backend and
// fake PMD threads; no EAL).
#include <gtest/gtest.h>
#include <rte_kvargs.h>
#include <unistd.h>

#include <filesystem>
#include <thread>

#include "dataplane/config/config.h"
#include "dataplane/core/dataplane_control.h"
#include "dataplane/core/dpdk_port_backend.h"
#include "dataplane/core/port_request.h"
#include "dataplane/core/vdev_devargs.h"
#include "tests/support/fake_control.h"

namespace sluice {
namespace {

const Ipv4Cidr kCidr = *Ipv4Cidr::parse("10.244.0.0/16");
const Ipv4Address kGateway = *Ipv4Address::parse("10.244.0.1");

RawPortRequest vdevRequest(const std::string& id, const std::string& ip, const std::string& devargs) {
  RawPortRequest r;
  r.container_id = id;
  r.ifname = "net1";
  r.ip = ip;
  r.kind = PortKind::kDpdkVdev;
  r.devargs = devargs;
  return r;
}

const VdevPolicy kPolicy{"/var/lib/sluice/vdev", kMbufDataRoom};

TEST(VdevDevargs, AcceptsPcapInputsAndNullSinks) {
  for (const char* ok : {"net_null", "net_null,no-rx=1", "net_null,size=2048", "net_null,size=60,copy=1",
                         "net_null,copy=0,no-rx=1", "net_pcap,rx_pcap=/var/lib/sluice/vdev/l3-100.pcap,infinite_rx=1",
                         "net_pcap,rx_pcap=/var/lib/sluice/vdev/run.1/in.pcap"}) {
    EXPECT_TRUE(validateVdevDevargs(ok, kPolicy).ok()) << ok << ": " << validateVdevDevargs(ok, kPolicy);
    // DPDK's parser reads every accepted argument list as it was validated.
    EXPECT_TRUE(checkDpdkReadsVdevArgs(ok).ok()) << ok;
  }
  EXPECT_EQ(vdevPolicyFor("/var/lib/sluice/").pcap_dir, "/var/lib/sluice/vdev");
  EXPECT_EQ(vdevPolicyFor("/srv/state").max_packet_bytes, 2048u);
}

TEST(VdevDevargs, RefusesOtherDriversKeysAndCharacters) {
  auto code = [](const std::string& d) { return validateVdevDevargs(d, kPolicy).code(); };
  const auto invalid = absl::StatusCode::kInvalidArgument;
  EXPECT_EQ(code(""), invalid);
  EXPECT_EQ(code("net_tap,iface=eth0"), invalid);         // opens an interface
  EXPECT_EQ(code("net_pcap,tx_pcap=/etc/shadow"), invalid);  // writes a file
  EXPECT_EQ(code("net_pcap,iface=eth0"), invalid);
  EXPECT_EQ(code("net_null,no-rx"), invalid);              // not key=value
  EXPECT_EQ(code("net_null,=1"), invalid);
  EXPECT_EQ(code("net_null,no-rx="), invalid);
  EXPECT_EQ(code("net_null,no-rx=1 x"), invalid);
  EXPECT_EQ(code("net_pcap,rx_pcap=/var/lib/sluice/vdev/a;b"), invalid);
  EXPECT_EQ(code("net_null" + std::string(600, 'x')), invalid);
  EXPECT_EQ(validateVdevDevargs("net_tap,iface=eth0", kPolicy).message(),
            "devargs: driver 'net_tap' is not net_pcap or net_null");
}

// DPDK ends a key at every '=' (the key is the text before the last one):
// what sluiced once validated as rx_pcap=<something> reached net_pcap as
// tx_pcap (truncating a host file) or iface (opening a host NIC).
TEST(VdevDevargs, DpdkReadsTheKeyBeforeTheLastEquals) {
  rte_kvargs* kv = rte_kvargs_parse("rx_pcap=tx_pcap=/any/file", nullptr);
  ASSERT_NE(kv, nullptr);
  ASSERT_EQ(kv->count, 1u);
  EXPECT_STREQ(kv->pairs[0].key, "tx_pcap");
  EXPECT_STREQ(kv->pairs[0].value, "/any/file");
  rte_kvargs_free(kv);

  for (const char* hidden : {"net_pcap,rx_pcap=tx_pcap=/var/lib/sluice/vdev/f",
                             "net_pcap,rx_pcap=iface=eth0", "net_null,no-rx=size=100000"}) {
    const absl::Status s = validateVdevDevargs(hidden, kPolicy);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << hidden;
    EXPECT_NE(s.message().find("with one '='"), std::string::npos) << s;
    EXPECT_EQ(checkDpdkReadsVdevArgs(hidden).code(), absl::StatusCode::kInvalidArgument) << hidden;
  }
}

TEST(VdevDevargs, PcapFilesLieBelowThePcapDirectory) {
  auto message = [](const std::string& d) { return std::string(validateVdevDevargs(d, kPolicy).message()); };
  EXPECT_EQ(message("net_pcap,rx_pcap=/tmp/sluice-nodebench.x/l3-100.pcap"),
            "devargs: rx_pcap must be a file below /var/lib/sluice/vdev, not '/tmp/sluice-nodebench.x/l3-100.pcap'");
  EXPECT_EQ(message("net_pcap,rx_pcap=/var/lib/sluice/vdev/../checkpoint.json"),
            "devargs: rx_pcap '/var/lib/sluice/vdev/../checkpoint.json' has an empty, '.' or '..' component");
  for (const char* bad : {"net_pcap,rx_pcap=/var/lib/sluice/vdev", "net_pcap,rx_pcap=/var/lib/sluice/vdev/",
                          "net_pcap,rx_pcap=/var/lib/sluice/vdevx/f", "net_pcap,rx_pcap=/var/lib/sluice/vdev//f",
                          "net_pcap,rx_pcap=/var/lib/sluice/vdev/./f", "net_pcap,rx_pcap=vdev/f",
                          "net_pcap,infinite_rx=1",  // no input at all
                          "net_pcap,rx_pcap=/var/lib/sluice/vdev/a,rx_pcap=/var/lib/sluice/vdev/b",
                          "net_pcap,rx_pcap=/var/lib/sluice/vdev/a,infinite_rx=2"})
    EXPECT_EQ(validateVdevDevargs(bad, kPolicy).code(), absl::StatusCode::kInvalidArgument) << bad;
  // Without a directory no pcap file is allowed at all.
  EXPECT_EQ(std::string(validateVdevDevargs("net_pcap,rx_pcap=/f", VdevPolicy{}).message()),
            "devargs: rx_pcap: no pcap directory is configured");
}

TEST(VdevDevargs, NullPacketsFitAnMbuf) {
  EXPECT_EQ(std::string(validateVdevDevargs("net_null,copy=1,size=100000", kPolicy).message()),
            "devargs: size must be a decimal 1..2048 (the bytes an mbuf holds), not '100000'");
  // strtoul(value, NULL, 0) would read these as hex, octal or a wrapped negative.
  for (const char* bad : {"net_null,size=2049", "net_null,size=0", "net_null,size=0x800", "net_null,size=010",
                          "net_null,size=-1", "net_null,size=4294967297", "net_null,size=64,size=64",
                          "net_null,copy=1,no-rx=1", "net_null,copy=yes", "net_null,,no-rx=1", "net_null,no-rx=1,",
                          "net_null,size=[1,2]"})
    EXPECT_EQ(validateVdevDevargs(bad, kPolicy).code(), absl::StatusCode::kInvalidArgument) << bad;
}

TEST(VdevPortRequest, CarriesDevargsOnlyForVdevPorts) {
  auto req = parsePortRequest(vdevRequest("nb-pod0", "10.244.1.10", "net_null,no-rx=1"), kCidr, kGateway);
  ASSERT_TRUE(req.ok()) << req.status();
  EXPECT_EQ(req->kind, PortKind::kDpdkVdev);
  EXPECT_EQ(req->devargs, "net_null,no-rx=1");

  RawPortRequest vhost = vdevRequest("nb-pod0", "10.244.1.10", "net_null");
  vhost.kind = PortKind::kVhostUser;
  EXPECT_EQ(parsePortRequest(vhost, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument);

  RawPortRequest with_subdir = vdevRequest("nb-pod0", "10.244.1.10", "net_null");
  with_subdir.socket_subdir = "pod";
  EXPECT_EQ(parsePortRequest(with_subdir, kCidr, kGateway).status().code(), absl::StatusCode::kInvalidArgument);
  // The usual checks still apply.
  EXPECT_EQ(parsePortRequest(vdevRequest("nb-pod0", "10.99.1.10", "net_null"), kCidr, kGateway).status().code(),
            absl::StatusCode::kFailedPrecondition);

  auto other = parsePortRequest(vdevRequest("nb-pod0", "10.244.1.10", "net_null"), kCidr, kGateway);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(req->sameParameters(*other));
}

TEST(VdevConfig, AllowVdevPortsIsOffUnlessSet) {
  EXPECT_FALSE(SluicedConfig{}.allow_vdev_ports);
  auto on = applyConfigJson(R"({"allow-vdev-ports": true})", SluicedConfig{});
  ASSERT_TRUE(on.ok()) << on.status();
  EXPECT_TRUE(on->allow_vdev_ports);
  const char* argv[] = {"sluiced", "--allow-vdev-ports", "true"};
  auto flag = parseSluicedConfig(3, argv);
  ASSERT_TRUE(flag.ok()) << flag.status();
  EXPECT_TRUE(flag->allow_vdev_ports);
  auto bad = applyConfigJson(R"({"allow-vdev-ports": "yes"})", SluicedConfig{});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("allow-vdev-ports"), std::string::npos);
}

class RecordingBackend : public PortBackend {
 public:
  absl::StatusOr<CreatedPort> createVhostUser(uint16_t, const std::string& socket_path, bool, uint16_t) override {
    vhost.push_back(socket_path);
    return CreatedPort{next++, "vhost", 1};
  }
  absl::StatusOr<CreatedPort> createVdev(uint16_t port_no, const std::string& devargs) override {
    vdevs.push_back(devargs);
    return CreatedPort{next++, "vdev" + std::to_string(port_no), 1};
  }
  void destroy(const CreatedPort& port) override { destroyed.push_back(port.dpdk_name); }
  bool linkUp(const CreatedPort&) override { return true; }

  uint16_t next = 0;
  std::vector<std::string> vhost, vdevs, destroyed;
};

// One fake PMD that acknowledges every snapshot (as Pmd::run's hand-over).
class VdevControlTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/vdev-control-" + std::to_string(::getpid());
    std::filesystem::create_directories(dir_);
    config_.socket_dir = dir_;
    config_.state_dir = dir_ + "/state";
    config_.pod_cidr = kCidr;
    config_.gateway = kGateway;
    config_.max_ports = 4;
    config_.allow_vdev_ports = GetParam();
    control_ = std::make_unique<DataplaneControl>(config_, backend_, std::vector<PmdContext*>{&pmd_.context},
                                                  2'600'000'000);
    control_->start();
    pmd_.start();
  }
  void TearDown() override {
    control_->removeAllPorts();
    pmd_.stop();
    std::filesystem::remove_all(dir_);
  }

  std::string dir_;
  SluicedConfig config_;
  RecordingBackend backend_;
  test::AckingPmd pmd_;
  std::unique_ptr<DataplaneControl> control_;
};

TEST_P(VdevControlTest, CreatesVdevPortsOnlyWhenAllowed) {
  auto added = control_->addPort(vdevRequest("nb-pod0", "10.244.1.10", "net_null,no-rx=1"));
  if (!GetParam()) {
    EXPECT_EQ(added.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(backend_.vdevs.empty());
    EXPECT_TRUE(control_->listPorts().empty());
    return;
  }
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_TRUE(added->created);
  EXPECT_EQ(backend_.vdevs, std::vector<std::string>{"net_null,no-rx=1"});
  EXPECT_TRUE(backend_.vhost.empty());
  EXPECT_EQ(added->port.socket_path, "");
  EXPECT_EQ(added->port.request.devargs, "net_null,no-rx=1");
  // Idempotent like any port; other devargs for the same attachment conflict.
  EXPECT_FALSE(control_->addPort(vdevRequest("nb-pod0", "10.244.1.10", "net_null,no-rx=1"))->created);
  EXPECT_EQ(control_->addPort(vdevRequest("nb-pod0", "10.244.1.10", "net_null")).status().code(),
            absl::StatusCode::kAlreadyExists);
  ASSERT_TRUE(control_->deletePort({"nb-pod0", "net1"}).value());
  EXPECT_EQ(backend_.destroyed, std::vector<std::string>{"vdev0"});
}

// The pcap directory is <state-dir>/vdev: anything else never reaches the backend.
TEST_P(VdevControlTest, ReadsPcapFilesOnlyBelowTheStateDirectory) {
  const std::string inside = "net_pcap,rx_pcap=" + config_.state_dir + "/vdev/in.pcap,infinite_rx=1";
  auto outside = control_->addPort(vdevRequest("nb-src", "10.244.1.11", "net_pcap,rx_pcap=/etc/shadow"));
  EXPECT_EQ(outside.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(outside.status().message(),
            "devargs: rx_pcap must be a file below " + config_.state_dir + "/vdev, not '/etc/shadow'");
  EXPECT_EQ(control_->addPort(vdevRequest("nb-src", "10.244.1.11", "net_null,size=4096")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(backend_.vdevs.empty());
  auto added = control_->addPort(vdevRequest("nb-src", "10.244.1.11", inside));
  if (!GetParam()) {
    EXPECT_EQ(added.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(backend_.vdevs.empty());
    return;
  }
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(backend_.vdevs, std::vector<std::string>{inside});
}

INSTANTIATE_TEST_SUITE_P(AllowVdevPorts, VdevControlTest, ::testing::Bool());

}  // namespace
}  // namespace sluice
