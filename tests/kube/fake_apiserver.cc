#include "tests/kube/fake_apiserver.h"

#include <curl/curl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

namespace sluice::test {
namespace {

size_t append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// Whether `path` appears within `limit` (the server writes it once it
// listens; making its certificates takes a moment). Polled: a file's
// appearance wakes nothing.
bool appears(const std::string& path, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!std::filesystem::exists(path)) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace

std::unique_ptr<FakeApiServer> FakeApiServer::start(const std::string& dir, const std::string& token,
                                                    std::string* error) {
  std::unique_ptr<FakeApiServer> f(new FakeApiServer());
  f->dir_ = dir;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  f->pid_ = ::fork();
  if (f->pid_ == 0) {
    const std::string log = dir + "/server.log";
    FILE* out = std::freopen(log.c_str(), "w", stderr);
    if (out != nullptr) ::dup2(::fileno(stderr), STDOUT_FILENO);
    ::execlp("python3", "python3", FAKE_APISERVER_PY, "--dir", dir.c_str(), "--token", token.c_str(), nullptr);
    std::_Exit(127);
  }
  const std::string ports = dir + "/ports.json";
  if (!appears(ports, std::chrono::seconds(60))) {
    *error = "the fake API server did not start: " + f->log();
    return nullptr;
  }
  std::ifstream in(ports);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  f->control_port_ = j.value("control", 0);
  return f;
}

FakeApiServer::~FakeApiServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
}

std::string FakeApiServer::log() const {
  std::ifstream in(dir_ + "/server.log");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

nlohmann::json FakeApiServer::http(const std::string& method, const std::string& path, const std::string& body) {
  CURL* c = curl_easy_init();
  std::string out;
  const std::string url = "http://127.0.0.1:" + std::to_string(control_port_) + path;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(c, CURLOPT_TIMEOUT, 120L);  // a bulk put of thousands of Nodes takes seconds
  curl_slist* headers = nullptr;
  if (method == "POST") {
    headers = curl_slist_append(headers, "Content-Type: application/json");
    curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, body.c_str());
  }
  const CURLcode rc = curl_easy_perform(c);
  long status = 0;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(headers);
  curl_easy_cleanup(c);
  if (rc != CURLE_OK || status != 200) return nullptr;
  return nlohmann::json::parse(out, nullptr, false);
}

nlohmann::json FakeApiServer::control(const nlohmann::json& command) { return http("POST", "/control", command.dump()); }
nlohmann::json FakeApiServer::node(const std::string& name) { return http("GET", "/control/node/" + name, ""); }
nlohmann::json FakeApiServer::stats() { return http("GET", "/control/stats", ""); }
nlohmann::json FakeApiServer::emitted(uint64_t since) {
  nlohmann::json r = http("GET", "/control/emitted?since=" + std::to_string(since), "");
  return r.is_object() ? r["events"] : nlohmann::json();
}

}  // namespace sluice::test
