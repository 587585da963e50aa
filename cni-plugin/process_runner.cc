// See process_runner.h.
#include "cni-plugin/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

// Owns a file descriptor; closes it once.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  int* addr() { return &fd_; }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

bool makePipe(Pipe& p) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return false;
  *p.read.addr() = fds[0];
  *p.write.addr() = fds[1];
  return true;
}

int exitCodeOf(int wstatus) {
  if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
  if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
  return -1;
}

}  // namespace

absl::StatusOr<ProcessOutput> runProcess(const std::string& path, const Environment& env,
                                         std::string_view input, std::chrono::milliseconds timeout) {
  // A child that exits without reading stdin must not kill us with SIGPIPE;
  // the write then fails with EPIPE, which is handled below.
  signal(SIGPIPE, SIG_IGN);

  Pipe in, out, err;
  if (!makePipe(in) || !makePipe(out) || !makePipe(err)) {
    return absl::InternalError(cat("pipe: ", std::strerror(errno)));
  }

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in.read.get(), STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err.write.get(), STDERR_FILENO);

  std::vector<std::string> env_strings;
  env_strings.reserve(env.size());
  for (const auto& [k, v] : env) env_strings.push_back(cat(k, "=", v));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = path;
  char* argv[] = {arg0.data(), nullptr};

  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return absl::InternalError(cat("cannot run ", path, ": ", std::strerror(rc)));

  // The child holds its own copies now.
  in.read.reset();
  out.write.reset();
  err.write.reset();
  fcntl(in.write.get(), F_SETFL, O_NONBLOCK);

  ProcessOutput result;
  size_t written = 0;
  if (input.empty()) in.write.reset();
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool timed_out = false;
  while (out.read.get() >= 0 || err.read.get() >= 0) {
    pollfd fds[3];
    nfds_t n = 0;
    if (in.write.get() >= 0) fds[n++] = {in.write.get(), POLLOUT, 0};
    if (out.read.get() >= 0) fds[n++] = {out.read.get(), POLLIN, 0};
    if (err.read.get() >= 0) fds[n++] = {err.read.get(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    int ready = poll(fds, n, static_cast<int>(left.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    for (nfds_t i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      if (fds[i].fd == in.write.get()) {
        ssize_t w = write(in.write.get(), input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN && errno != EINTR) in.write.reset();
        if (written == input.size()) in.write.reset();
        continue;
      }
      Fd& src = fds[i].fd == out.read.get() ? out.read : err.read;
      std::string& dst = fds[i].fd == out.read.get() ? result.out : result.err;
      char buf[4096];
      ssize_t r = read(src.get(), buf, sizeof buf);
      if (r > 0) {
        dst.append(buf, static_cast<size_t>(r));
      } else if (r == 0 || (errno != EAGAIN && errno != EINTR)) {
        src.reset();
      }
    }
  }
  in.write.reset();
  if (timed_out) kill(pid, SIGKILL);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) {
    return absl::DeadlineExceededError(
        cat(path, " did not finish within ", timeout.count(), " ms"));
  }
  result.exit_code = exitCodeOf(wstatus);
  return result;
}

}  // namespace sluice::cni
