// sluiced's Prometheus endpoint against the real consumers: traffic through a
// real sluiced (two virtio pods), then `promtool check metrics` on the page it
// serves, and a real Prometheus (Debian's package) scraping it every second,
// whose HTTP API must return the values `sluicectl --json stats` shows.
#include <arpa/inet.h>
#include <gtest/gtest.h>
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
    o.extra_flags = {"--metrics-address", "127.0.0.1", "--metrics-port", std::to_string(metrics_port_)};
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

}  // namespace
}  // namespace sluice::test
