// What the e2e tests ask from inside a container (the image has no shell and
// no tools): static, run through CRI ExecSync in a container of the test's
// image (tests/e2e/cri/oci_image.sh).
//
//   probe ls DIR        the names in DIR, sorted, one a line ("." and ".." left out)
//   probe connect PATH  "connected" when a unix stream connect to PATH
//                       succeeds, else the errno's name (ENOENT, ECONNREFUSED…)
//   probe stat PATH     "<type> <uid> <gid> <permission bits in octal>" of
//                       PATH itself (a symlink is not followed), e.g.
//                       "socket 0 2345 660"
//
// Exit codes: 0 success, 1 the call failed (its errno's name on stdout), 2 usage.
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

int failed(int err) {
  const char* name = strerrorname_np(err);
  std::printf("%s\n", name != nullptr ? name : "unknown errno");
  return 1;
}

int list(const char* dir) {
  DIR* d = opendir(dir);
  if (d == nullptr) return failed(errno);
  std::vector<std::string> names;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) std::printf("%s\n", n.c_str());
  return 0;
}

int connectTo(const char* path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(path) >= sizeof addr.sun_path) return failed(ENAMETOOLONG);
  std::strcpy(addr.sun_path, path);
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return failed(errno);
  const int rc = connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  const int err = errno;
  close(fd);
  if (rc != 0) return failed(err);
  std::printf("connected\n");
  return 0;
}

int statOf(const char* path) {
  struct stat st {};
  if (lstat(path, &st) != 0) return failed(errno);
  const char* type = S_ISSOCK(st.st_mode)  ? "socket"
                     : S_ISDIR(st.st_mode) ? "directory"
                     : S_ISLNK(st.st_mode) ? "symlink"
                     : S_ISREG(st.st_mode) ? "file"
                                           : "other";
  std::printf("%s %u %u %o\n", type, static_cast<unsigned>(st.st_uid), static_cast<unsigned>(st.st_gid),
              static_cast<unsigned>(st.st_mode & 07777));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::strcmp(argv[1], "ls") == 0) return list(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "connect") == 0) return connectTo(argv[2]);
  if (argc == 3 && std::strcmp(argv[1], "stat") == 0) return statOf(argv[2]);
  std::fputs("usage: probe (ls DIR | connect PATH | stat PATH)\n", stderr);
  return 2;
}
