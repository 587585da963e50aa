// Watches sluiced's --config files for changes, on a control thread of its
// own (never a PMD), and calls back after each change.
//
// It watches each file's directory, not the file: an editor's save, a
// `mv` over it, and a Kubernetes ConfigMap volume update all replace the
// directory entry rather than write the old inode. A ConfigMap volume holds
// `name -> ..data/name` and `..data -> ..<timestamp>/`; an update writes a
// new timestamped directory and renames a new `..data` symlink over the old
// one, so the file's own inode (and any watch on it) never sees a change;
// the rename is an event in the watched directory. Any write-close, rename
// into, or symlink creation in the directory calls back; the callback
// compares the files' text with the last read, so events about other
// entries cost one read.
#pragma once

#include <absl/status/statusor.h>

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace sluice {

class ConfigFileWatcher {
 public:
  // Starts watching the directories of `files` (at least one) and calls
  // `changed` on the watcher's thread after every batch of events.
  static absl::StatusOr<std::unique_ptr<ConfigFileWatcher>> start(const std::vector<std::string>& files,
                                                                  std::function<void()> changed);
  // Stops the thread (waiting for a callback that is running).
  ~ConfigFileWatcher();
  ConfigFileWatcher(const ConfigFileWatcher&) = delete;
  ConfigFileWatcher& operator=(const ConfigFileWatcher&) = delete;

 private:
  ConfigFileWatcher(int inotify_fd, int stop_fd, std::function<void()> changed);
  void run();

  const int inotify_fd_;
  const int stop_fd_;  // an eventfd: written once to stop the thread
  const std::function<void()> changed_;
  std::thread thread_;
};

}  // namespace sluice
