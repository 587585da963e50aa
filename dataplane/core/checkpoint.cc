#include "dataplane/core/checkpoint.h"

#include <absl/strings/str_cat.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "common/log.h"
#include "dataplane/core/checkpoint_migrations.h"
#include "dataplane/core/crash_points.h"

namespace sluice {
namespace {

using nlohmann::json;

constexpr char kFormat[] = "sluice-checkpoint";
constexpr char kFileName[] = "checkpoint.json";
// A save writes here first, then renames it over the checkpoint.
constexpr char kTempSuffix[] = ".tmp";
// A checkpoint holds at most kMaxPortsLimit ports and a VF pool's records; a file
// far beyond that is not ours (and is not read into memory whole). save()
// refuses to write more than load() reads.
constexpr off_t kMaxFileBytes = 16 << 20;

absl::Status bad(const std::string& where, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("checkpoint: ", where, ": ", why));
}

absl::Status errnoStatus(const std::string& what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

// Reads string member `key` of `obj` into `out`; absent means empty.
absl::Status getString(const json& obj, const char* key, const std::string& where, std::string& out) {
  auto it = obj.find(key);
  if (it == obj.end()) return absl::OkStatus();
  if (!it->is_string()) return bad(absl::StrCat(where, ".", key), "must be a string");
  out = it->get<std::string>();
  return absl::OkStatus();
}

absl::StatusOr<CheckpointPort> parsePort(const json& p, const std::string& where) {
  if (!p.is_object()) return bad(where, "must be an object");
  CheckpointPort out;
  auto no = p.find("port_no");
  if (no == p.end() || !no->is_number_unsigned() || no->get<uint64_t>() > 0xffff)
    return bad(absl::StrCat(where, ".port_no"), "must be an integer 0..65535");
  out.port_no = static_cast<uint16_t>(no->get<uint64_t>());
  RawPortRequest& r = out.request;
  for (auto [key, field] : {std::pair{"container_id", &r.container_id}, {"ifname", &r.ifname},
                            {"pod_namespace", &r.pod_namespace}, {"pod_name", &r.pod_name}, {"ip", &r.ip},
                            {"ipv6", &r.ipv6}, {"mac", &r.mac}, {"socket_subdir", &r.socket_subdir},
                            {"socket_path", &out.socket_path}, {"netns", &out.netns}})
    if (absl::Status s = getString(p, key, where, *field); !s.ok()) return s;
  std::string type = "vhost-user", mode = "server";
  if (absl::Status s = getString(p, "type", where, type); !s.ok()) return s;
  if (absl::Status s = getString(p, "vhost_mode", where, mode); !s.ok()) return s;
  if (type == "vhost-user") r.kind = PortKind::kVhostUser;
  else if (type == "sriov-vf") r.kind = PortKind::kSriovVf;
  else return bad(absl::StrCat(where, ".type"), absl::StrCat("unknown type '", type, "'"));
  if (mode == "server") r.vhost_mode = VhostMode::kServer;
  else if (mode == "client") r.vhost_mode = VhostMode::kClient;
  else return bad(absl::StrCat(where, ".vhost_mode"), absl::StrCat("unknown mode '", mode, "'"));
  if (r.container_id.empty() || r.ifname.empty()) return bad(where, "needs container_id and ifname");
  // Absent in checkpoints of ports without one, and in older ones.
  if (auto g = p.find("socket_group"); g != p.end()) {
    if (!g->is_number_unsigned() || g->get<uint64_t>() > 0xfffffffe)
      return bad(absl::StrCat(where, ".socket_group"), "must be an integer 0..4294967294");
    r.socket_group = static_cast<uint32_t>(g->get<uint64_t>());
  }
  // Absent in files written before version 4: the node's default.
  if (auto m = p.find("mtu"); m != p.end()) {
    // A migration's 0 is a signed JSON integer; a file's is unsigned.
    if (!(m->is_number_unsigned() || (m->is_number_integer() && m->get<int64_t>() >= 0)) ||
        m->get<uint64_t>() > 0xffffffff)
      return bad(absl::StrCat(where, ".mtu"), "must be an integer 0..4294967295");
    r.mtu = static_cast<uint32_t>(m->get<uint64_t>());
  }
  // Absent in files written before version 4: on.
  if (auto v = p.find("source_validation"); v != p.end()) {
    if (!v->is_boolean()) return bad(absl::StrCat(where, ".source_validation"), "must be true or false");
    r.source_validation = v->get<bool>();
  }
  // Absent unless the port was pinned to a PMD.
  if (auto v = p.find("pmd"); v != p.end()) {
    if (!v->is_number_unsigned() || v->get<uint64_t>() > 0xffff)
      return bad(absl::StrCat(where, ".pmd"), "must be a PMD index 0..65535");
    r.pmd = static_cast<unsigned>(v->get<uint64_t>());
  }
  // Absent for a port of one queue pair (and in files written before
  // multi-queue ports): 1.
  if (auto v = p.find("queues"); v != p.end()) {
    if (!v->is_number_unsigned() || v->get<uint64_t>() == 0 || v->get<uint64_t>() > 0xffff)
      return bad(absl::StrCat(where, ".queues"), "must be a queue pair count 1..65535");
    r.queues = static_cast<unsigned>(v->get<uint64_t>());
  }
  // Absent in files written before version 5: none.
  if (auto v = p.find("routed_prefixes"); v != p.end()) {
    if (!v->is_array()) return bad(absl::StrCat(where, ".routed_prefixes"), "must be an array of CIDR strings");
    for (const json& c : *v) {
      if (!c.is_string()) return bad(absl::StrCat(where, ".routed_prefixes"), "must be an array of CIDR strings");
      r.routed_prefixes.push_back(c.get<std::string>());
    }
  }
  return out;
}

// fsync of a directory: makes a rename inside it durable.
absl::Status syncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errnoStatus(absl::StrCat("opening ", dir));
  int rc = ::fsync(fd);
  int saved = errno;
  ::close(fd);
  errno = saved;
  return rc == 0 ? absl::OkStatus() : errnoStatus(absl::StrCat("fsync ", dir));
}

absl::Status makeDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(dir).parent_path(), ec);
  // Only root reads it: it names every pod's sockets and addresses.
  if (::mkdir(dir.c_str(), 0700) == 0 || errno == EEXIST) return absl::OkStatus();
  return errnoStatus(absl::StrCat("creating state directory ", dir));
}

// The whole file, or an error (NotFound when there is none).
absl::StatusOr<std::string> readFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return absl::NotFoundError(path);
    return errnoStatus(absl::StrCat("opening ", path));
  }
  std::string text;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > kMaxFileBytes) {
    ::close(fd);
    return absl::DataLossError(absl::StrCat(path, " is not a regular file of at most ", kMaxFileBytes, " bytes"));
  }
  char buf[65536];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = errnoStatus(absl::StrCat("reading ", path));
      ::close(fd);
      return s;
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

// The file's own keys; every other one is a module's section.
bool isReservedKey(std::string_view key) {
  return key == "format" || key == "version" || key == "oldest_reader" || key == "ports";
}

// A newer file's "oldest_reader" (its own, or one port's): absent means only
// sluiced of the file's version or later can read it.
absl::StatusOr<uint64_t> oldestReader(const json& obj, uint64_t absent, const std::string& where) {
  auto it = obj.find("oldest_reader");
  if (it == obj.end()) return absent;
  if (!it->is_number_unsigned()) return bad(absl::StrCat(where, "oldest_reader"), "must be a version number");
  return it->get<uint64_t>();
}

}  // namespace

std::string serializeCheckpoint(const CheckpointState& state) {
  json ports = json::array();
  for (const CheckpointPort& p : state.ports) {
    const RawPortRequest& r = p.request;
    ports.push_back({{"port_no", p.port_no},
                     {"container_id", r.container_id},
                     {"ifname", r.ifname},
                     {"pod_namespace", r.pod_namespace},
                     {"pod_name", r.pod_name},
                     {"ip", r.ip},
                     {"ipv6", r.ipv6},
                     {"mac", r.mac},
                     {"type", r.kind == PortKind::kSriovVf ? "sriov-vf" : "vhost-user"},
                     {"vhost_mode", r.vhost_mode == VhostMode::kClient ? "client" : "server"},
                     {"socket_subdir", r.socket_subdir},
                     {"socket_path", p.socket_path},
                     {"netns", p.netns},
                     {"source_validation", r.source_validation},
                     {"routed_prefixes", r.routed_prefixes}});
    if (r.socket_group) ports.back()["socket_group"] = *r.socket_group;
    if (r.pmd) ports.back()["pmd"] = *r.pmd;
    if (r.queues) ports.back()["queues"] = *r.queues;
    ports.back()["mtu"] = r.mtu;
  }
  json doc = {{"format", kFormat}, {"version", kCheckpointVersion}, {"ports", ports}};
  if constexpr (kOldestCheckpointReader != kCheckpointVersion) doc["oldest_reader"] = kOldestCheckpointReader;
  for (const auto& [key, records] : state.sections)
    if (!isReservedKey(key)) doc[key] = records.is_array() ? records : json::array();
  // Indented: readable with `cat` when debugging a node. Invalid UTF-8 (no
  // API field should carry any) is replaced rather than thrown about: a
  // throw here would leave a created port unrecorded.
  return doc.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

absl::StatusOr<CheckpointState> parseCheckpoint(std::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return bad("file", "not valid JSON");
  if (!doc.is_object()) return bad("file", "top level must be an object");
  if (doc.value("format", json()) != kFormat) return bad("format", absl::StrCat("must be \"", kFormat, "\""));
  auto version = doc.find("version");
  if (version == doc.end() || !version->is_number_unsigned() || version->get<uint64_t>() < kOldestCheckpointVersion)
    return bad("version", absl::StrCat("must be an integer from ", kOldestCheckpointVersion));
  CheckpointState state;
  state.read_version = version->get<uint64_t>();
  const bool newer = state.read_version > kCheckpointVersion;
  if (newer) {
    // Written by a newer sluiced: read only if it says this version keeps
    // its promises by ignoring what it does not know (a rollback); else they
    // are in a schema this one cannot read, so it must neither read nor
    // replace them (not corrupt: see load()).
    absl::StatusOr<uint64_t> oldest = oldestReader(doc, state.read_version, "");
    if (!oldest.ok()) return oldest.status();
    if (*oldest > kCheckpointVersion)
      return absl::FailedPreconditionError(absl::StrCat("checkpoint version ", state.read_version,
                                                        " is newer than this sluiced understands (versions ",
                                                        kOldestCheckpointVersion, " to ", kCheckpointVersion,
                                                        *oldest == state.read_version
                                                            ? std::string()
                                                            : absl::StrCat("; it needs ", *oldest, " or later"),
                                                        ")"));
  } else if (absl::Status s = migrateCheckpoint(doc, state.read_version); !s.ok()) {
    return s;
  }
  auto ports = doc.find("ports");
  if (ports == doc.end() || !ports->is_array()) return bad("ports", "must be an array");
  for (size_t i = 0; i < ports->size(); ++i) {
    const std::string where = absl::StrCat("ports[", i, "]");
    auto p = parsePort((*ports)[i], where);
    if (!p.ok()) return p.status();
    if (newer) {
      absl::StatusOr<uint64_t> oldest = oldestReader((*ports)[i], kOldestCheckpointReader, where + ".");
      if (!oldest.ok()) return oldest.status();
      if (*oldest > kCheckpointVersion) {
        state.ports_left_out.push_back(
            absl::StrCat(p->request.container_id, "/", p->request.ifname, " (needs version ", *oldest, ")"));
        continue;
      }
    }
    state.ports.push_back(std::move(*p));
  }
  for (const auto& [key, records] : doc.items()) {
    if (isReservedKey(key)) continue;
    // A newer sluiced's own top-level keys are no module's section: ignored,
    // as the file said they may be.
    const auto isSection = [](const json& r) {
      return r.is_array() && std::all_of(r.begin(), r.end(), [](const json& e) { return e.is_object(); });
    };
    if (newer && !isSection(records)) continue;
    if (!records.is_array()) return bad(key, "must be an array");
    for (size_t i = 0; i < records.size(); ++i)
      if (!records[i].is_object()) return bad(absl::StrCat(key, "[", i, "]"), "must be an object");
    state.sections[key] = records;
  }
  return state;
}

CheckpointStore::CheckpointStore(std::string dir, bool fsync)
    : dir_(std::move(dir)), path_(absl::StrCat(dir_, "/", kFileName)), fsync_(fsync) {}

absl::StatusOr<CheckpointLoad> CheckpointStore::load() {
  CheckpointLoad out;
  if (absl::Status s = makeDir(dir_); !s.ok()) logError("checkpoint: ", s.message());
  // A save killed before its rename leaves its temp file: never a promise
  // (no API call was answered with it), only litter. (A read-only directory
  // keeps it; the next save that can write replaces it.)
  const std::string tmp = absl::StrCat(path_, kTempSuffix);
  if (::unlink(tmp.c_str()) == 0) logInfo("checkpoint: removed ", tmp, ", left by a save that did not finish");
  absl::StatusOr<std::string> text = readFile(path_);
  if (!text.ok() && absl::IsNotFound(text.status())) return out;
  out.found = true;
  absl::Status problem = text.status();
  if (text.ok()) {
    auto parsed = parseCheckpoint(*text);
    if (parsed.ok()) {
      out.state = std::move(*parsed);
      if (out.state.read_version > kCheckpointVersion) {
        logInfo("checkpoint ", path_, ": version ", out.state.read_version, ", written by a newer sluiced, read as ",
                kCheckpointVersion, " (the file says this version can); what the newer one added is dropped at the "
                "next save");
        for (const std::string& port : out.state.ports_left_out)
          logError("checkpoint ", path_, ": port ", port, " left out: this sluiced cannot keep its promises");
      } else if (out.state.read_version != kCheckpointVersion)
        logInfo("checkpoint ", path_, ": version ", out.state.read_version, " migrated to ", kCheckpointVersion,
                " (written as ", kCheckpointVersion, " from now on)");
      return out;
    }
    // A newer sluiced's file is not corrupt: it stays where that sluiced
    // will find it again, untouched.
    if (absl::IsFailedPrecondition(parsed.status()))
      return absl::FailedPreconditionError(absl::StrCat(path_, ": ", parsed.status().message(), "; left in place"));
    problem = parsed.status();
  }
  // Keep the evidence for a post-mortem, out of the way of the next save.
  std::string aside = absl::StrCat(path_, ".corrupt-", std::time(nullptr));
  // Never over an earlier corpse (two bad starts within a second).
  for (int n = 1; ::access(aside.c_str(), F_OK) == 0; ++n)
    aside = absl::StrCat(path_, ".corrupt-", std::time(nullptr), "-", n);
  if (::rename(path_.c_str(), aside.c_str()) == 0) {
    out.moved_aside_to = aside;
    logError("checkpoint ", path_, " is unusable (", problem.message(), "); moved to ", aside,
             "; starting with no ports");
  } else {
    logError("checkpoint ", path_, " is unusable (", problem.message(), ") and could not be moved aside (",
             std::strerror(errno), "); starting with no ports");
  }
  return out;
}

absl::Status CheckpointStore::save(const CheckpointState& state) {
  if (absl::Status s = makeDir(dir_); !s.ok()) return s;
  const std::string text = serializeCheckpoint(state);
  // What load() would refuse must not replace a file it accepts: the change
  // that grew the state fails now, not every port at the next start.
  if (text.size() > static_cast<size_t>(kMaxFileBytes))
    return absl::ResourceExhaustedError(absl::StrCat("checkpoint: the state would take ", text.size(),
                                                     " bytes, more than the ", kMaxFileBytes,
                                                     " a start reads; not written"));
  const std::string tmp = absl::StrCat(path_, kTempSuffix);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return errnoStatus(absl::StrCat("creating ", tmp));
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      absl::Status s = errnoStatus(absl::StrCat("writing ", tmp));
      ::close(fd);
      ::unlink(tmp.c_str());
      return s;
    }
    done += static_cast<size_t>(n);
  }
  // Data on disk before the rename makes it visible (else a crash could
  // leave an empty file under the real name).
  if (fsync_.load(std::memory_order_relaxed) && ::fdatasync(fd) != 0) {
    absl::Status s = errnoStatus(absl::StrCat("fsync ", tmp));
    ::close(fd);
    ::unlink(tmp.c_str());
    return s;
  }
  ::close(fd);
  crashPoint(CrashPoint::kCheckpointTempWritten);
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    absl::Status s = errnoStatus(absl::StrCat("renaming ", tmp, " to ", path_));
    ::unlink(tmp.c_str());
    return s;
  }
  absl::Status synced = fsync_.load(std::memory_order_relaxed) ? syncDir(dir_) : absl::OkStatus();
  crashPoint(CrashPoint::kCheckpointRenamed);
  saves_.fetch_add(1, std::memory_order_relaxed);
  return synced;
}

}  // namespace sluice
