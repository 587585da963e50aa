#include "dataplane/core/config_file_watcher.h"

#include <absl/strings/str_cat.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

#include "common/log.h"

namespace sluice {
namespace {

// Events that mean an entry of the directory may now read differently:
// a file written and closed, an entry renamed into it (editors' saves, the
// ConfigMap's `..data` swap), a symlink made in it. Not IN_MODIFY: a file
// being written is read once it is closed, never half-written.
constexpr uint32_t kEvents = IN_CLOSE_WRITE | IN_MOVED_TO | IN_CREATE;

}  // namespace

absl::StatusOr<std::unique_ptr<ConfigFileWatcher>> ConfigFileWatcher::start(const std::vector<std::string>& files,
                                                                            std::function<void()> changed) {
  const int inotify_fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (inotify_fd < 0) return absl::InternalError(absl::StrCat("inotify_init1: ", std::strerror(errno)));
  const int stop_fd = ::eventfd(0, EFD_CLOEXEC);
  if (stop_fd < 0) {
    ::close(inotify_fd);
    return absl::InternalError(absl::StrCat("eventfd: ", std::strerror(errno)));
  }
  std::set<std::string> dirs;
  for (const std::string& file : files) {
    std::string dir = std::filesystem::path(file).parent_path().string();
    dirs.insert(dir.empty() ? "." : dir);
  }
  for (const std::string& dir : dirs) {
    if (::inotify_add_watch(inotify_fd, dir.c_str(), kEvents | IN_ONLYDIR) < 0) {
      const int err = errno;
      ::close(inotify_fd);
      ::close(stop_fd);
      return absl::InternalError(absl::StrCat("watching ", dir, ": ", std::strerror(err)));
    }
  }
  std::unique_ptr<ConfigFileWatcher> watcher(new ConfigFileWatcher(inotify_fd, stop_fd, std::move(changed)));
  watcher->thread_ = std::thread([w = watcher.get()] { w->run(); });
  return watcher;
}

ConfigFileWatcher::ConfigFileWatcher(int inotify_fd, int stop_fd, std::function<void()> changed)
    : inotify_fd_(inotify_fd), stop_fd_(stop_fd), changed_(std::move(changed)) {}

ConfigFileWatcher::~ConfigFileWatcher() {
  const uint64_t one = 1;
  if (::write(stop_fd_, &one, sizeof one) != sizeof one) logError("config watcher: cannot signal its thread to stop");
  if (thread_.joinable()) thread_.join();
  ::close(inotify_fd_);
  ::close(stop_fd_);
}

void ConfigFileWatcher::run() {
  // Room for a batch of events with names (NAME_MAX each at most).
  alignas(inotify_event) char buffer[16 * (sizeof(inotify_event) + 256)];
  for (;;) {
    pollfd fds[2] = {{inotify_fd_, POLLIN, 0}, {stop_fd_, POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      logError("config watcher: poll: ", std::strerror(errno), "; the config file is no longer watched");
      return;
    }
    if (fds[1].revents != 0) return;
    // Drain what is queued, so one save (or one ConfigMap update, several
    // events) calls back once or twice rather than once per event.
    bool any = false;
    for (;;) {
      const ssize_t n = ::read(inotify_fd_, buffer, sizeof buffer);
      if (n <= 0) break;
      for (ssize_t at = 0; at < n;) {
        const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
        // A directory made in it (the ConfigMap's next timestamped one)
        // changes no file's text until `..data` is renamed to point at it.
        const bool made_dir = (event->mask & IN_CREATE) != 0 && (event->mask & IN_ISDIR) != 0;
        if ((event->mask & IN_Q_OVERFLOW) != 0 || ((event->mask & kEvents) != 0 && !made_dir)) any = true;
        at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      }
    }
    if (any) changed_();
  }
}

}  // namespace sluice
