// Runs the real sluice-agent binary as a child process for a test, its
// output appended to a log file.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace sluice::test {

class AgentProcess {
 public:
  AgentProcess(const std::string& log, std::vector<std::string> args) : log_(log), args_(std::move(args)) { launch(); }
  ~AgentProcess() { stop(); }
  void launch() {
    pid_ = ::fork();
    if (pid_ == 0) {
      FILE* out = std::freopen(log_.c_str(), "a", stderr);
      if (out != nullptr) ::dup2(::fileno(stderr), STDOUT_FILENO);
      std::vector<char*> argv;
      for (std::string& a : args_) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(argv[0], argv.data());
      std::_Exit(127);
    }
  }
  // SIGTERM; the exit status (0: a clean stop).
  int stop() {
    if (pid_ <= 0) return 0;
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string log() const {
    std::ifstream in(log_);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string log_;
  std::vector<std::string> args_;
  pid_t pid_ = -1;
};

}  // namespace sluice::test
