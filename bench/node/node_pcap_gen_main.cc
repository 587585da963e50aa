// node_pcap_gen: writes the node benchmark's traffic for one scenario and
// flow count as a pcap file (replayed by net_pcap with infinite_rx=1 into
// every dataplane under test), or prints the addressing plan the benchmark
// scripts configure the dataplanes from. Run by bench/node/node_bench.sh.
//
//   node_pcap_gen --scenario l3|l3v6|decap|encap --flows N --out FILE [--frame-size BYTES]
//   node_pcap_gen --plan
// --frame-size: the l3 scenario's frame length in the file (no FCS),
// 60 (the default, 64 on the wire) up to 9014 (a 9000-byte IP packet).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "bench/node/node_traffic.h"
#include "bench/node/pcap_writer.h"

namespace {

int usage(const char* why) {
  std::fprintf(stderr,
               "node_pcap_gen: %s\nusage: node_pcap_gen --scenario l3|l3v6|decap|encap --flows N --out FILE"
               " [--frame-size BYTES]\n"
               "       node_pcap_gen --plan\n",
               why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace sluice::bench;
  std::optional<Scenario> scenario;
  long long flows = -1;
  long long frame_len = kMinL3FrameLen;
  std::string out;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--plan") {
      std::fputs(describePlan().c_str(), stdout);
      return 0;
    }
    if (i + 1 >= argc) return usage("missing value");
    const char* value = argv[++i];
    if (arg == "--scenario") {
      scenario = parseScenario(value);
      if (!scenario) return usage("unknown scenario");
    } else if (arg == "--flows") {
      char* end = nullptr;
      flows = std::strtoll(value, &end, 10);
      if (end == value || *end != '\0' || flows < 1 || flows > kMaxFlows) return usage("--flows must be 1..1000000");
    } else if (arg == "--frame-size") {
      char* end = nullptr;
      frame_len = std::strtoll(value, &end, 10);
      if (end == value || *end != '\0' || frame_len < kMinL3FrameLen || frame_len > kMaxL3FrameLen)
        return usage("--frame-size must be 60..9014");
    } else if (arg == "--out") {
      out = value;
    } else {
      return usage("unknown option");
    }
  }
  if (!scenario || flows < 1 || out.empty()) return usage("--scenario, --flows and --out are required");
  if (frame_len != kMinL3FrameLen && *scenario != Scenario::kL3) return usage("--frame-size: the l3 scenario only");

  PcapWriter w;
  if (auto s = w.open(out); !s.ok()) {
    std::fprintf(stderr, "node_pcap_gen: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  const auto n = static_cast<uint32_t>(flows);
  const uint32_t packets = packetsForFlows(n);
  // Each flow's frame is built once; rounds after the first repeat them.
  std::vector<sluice::test::Frame> frames;
  frames.reserve(n);
  for (uint32_t f = 0; f < n; ++f) frames.push_back(flowFrame(*scenario, f, static_cast<uint32_t>(frame_len)));
  for (uint32_t p = 0; p < packets; ++p) {
    if (auto s = w.write(frames[p % n]); !s.ok()) {
      std::fprintf(stderr, "node_pcap_gen: %s\n", std::string(s.message()).c_str());
      return 1;
    }
  }
  if (auto s = w.close(); !s.ok()) {
    std::fprintf(stderr, "node_pcap_gen: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::fprintf(stderr, "node_pcap_gen: %u packets (%u flows) -> %s\n", packets, n, out.c_str());
  return 0;
}
