// See attachment_store.h.
#include "cni-plugin/attachment_store.h"

#include <filesystem>
#include <system_error>

#include <nlohmann/json.hpp>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/file_util.h"

namespace sluice::cni {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::optional<AttachmentRecord> decode(const std::string& text) {
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  AttachmentRecord r;
  auto str = [&doc](const char* key) {
    auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  r.container_id = str("containerID");
  r.ifname = str("ifname");
  r.ip = str("ip");
  r.socket_subdir = str("socketSubdir");
  r.device_info_file = str("deviceInfoFile");
  r.netns = str("netns");
  r.vf_host_name = str("vfHostName");
  r.vf_host_mac = str("vfHostMac");
  if (auto it = doc.find("vfHostMtu"); it != doc.end() && it->is_number_unsigned()) {
    r.vf_host_mtu = it->get<uint32_t>();
  }
  if (r.container_id.empty() || r.ifname.empty()) return std::nullopt;
  return r;
}

// Records of one network directory; unreadable entries are skipped (a
// half-written temp file of a concurrent ADD is not a record).
std::vector<AttachmentRecord> readDir(const fs::path& dir) {
  std::vector<AttachmentRecord> out;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find(".tmp.") != std::string::npos || !entry.is_regular_file(ec)) continue;
    absl::StatusOr<std::string> text = readFile(entry.path().string());
    if (!text.ok()) continue;
    if (std::optional<AttachmentRecord> r = decode(*text)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace

AttachmentStore::AttachmentStore(std::string data_dir, std::string network)
    : data_dir_(std::move(data_dir)), network_dir_(cat(data_dir_, "/", network)) {}

std::string AttachmentStore::pathOf(const std::string& container_id, const std::string& ifname) const {
  return cat(network_dir_, "/", container_id, ":", ifname);
}

absl::Status AttachmentStore::put(const AttachmentRecord& r) {
  json doc = {{"containerID", r.container_id}, {"ifname", r.ifname},
              {"ip", r.ip}, {"socketSubdir", r.socket_subdir}, {"deviceInfoFile", r.device_info_file}};
  if (!r.vf_host_name.empty()) {
    doc["netns"] = r.netns;
    doc["vfHostName"] = r.vf_host_name;
    doc["vfHostMac"] = r.vf_host_mac;
    doc["vfHostMtu"] = r.vf_host_mtu;
  }
  return writeFileAtomic(pathOf(r.container_id, r.ifname), doc.dump(), 0600);
}

std::optional<AttachmentRecord> AttachmentStore::get(const std::string& container_id,
                                                     const std::string& ifname) const {
  absl::StatusOr<std::string> text = readFile(pathOf(container_id, ifname));
  if (!text.ok()) return std::nullopt;
  return decode(*text);
}

absl::Status AttachmentStore::remove(const std::string& container_id, const std::string& ifname) {
  return removeFileIfExists(pathOf(container_id, ifname));
}

absl::StatusOr<std::vector<AttachmentRecord>> AttachmentStore::list() const {
  std::error_code ec;
  if (!fs::exists(network_dir_, ec)) return std::vector<AttachmentRecord>();
  return readDir(network_dir_);
}

absl::StatusOr<std::vector<AttachmentId>> AttachmentStore::claimedByAnyNetwork() const {
  std::vector<AttachmentId> out;
  std::error_code ec;
  if (!fs::exists(data_dir_, ec)) return out;
  for (const fs::directory_entry& net : fs::directory_iterator(data_dir_, ec)) {
    if (!net.is_directory(ec)) continue;
    for (const AttachmentRecord& r : readDir(net.path())) out.push_back({r.container_id, r.ifname});
  }
  if (ec) return cniError(ErrorCode::kIoFailure, cat("list ", data_dir_, ": ", ec.message()));
  return out;
}

}  // namespace sluice::cni
