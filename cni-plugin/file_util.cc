// See file_util.h.
#include "cni-plugin/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"

namespace sluice::cni {
namespace {

absl::Status ioError(std::string_view what, const std::string& path, int err) {
  return cniError(ErrorCode::kIoFailure, cat(what, " ", path, ": ", std::strerror(err)));
}

}  // namespace

absl::StatusOr<bool> makeDirs(const std::string& path, unsigned mode) {
  if (path.empty()) return false;
  bool created = false;
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/') continue;
    std::string prefix = path.substr(0, pos);
    if (mkdir(prefix.c_str(), static_cast<mode_t>(mode)) == 0) {
      created = pos == path.size();
      continue;
    }
    if (errno != EEXIST) return ioError("mkdir", prefix, errno);
    created = false;
  }
  return created;
}

absl::Status writeFileAtomic(const std::string& path, std::string_view content, unsigned mode) {
  size_t slash = path.rfind('/');
  if (slash != std::string::npos && slash > 0) {
    if (absl::StatusOr<bool> made = makeDirs(path.substr(0, slash), 0755); !made.ok()) return made.status();
  }
  // mkstemp: unique even when two writers of the same path race (the name
  // also marks it as temporary for AttachmentStore's directory scans).
  std::string tmp = cat(path, ".tmp.XXXXXX");
  int fd = mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) return ioError("create", tmp, errno);
  if (fchmod(fd, static_cast<mode_t>(mode)) != 0) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return ioError("chmod", tmp, err);
  }
  size_t done = 0;
  while (done < content.size()) {
    ssize_t w = write(fd, content.data() + done, content.size() - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      return ioError("write", tmp, err);
    }
    done += static_cast<size_t>(w);
  }
  if (fsync(fd) != 0) {
    int err = errno;
    close(fd);
    unlink(tmp.c_str());
    return ioError("fsync", tmp, err);
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    unlink(tmp.c_str());
    return ioError("rename to", path, err);
  }
  return absl::OkStatus();
}

absl::Status removeFileIfExists(const std::string& path) {
  if (unlink(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
  return ioError("remove", path, errno);
}

absl::StatusOr<std::string> readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return ioError("open", path, errno);
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace sluice::cni
