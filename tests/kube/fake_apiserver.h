// Runs tests/kube/fake_apiserver.py as a child process for a test: a fake
// Kubernetes API (HTTPS, bearer token, list/watch/patch of Nodes) and its
// plain-HTTP control port, which this class drives.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace sluice::test {

class FakeApiServer {
 public:
  // Starts it in `dir` (certificates, kubeconfig, token); null and `error`
  // on failure.
  static std::unique_ptr<FakeApiServer> start(const std::string& dir, const std::string& token, std::string* error);
  ~FakeApiServer();

  std::string kubeconfig() const { return dir_ + "/kubeconfig"; }
  // One control command (see the script); the reply, or null on failure.
  nlohmann::json control(const nlohmann::json& command);
  // The stored Node (null when there is none).
  nlohmann::json node(const std::string& name);
  nlohmann::json stats();
  // When each event after version `since` was first written to a watch
  // stream: [[rv, name, CLOCK_MONOTONIC seconds], ...] (null on failure).
  nlohmann::json emitted(uint64_t since);
  std::string log() const;

 private:
  FakeApiServer() = default;
  nlohmann::json http(const std::string& method, const std::string& path, const std::string& body);
  pid_t pid_ = -1;
  std::string dir_;
  int control_port_ = 0;
};

}  // namespace sluice::test
