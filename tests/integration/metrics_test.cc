// sluiced's Prometheus endpoint against the real consumers: traffic through a
// real sluiced (two virtio pods), then `promtool check metrics` on the page it
// serves, and a real Prometheus (Debian's package) scraping it every second,
// whose HTTP API must return the values `sluicectl --json stats` shows. Then
// the endpoint's exposure: loopback by default, an allow-list, stalled
// clients, pod labels opt-in, and a port taken at start.
#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tests/integration/sluiced_process.h"
#include "tests/integration/virtio_pod.h"

namespace sluice::test {
namespace {

constexpr char kPrometheus[] = "/usr/bin/prometheus";
constexpr char kPromtool[] = "/usr/bin/promtool";

const Ipv4Address kIpA = *Ipv4Address::parse("10.250.0.10");
const Ipv4Address kIpB = *Ipv4Address::parse("10.250.0.11");
const Ipv4Address kGateway = *Ipv4Address::parse("10.250.0.1");

// A TCP port on loopback that nothing listens on now (the kernel's pick).
uint16_t freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    return 0;
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

struct HttpReply {
  int status = 0;
  std::string body;
};

// GET over HTTP/1.0 on loopback; status 0 when nothing answered.
HttpReply httpGet(uint16_t port, const std::string& target) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  HttpReply r;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    ::close(fd);
    return r;
  }
  const std::string req = "GET " + target + " HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  (void)::send(fd, req.data(), req.size(), MSG_NOSIGNAL);
  std::string all;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) all.append(buf, static_cast<size_t>(n));
  ::close(fd);
  const size_t sp = all.find(' ');
  const size_t body = all.find("\r\n\r\n");
  if (sp == std::string::npos || body == std::string::npos) return r;
  r.status = std::atoi(all.c_str() + sp + 1);
  r.body = all.substr(body + 4);
  return r;
}

std::string urlEncode(const std::string& s) {
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      char hex[4];
      std::snprintf(hex, sizeof hex, "%%%02X", c);
      out += hex;
    }
  }
  return out;
}

// A child process of ours (promtool, prometheus) with output to `log`.
pid_t spawn(const std::vector<std::string>& argv, const std::string& log, const std::string& stdin_file = "") {
  pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* out = std::fopen(log.c_str(), "w");
    if (out != nullptr) {
      ::dup2(fileno(out), 1);
      ::dup2(fileno(out), 2);
    }
    if (!stdin_file.empty()) {
      std::FILE* in = std::fopen(stdin_file.c_str(), "r");
      if (in != nullptr) ::dup2(fileno(in), 0);
    }
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

// A series as "name{label="value",...}" with the labels sorted and without
// the ones Prometheus adds (instance, job).
std::string seriesKey(const nlohmann::json& metric) {
  std::map<std::string, std::string> labels;
  std::string name;
  for (const auto& [k, v] : metric.items()) {
    if (k == "__name__") name = v.get<std::string>();
    else if (k != "instance" && k != "job") labels[k] = v.get<std::string>();
  }
  std::string key = name + "{";
  for (const auto& [k, v] : labels) key += k + "=\"" + v + "\",";
  return key + "}";
}

std::string key(const std::string& name, std::map<std::string, std::string> labels) {
  std::string k = name + "{";
  for (const auto& [l, v] : labels)
    if (!v.empty()) k += l + "=\"" + v + "\",";  // Prometheus drops empty labels
  return k + "}";
}

class MetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(std::filesystem::exists(kPrometheus) && std::filesystem::exists(kPromtool))
        << "Debian's prometheus package is missing (scripts/setup.sh installs it)";
    metrics_port_ = freePort();
    ASSERT_NE(metrics_port_, 0);
    SluicedOptions o;
    o.extra_flags = {"--metrics-address",       "127.0.0.1", "--metrics-port",       std::to_string(metrics_port_),
                     "--metrics-allowed-cidrs", "127.0.0.1/32", "--metrics-pod-labels", "true"};
    std::string error;
    node_ = SluicedProcess::start(o, &error);
    ASSERT_NE(node_, nullptr) << error;
    dir_ = node_->dir() + "/prom";
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (prometheus_ > 0) {
      ::kill(prometheus_, SIGTERM);
      int status = 0;
      ::waitpid(prometheus_, &status, 0);
    }
    pod_a_.reset();
    pod_b_.reset();
    if (node_) {
      EXPECT_EQ(node_->stop(), 0) << node_->log();
    }
  }

  std::unique_ptr<SluicedProcess> node_;
  std::unique_ptr<VirtioPod> pod_a_, pod_b_;
  uint16_t metrics_port_ = 0;
  std::string dir_;
  pid_t prometheus_ = -1;
};

TEST_F(MetricsTest, PrometheusScrapesWhatSluicectlShows) {
  v1::AddPortResponse a, b;
  ASSERT_TRUE(node_->addPort(portRequest("pod-a", kIpA.toString()), &a).ok());
  ASSERT_TRUE(node_->addPort(portRequest("pod-b", kIpB.toString()), &b).ok());
  auto pa = VirtioPod::create(a.port().socket_path(), false, podPool());
  auto pb = VirtioPod::create(b.port().socket_path(), false, podPool());
  ASSERT_TRUE(pa.ok() && pb.ok());
  pod_a_ = std::move(*pa);
  pod_b_ = std::move(*pb);
  ASSERT_TRUE(node_->waitLinkUp(a.port().port_no()) && node_->waitLinkUp(b.port().port_no())) << node_->log();

  // 500 packets A -> B in 5 flows, and 7 with TTL 1 (dropped: ttl_exceeded,
  // each answered with an 88-byte ICMP Time Exceeded back to A).
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 507; ++i) {
    UdpFrameSpec s{MacAddress::fromIpv4(kIpA), MacAddress::fromIpv4(kGateway), kIpA, kIpB};
    s.ttl = i < 500 ? 64 : 1;
    s.sequence = i;
    s.src_port = static_cast<uint16_t>(2000 + i % 5);
    frames.push_back(udpFrame(s));
  }
  ASSERT_EQ(pod_a_->send(frames), frames.size());
  ASSERT_EQ(pod_b_->receive(500).size(), 500u);
  // The traffic has stopped: wait until the counters show all of it.
  auto txBytes = [&](const v1::GetStatsResponse& st, uint32_t port_no) {
    for (const v1::PortStats& p : st.ports())
      if (p.port_no() == port_no) return p.tx_bytes();
    return uint64_t{0};
  };
  ASSERT_TRUE(waitFor([&] {
    const v1::GetStatsResponse st = node_->stats();
    return dropCount(st, "ttl_exceeded") == 7 && txBytes(st, a.port().port_no()) == 7 * 88;
  })) << node_->log();
  // The ports' byte counters (their driver's): 60-byte frames, 507 from A,
  // 500 routed to B (same length), the 7 errors to A, nothing from B.
  {
    v1::GetStatsResponse st = node_->stats();
    std::map<uint32_t, std::pair<uint64_t, uint64_t>> bytes;
    for (const v1::PortStats& p : st.ports()) bytes[p.port_no()] = {p.rx_bytes(), p.tx_bytes()};
    EXPECT_EQ(bytes[a.port().port_no()], std::make_pair(uint64_t{507 * 60}, uint64_t{7 * 88}));
    EXPECT_EQ(bytes[b.port().port_no()], std::make_pair(uint64_t{0}, uint64_t{500 * 60}));
  }

  // promtool's lint of the page as served.
  HttpReply page = httpGet(metrics_port_, "/metrics");
  ASSERT_EQ(page.status, 200);
  { std::ofstream(dir_ + "/page.txt") << page.body; }
  pid_t lint = spawn({kPromtool, "check", "metrics"}, dir_ + "/promtool.log", dir_ + "/page.txt");
  int status = 0;
  ::waitpid(lint, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << slurp(dir_ + "/promtool.log");
  EXPECT_EQ(httpGet(metrics_port_, "/nothing").status, 404);

  // A Prometheus of our own: temp config and storage, a free port, 1 s scrapes.
  const uint16_t prom_port = freePort();
  {
    std::ofstream cfg(dir_ + "/prometheus.yml");
    cfg << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        << "scrape_configs:\n  - job_name: sluiced\n    static_configs:\n      - targets: ['127.0.0.1:" << metrics_port_
        << "']\n";
  }
  prometheus_ = spawn({kPrometheus, "--config.file=" + dir_ + "/prometheus.yml", "--storage.tsdb.path=" + dir_ + "/data",
                       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port)},
                      dir_ + "/prometheus.log");
  ASSERT_TRUE(waitFor(
      [&] {
        HttpReply r = httpGet(prom_port, "/api/v1/targets");
        if (r.status != 200) return false;
        auto j = nlohmann::json::parse(r.body, nullptr, false);
        return !j.is_discarded() && j["data"]["activeTargets"].size() == 1 &&
               j["data"]["activeTargets"][0]["health"] == "up";
      },
      std::chrono::seconds(60)))
      << slurp(dir_ + "/prometheus.log");

  // What sluicectl shows, field by field, as Prometheus should hold it.
  CommandResult ctl = sluicectl(node_->apiSocket(), "--json stats");
  ASSERT_EQ(ctl.exit_code, 0) << ctl.output;
  const nlohmann::json stats = nlohmann::json::parse(ctl.output);
  std::map<std::string, std::string> expected;
  for (const auto& pmd : stats["pmds"]) {
    const std::map<std::string, std::string> labels = {{"pmd", std::to_string(pmd["index"].get<int>())},
                                                       {"lcore", std::to_string(pmd["lcore"].get<int>())}};
    for (const auto& [field, value] : pmd.items()) {
      // Time moves these while no packet does (megaflows expire, and an
      // idle rx queue's polls go on and it turns idle after many of them);
      // numa_socket is a gauge of its own.
      if (field == "index" || field == "lcore" || field.find("cycles") != std::string::npos || field == "sleeps" ||
          field == "megaflows" || field == "numa_socket" ||
          field.rfind("rxq_", 0) == 0)
        continue;
      expected[key("sluice_pmd_" + field + "_total", labels)] = value.get<std::string>();
    }
  }
  std::map<uint32_t, const v1::Port*> pods;
  v1::ListPortsResponse listed = node_->ports();
  for (const v1::Port& p : listed.ports()) pods[p.port_no()] = &p;
  for (const auto& port : stats["ports"]) {
    const v1::Port* p = pods.at(port["port_no"].get<uint32_t>());
    const std::map<std::string, std::string> labels = {{"port", std::to_string(p->port_no())},
                                                       {"namespace", p->pod_namespace()},
                                                       {"pod", p->pod_name()},
                                                       {"interface", p->attachment().ifname()}};
    for (const char* f : {"rx_packets", "tx_packets", "rx_dropped", "tx_dropped", "rx_bytes", "tx_bytes"})
      expected[key(std::string("sluice_port_") + f + "_total", labels)] = port[f].get<std::string>();
  }
  for (const auto& q : stats["rx_queues"]) {
    const v1::Port* p = pods.at(q["port_no"].get<uint32_t>());
    const std::map<std::string, std::string> labels = {{"port", std::to_string(p->port_no())},
                                                       {"queue", std::to_string(q["queue"].get<uint32_t>())},
                                                       {"namespace", p->pod_namespace()},
                                                       {"pod", p->pod_name()},
                                                       {"interface", p->attachment().ifname()}};
    expected[key("sluice_rx_queue_packets_total", labels)] = q["packets"].get<std::string>();
    expected[key("sluice_rx_queue_pmd", labels)] = std::to_string(q["pmd"].get<uint32_t>());
  }
  for (const auto& d : stats["drops"])
    expected[key("sluice_drops_total", {{"reason", d["reason"].get<std::string>()}})] = d["packets"].get<std::string>();
  // Every PMD counter but the time-driven ones, 4 per port, every drop reason.
  EXPECT_GE(expected.size(), 15u + 2 * 4 + 20u);
  // The figures this traffic must have made, as a check on the check.
  EXPECT_EQ(expected.at(key("sluice_pmd_packets_total", {{"pmd", "0"}, {"lcore", "1"}})), "507");
  EXPECT_EQ(expected.at(key("sluice_drops_total", {{"reason", "ttl_exceeded"}})), "7");
  EXPECT_EQ(expected.at(key("sluice_pmd_icmp_errors_sent_total", {{"pmd", "0"}, {"lcore", "1"}})), "7");
  EXPECT_EQ(expected.at(key("sluice_port_rx_packets_total", {{"port", std::to_string(a.port().port_no())},
                                                              {"namespace", "default"},
                                                              {"pod", "pod-pod-a"},
                                                              {"interface", "net1"}})),
            "507");
  EXPECT_EQ(expected.at(key("sluice_rx_queue_packets_total", {{"port", std::to_string(a.port().port_no())},
                                                                {"queue", "0"},
                                                                {"namespace", "default"},
                                                                {"pod", "pod-pod-a"},
                                                                {"interface", "net1"}})),
            "507");

  // Prometheus's newest samples until they all agree (a scrape taken before
  // the traffic's last counters reached the snapshot would not).
  std::map<std::string, std::string> got;
  std::string last_body;
  const bool agreed = waitFor(
      [&] {
        HttpReply r = httpGet(prom_port, "/api/v1/query?query=" + urlEncode("{__name__=~\"sluice_.+\"}"));
        last_body = r.body;
        auto j = nlohmann::json::parse(r.body, nullptr, false);
        if (r.status != 200 || j.is_discarded() || j["status"] != "success") return false;
        got.clear();
        for (const auto& s : j["data"]["result"]) got[seriesKey(s["metric"])] = s["value"][1].get<std::string>();
        for (const auto& [k, v] : expected) {
          auto it = got.find(k);
          if (it == got.end() || it->second != v) return false;
        }
        return true;
      },
      std::chrono::seconds(30));
  for (const auto& [k, v] : expected) {
    auto it = got.find(k);
    EXPECT_TRUE(it != got.end() && it->second == v)
        << k << ": sluicectl " << v << ", Prometheus " << (it == got.end() ? "(absent)" : it->second);
  }
  EXPECT_TRUE(agreed) << last_body.substr(0, 2000);
  // Series of their own, present through Prometheus too.
  EXPECT_EQ(got[key("sluice_ready", {})], "1");
  EXPECT_EQ(got[key("sluice_ports", {})], "2");
  EXPECT_NE(got.find(key("sluice_grpc_server_handled_total",
                         {{"grpc_method", "/sluice.v1.Dataplane/AddPort"}, {"grpc_code", "OK"}})),
            got.end());
  EXPECT_EQ(got[key("sluice_grpc_server_handled_total",
                    {{"grpc_method", "/sluice.v1.Dataplane/AddPort"}, {"grpc_code", "OK"}})],
            "2");
}

// A sluiced with the metrics endpoint on a free port and `flags` besides.
std::unique_ptr<SluicedProcess> startWithMetrics(uint16_t port, std::vector<std::string> flags, std::string* error) {
  SluicedOptions o;
  o.extra_flags = {"--metrics-port", std::to_string(port)};
  o.extra_flags.insert(o.extra_flags.end(), flags.begin(), flags.end());
  return SluicedProcess::start(o, error);
}

// An IPv4 address of this host other than loopback (empty: none).
std::string nonLoopbackAddress() {
  ifaddrs* all = nullptr;
  if (::getifaddrs(&all) != 0) return "";
  std::string found;
  for (ifaddrs* i = all; i != nullptr && found.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    const auto* a = reinterpret_cast<const sockaddr_in*>(i->ifa_addr);
    if ((ntohl(a->sin_addr.s_addr) >> 24) == 127) continue;
    char text[INET_ADDRSTRLEN];
    ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
    found = text;
  }
  ::freeifaddrs(all);
  return found;
}

// Whether a TCP connection to address:port is accepted.
bool accepts(const std::string& address, uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  ::inet_pton(AF_INET, address.c_str(), &a.sin_addr);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  ::close(fd);
  return ok;
}

TEST(MetricsExposure, DefaultListensOnLoopbackOnly) {
  const std::string outside = nonLoopbackAddress();
  if (outside.empty()) GTEST_SKIP() << "this host has no IPv4 address but loopback";
  const uint16_t port = freePort();
  std::string error;
  auto node = startWithMetrics(port, {}, &error);
  ASSERT_NE(node, nullptr) << error;
  EXPECT_EQ(httpGet(port, "/metrics").status, 200) << node->log();
  EXPECT_FALSE(accepts(outside, port)) << "the metrics endpoint answers on " << outside;
  EXPECT_EQ(node->stop(), 0) << node->log();
}

TEST(MetricsExposure, PeersOutsideTheAllowListAreForbidden) {
  const uint16_t port = freePort();
  std::string error;
  auto node = startWithMetrics(port, {"--metrics-allowed-cidrs", "192.0.2.0/24, 198.51.100.7/32"}, &error);
  ASSERT_NE(node, nullptr) << error;
  const HttpReply r = httpGet(port, "/metrics");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(r.body, "forbidden: this address is not in sluiced's metrics-allowed-cidrs\n");
  EXPECT_EQ(node->stop(), 0) << node->log();
  // A malformed list stops sluiced with the key named (exit 2), before anything listens.
  CommandResult bad = runShell(std::string(SLUICED_PATH) + " --metrics-allowed-cidrs 10.0.0.1/8 2>&1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("metrics-allowed-cidrs: '10.0.0.1/8' is not an IPv4 CIDR"), std::string::npos)
      << bad.output;
}

// Clients that connect and never finish their request hold a worker each;
// a scrape must still be answered while they do (not only once the server
// gives up on them).
TEST(MetricsExposure, StalledClientsDoNotBlockAScrape) {
  const uint16_t port = freePort();
  std::string error;
  auto node = startWithMetrics(port, {}, &error);
  ASSERT_NE(node, nullptr) << error;
  std::vector<int> stalled;
  for (int i = 0; i < 2; ++i) {
    int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    ASSERT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL), static_cast<ssize_t>(partial.size()));
    stalled.push_back(fd);
  }
  const HttpReply r = httpGet(port, "/metrics");
  EXPECT_EQ(r.status, 200);
  // Both stalled clients are still connected and unanswered: the scrape
  // did not wait for the server to drop them.
  for (int fd : stalled) {
    char byte;
    EXPECT_EQ(::recv(fd, &byte, 1, MSG_DONTWAIT), -1);
    EXPECT_EQ(errno, EAGAIN);
    ::close(fd);
  }
  EXPECT_EQ(node->stop(), 0) << node->log();
}

TEST(MetricsExposure, PodLabelsOnlyWhenEnabled) {
  for (const bool enabled : {false, true}) {
    SCOPED_TRACE(enabled ? "metrics-pod-labels true" : "default");
    const uint16_t port = freePort();
    std::string error;
    auto node = startWithMetrics(
        port, enabled ? std::vector<std::string>{"--metrics-pod-labels", "true"} : std::vector<std::string>{}, &error);
    ASSERT_NE(node, nullptr) << error;
    v1::AddPortResponse a;
    ASSERT_TRUE(node->addPort(portRequest("pod-a", kIpA.toString()), &a).ok());
    const std::string port_no = std::to_string(a.port().port_no());
    const HttpReply r = httpGet(port, "/metrics");
    ASSERT_EQ(r.status, 200);
    const std::string with_pod = "sluice_port_rx_packets_total{port=\"" + port_no +
                                 "\",namespace=\"default\",pod=\"pod-pod-a\",interface=\"net1\"} 0\n";
    const std::string without_pod = "sluice_port_rx_packets_total{port=\"" + port_no + "\",interface=\"net1\"} 0\n";
    if (enabled) {
      EXPECT_NE(r.body.find(with_pod), std::string::npos) << r.body;
    } else {
      EXPECT_NE(r.body.find(without_pod), std::string::npos) << r.body;
      EXPECT_EQ(r.body.find("pod-pod-a"), std::string::npos);
      EXPECT_EQ(r.body.find("namespace="), std::string::npos);
    }
    EXPECT_EQ(node->stop(), 0) << node->log();
  }
}

// Another process holds the port when sluiced starts: sluiced serves its
// API anyway, and the endpoint comes up once the port frees.
TEST(MetricsExposure, PortTakenAtStartIsRetriedWhileTheNodeServes) {
  // Close-on-exec: sluiced, forked from this process, must not inherit it.
  int holder = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ASSERT_EQ(::bind(holder, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(holder, 1), 0);
  ASSERT_EQ(::getsockname(holder, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const uint16_t port = ntohs(a.sin_port);
  std::string error;
  auto node = startWithMetrics(port, {}, &error);
  ASSERT_NE(node, nullptr) << error;
  EXPECT_TRUE(node->health().ready());
  v1::AddPortResponse added;
  EXPECT_TRUE(node->addPort(portRequest("pod-a", kIpA.toString()), &added).ok());
  EXPECT_NE(node->log().find("metrics endpoint: cannot listen on 127.0.0.1:" + std::to_string(port)),
            std::string::npos)
      << node->log();
  ::close(holder);
  HttpReply r;
  EXPECT_TRUE(waitFor([&] {
    r = httpGet(port, "/metrics");
    return r.status == 200;
  }))
      << node->log();
  EXPECT_EQ(r.body.find("sluice_metrics_bind_failures_total 0\n"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("sluice_metrics_bind_failures_total "), std::string::npos) << r.body;
  EXPECT_EQ(node->stop(), 0) << node->log();
}

}  // namespace
}  // namespace sluice::test
