// Writes classic libpcap files (the format net_pcap's rx_pcap reads):
// a 24-byte global header, then a 16-byte record header per frame. Set-up
// time only (the benchmark's traffic generator); no DPDK.
#pragma once

#include <absl/status/status.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace sluice::bench {

class PcapWriter {
 public:
  PcapWriter() = default;
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;
  ~PcapWriter();

  // Creates (truncates) `path` and writes the global header: microsecond
  // timestamps, Ethernet link type, snap length 65535.
  absl::Status open(const std::string& path);
  // Appends one frame (without FCS); timestamps advance 1 µs per frame.
  absl::Status write(const std::vector<uint8_t>& frame);
  // Flushes and closes; the file is complete only if this returns OK.
  absl::Status close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  uint64_t frames_ = 0;
};

}  // namespace sluice::bench
