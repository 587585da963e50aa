#include "dataplane/sluiced/preflight.h"

#include <absl/strings/str_cat.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "common/log.h"
#include "dataplane/core/crash_points.h"

namespace sluice {
namespace {

// True if something accepts connections on the unix socket at `path`.
bool socketIsLive(const std::string& path) {
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
  bool live = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return live;
}

}  // namespace

int exitForRefusedCommandLine(const absl::Status& refused) {
  if (refused.code() == absl::StatusCode::kCancelled) {
    std::fputs(std::string(refused.message()).c_str(), stdout);
    return 0;
  }
  std::fprintf(stderr, "sluiced: %s\n", std::string(refused.message()).c_str());
  return 2;
}

absl::Status applyStartupSettings(const SluicedConfig& config) {
  setLogLevel(config.log_level);
  for (const std::string& key : config.ignored_keys)
    logWarning("config key '", key, "' is for a feature this sluiced does not have yet; ignored");
  return loadCrashPointFromEnvironment();
}

absl::Status claimSocketPaths(const SluicedConfig& config) {
  std::error_code ec;
  std::filesystem::create_directories(config.socket_dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("creating socket directory ", config.socket_dir, ": ", ec.message()));
  std::filesystem::create_directories(std::filesystem::path(config.api_socket).parent_path(), ec);
  if (!config.agent_api_socket.empty())
    std::filesystem::create_directories(std::filesystem::path(config.agent_api_socket).parent_path(), ec);
  if (socketIsLive(config.api_socket))
    return absl::FailedPreconditionError(absl::StrCat("another sluiced is serving ", config.api_socket));
  ::unlink(config.api_socket.c_str());
  return absl::OkStatus();
}

absl::StatusOr<CheckpointLoad> loadCheckpoint(CheckpointStore& checkpoint) {
  absl::StatusOr<CheckpointLoad> loaded = checkpoint.load();
  if (!loaded.ok())
    return absl::Status(loaded.status().code(),
                        absl::StrCat("not starting: ", loaded.status().message(),
                                     " (run a sluiced that reads it, or move the file away to start with no ports)"));
  return loaded;
}

absl::StatusOr<LcorePlacement> placeLcoresOnAllowedCpus(const SluicedConfig& config) {
  absl::StatusOr<std::vector<unsigned>> cpus = allowedCpus();
  absl::StatusOr<LcorePlacement> placement =
      cpus.ok() ? placeLcores(*cpus, config.main_core, config.pmd_cores) : cpus.status();
  if (!placement.ok())
    return absl::Status(placement.status().code(), absl::StrCat("not starting: ", placement.status().message()));
  logInfo(placement->describe(*cpus));
  return placement;
}

// A connected vhost-user port holds a few descriptors (its socket, a kick and
// a call eventfd per vring, a listening socket in server mode, its pod
// socket directory): a full port table needs thousands, past the soft limit
// a shell starts with (1024). The soft limit is raised to the hard one,
// which the container runtime sets.
void raiseDescriptorLimit(uint16_t max_ports) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  if (limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::getrlimit(RLIMIT_NOFILE, &limit);
  }
  // Two queue pairs' worth per port, and the rest of sluiced.
  const rlim_t wanted = static_cast<rlim_t>(max_ports) * 10 + 256;
  if (limit.rlim_cur < wanted)
    logWarning("open-file limit ", limit.rlim_cur, " is below the ", wanted, " a table of max-ports ", max_ports,
               " may need: ports beyond it fail to open or connect");
}

}  // namespace sluice
