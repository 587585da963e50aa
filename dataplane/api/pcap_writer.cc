#include "dataplane/api/pcap_writer.h"

namespace sluice {
namespace {

constexpr uint32_t kMagicNanoseconds = 0xa1b23c4d;
constexpr uint32_t kLinkTypeEthernet = 1;

struct FileHeader {
  uint32_t magic;
  uint16_t version_major;
  uint16_t version_minor;
  int32_t thiszone;
  uint32_t sigfigs;
  uint32_t snaplen;
  uint32_t linktype;
};

struct RecordHeader {
  uint32_t ts_sec;
  uint32_t ts_nsec;
  uint32_t incl_len;
  uint32_t orig_len;
};

}  // namespace

PcapWriter::PcapWriter(std::FILE* out, uint32_t snaplen) : out_(out) {
  const FileHeader h{kMagicNanoseconds, 2, 4, 0, 0, snaplen, kLinkTypeEthernet};
  ok_ = std::fwrite(&h, sizeof h, 1, out_) == 1 && std::fflush(out_) == 0;
}

bool PcapWriter::write(uint64_t time_ns, uint32_t orig_len, std::string_view data) {
  const RecordHeader r{static_cast<uint32_t>(time_ns / 1000000000U), static_cast<uint32_t>(time_ns % 1000000000U),
                       static_cast<uint32_t>(data.size()), orig_len};
  ok_ = ok_ && std::fwrite(&r, sizeof r, 1, out_) == 1 &&
        (data.empty() || std::fwrite(data.data(), data.size(), 1, out_) == 1) && std::fflush(out_) == 0;
  return ok_;
}

}  // namespace sluice
