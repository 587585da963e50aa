#include "bench/node/pcap_writer.h"

#include <absl/strings/str_cat.h>

#include <cerrno>
#include <cstring>

namespace sluice::bench {
namespace {

// libpcap's file format: fields in the writer's byte order, which readers
// detect from the magic number.
constexpr uint32_t kMagicMicroseconds = 0xa1b2c3d4;
constexpr uint16_t kVersionMajor = 2, kVersionMinor = 4;
constexpr uint32_t kSnapLen = 65535;
constexpr uint32_t kLinkTypeEthernet = 1;

struct GlobalHeader {
  uint32_t magic;
  uint16_t version_major, version_minor;
  int32_t thiszone;
  uint32_t sigfigs, snaplen, network;
};
struct RecordHeader {
  uint32_t ts_sec, ts_usec, incl_len, orig_len;
};
static_assert(sizeof(GlobalHeader) == 24 && sizeof(RecordHeader) == 16);

absl::Status ioError(const std::string& what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

PcapWriter::~PcapWriter() {
  if (file_ != nullptr) std::fclose(file_);
}

absl::Status PcapWriter::open(const std::string& path) {
  if (file_ != nullptr) return absl::FailedPreconditionError("pcap writer already open");
  file_ = std::fopen(path.c_str(), "wb");
  if (file_ == nullptr) return ioError("creating", path);
  path_ = path;
  frames_ = 0;
  const GlobalHeader h{kMagicMicroseconds, kVersionMajor, kVersionMinor, 0, 0, kSnapLen, kLinkTypeEthernet};
  if (std::fwrite(&h, sizeof h, 1, file_) != 1) return ioError("writing", path);
  return absl::OkStatus();
}

absl::Status PcapWriter::write(const std::vector<uint8_t>& frame) {
  if (file_ == nullptr) return absl::FailedPreconditionError("pcap writer not open");
  if (frame.size() > kSnapLen) return absl::InvalidArgumentError("frame longer than the snap length");
  const auto len = static_cast<uint32_t>(frame.size());
  const RecordHeader r{static_cast<uint32_t>(frames_ / 1'000'000), static_cast<uint32_t>(frames_ % 1'000'000), len,
                       len};
  if (std::fwrite(&r, sizeof r, 1, file_) != 1 || std::fwrite(frame.data(), 1, frame.size(), file_) != frame.size())
    return ioError("writing", path_);
  ++frames_;
  return absl::OkStatus();
}

absl::Status PcapWriter::close() {
  if (file_ == nullptr) return absl::FailedPreconditionError("pcap writer not open");
  const int rc = std::fclose(file_);
  file_ = nullptr;
  if (rc != 0) return ioError("closing", path_);
  return absl::OkStatus();
}

}  // namespace sluice::bench
