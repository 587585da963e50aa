// See attachment_store.h.
#include "cni-plugin/attachment_store.h"

#include <nlohmann/json.hpp>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/file_util.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

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
  r.ipv6 = str("ipv6");
  r.socket_subdir = str("socketSubdir");
  r.device_info_file = str("deviceInfoFile");
  r.socket_link = str("socketLink");
  r.pod_socket_path = str("podSocketPath");
  r.netns = str("netns");
  r.vf_host_name = str("vfHostName");
  r.vf_host_mac = str("vfHostMac");
  if (auto it = doc.find("vfHostMtu"); it != doc.end() && it->is_number_unsigned()) {
    r.vf_host_mtu = it->get<uint32_t>();
  }
  if (auto it = doc.find("pendingDelete"); it != doc.end() && it->is_boolean()) r.pending_delete = it->get<bool>();
  if (auto it = doc.find("deleteAttempts"); it != doc.end() && it->is_number_unsigned()) {
    r.delete_attempts = it->get<uint32_t>();
  }
  if (r.container_id.empty() || r.ifname.empty()) return std::nullopt;
  return r;
}

}  // namespace

AttachmentStore::AttachmentStore(const ConfinedPath& data_dir, const std::string& network)
    : network_dir_(data_dir.child(network)) {}

ConfinedPath AttachmentStore::pathOf(const std::string& container_id, const std::string& ifname) const {
  return network_dir_.child(cat(container_id, ":", ifname));
}

absl::Status AttachmentStore::put(const AttachmentRecord& r) {
  json doc = {{"containerID", r.container_id}, {"ifname", r.ifname},
              {"ip", r.ip}, {"socketSubdir", r.socket_subdir}, {"deviceInfoFile", r.device_info_file}};
  if (!r.ipv6.empty()) doc["ipv6"] = r.ipv6;
  if (!r.socket_link.empty()) {
    doc["socketLink"] = r.socket_link;
    doc["podSocketPath"] = r.pod_socket_path;
  }
  if (!r.vf_host_name.empty()) {
    doc["netns"] = r.netns;
    doc["vfHostName"] = r.vf_host_name;
    doc["vfHostMac"] = r.vf_host_mac;
    doc["vfHostMtu"] = r.vf_host_mtu;
  }
  if (r.pending_delete) {
    doc["pendingDelete"] = true;
    doc["deleteAttempts"] = r.delete_attempts;
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
  absl::StatusOr<std::vector<std::string>> names = listRegularFiles(network_dir_);
  if (!names.ok()) return names.status();
  std::vector<AttachmentRecord> out;
  for (const std::string& name : *names) {
    // A half-written temporary file of a concurrent writer is not a record;
    // an unreadable entry is skipped rather than stopping GC.
    if (name.find(".tmp.") != std::string::npos) continue;
    absl::StatusOr<std::string> text = readFile(network_dir_.child(name));
    if (!text.ok()) continue;
    if (std::optional<AttachmentRecord> r = decode(*text)) out.push_back(std::move(*r));
  }
  return out;
}

}  // namespace sluice::cni
