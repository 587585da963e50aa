// Writes captured packets as a classic pcap file (nanosecond time stamps,
// Ethernet link type), what tcpdump, Wireshark and libpcap read, to a file
// or to stdout (`sluicectl capture -w - | tcpdump -r -`). CLI side.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string_view>

namespace sluice {

class PcapWriter {
 public:
  // Writes the file header; `out` stays the caller's.
  PcapWriter(std::FILE* out, uint32_t snaplen);
  // One packet; flushed at once, so that a reader of a pipe sees it now and
  // an interrupted capture leaves whole records. False on a write error.
  bool write(uint64_t time_ns, uint32_t orig_len, std::string_view data);
  bool ok() const { return ok_; }

 private:
  std::FILE* out_;
  bool ok_;
};

}  // namespace sluice
