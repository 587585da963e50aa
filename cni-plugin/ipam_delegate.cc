// See ipam_delegate.h.
#include "cni-plugin/ipam_delegate.h"

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/process_runner.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

// Delegates' stderr can be long; the first bytes are enough for a log line.
constexpr size_t kMaxLoggedStderr = 2048;

std::string rewriteVersion(std::string_view conf, std::string_view version) {
  json doc = json::parse(conf, nullptr, false);
  if (!doc.is_object()) return std::string(conf);
  doc["cniVersion"] = std::string(version);
  return doc.dump();
}

std::string joinPath(const std::vector<std::string>& dirs) {
  std::string out;
  for (const std::string& d : dirs) out.append(out.empty() ? "" : ":").append(d);
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

}  // namespace

IpamDelegate::IpamDelegate(const Environment& env, std::vector<std::string> cni_path, std::string type,
                           std::chrono::milliseconds timeout, Logger& log)
    : env_(env), cni_path_(std::move(cni_path)), type_(std::move(type)), timeout_(timeout), log_(log) {}

absl::StatusOr<std::string> IpamDelegate::findPlugin() const {
  if (cni_path_.empty()) {
    return cniError(ErrorCode::kInvalidEnvironment,
                    cat("CNI_PATH is required to run IPAM plugin \"", type_, "\""));
  }
  for (const std::string& dir : cni_path_) {
    std::string candidate = cat(dir, "/", type_);
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return cniError(ErrorCode::kInvalidConfig,
                  cat("ipam.type: plugin \"", type_, "\" not found in CNI_PATH (",
                               joinPath(cni_path_), ")"));
}

absl::StatusOr<std::string> IpamDelegate::exec(std::string_view command, std::string_view conf,
                                               const Environment& env) {
  absl::StatusOr<std::string> path = findPlugin();
  if (!path.ok()) return path.status();
  Environment child_env = env;
  child_env["CNI_COMMAND"] = std::string(command);
  absl::StatusOr<ProcessOutput> out = runProcess(*path, child_env, conf, timeout_);
  const std::string what = cat("ipam ", type_, " ", command);
  if (!out.ok()) {
    if (out.status().code() == absl::StatusCode::kDeadlineExceeded) {
      return withStatusCode(cniError(ErrorCode::kTryAgainLater, cat(what, ": ", out.status().message())),
                            absl::StatusCode::kDeadlineExceeded);
    }
    return cniError(ErrorCode::kInternal, cat(what, ": ", out.status().message()));
  }
  if (!out->err.empty()) {
    log_.info(cat(what, " stderr: ", trimmed(std::string_view(out->err).substr(0, kMaxLoggedStderr))));
  }
  if (out->exit_code == 0) return std::move(out->out);

  // Spec: a failing plugin prints an error object on stdout. Keep its code
  // (a delegate's "try again later" stays retryable) and its message.
  json err = json::parse(out->out, nullptr, false);
  if (err.is_object() && err.contains("code") && err["code"].is_number_integer()) {
    std::string msg = err.value("msg", std::string("(no message)"));
    if (!msg.empty() && err.contains("details") && err["details"].is_string() &&
        !err["details"].get<std::string>().empty()) {
      msg = cat(msg, " (", err["details"].get<std::string>(), ")");
    }
    return cniError(static_cast<ErrorCode>(err["code"].get<int>()), cat(what, ": ", msg));
  }
  return cniError(ErrorCode::kInternal,
                  cat(what, ": exited with status ", out->exit_code, " without an error object"),
                  trimmed(out->err.substr(0, kMaxLoggedStderr)));
}

absl::StatusOr<std::string> IpamDelegate::execNegotiated(std::string_view command, std::string_view conf,
                                                         const Environment& env) {
  absl::StatusOr<std::string> out = exec(command, conf, env);
  if (out.ok() || cniCodeOf(out.status()) != ErrorCode::kIncompatibleVersion) return out;
  json doc = json::parse(conf, nullptr, false);
  if (!doc.is_object() || doc.value("cniVersion", std::string()) != "1.1.0") return out;
  log_.info(cat("ipam ", type_, " does not speak 1.1.0; asking again in 1.0.0"));
  return exec(command, rewriteVersion(conf, "1.0.0"), env);
}

absl::StatusOr<std::string> IpamDelegate::addRaw(std::string_view conf) {
  return execNegotiated("ADD", conf, env_);
}

absl::StatusOr<Result> IpamDelegate::parseAddResult(std::string_view output) const {
  const std::string what = cat("ipam ", type_, " ADD");
  json doc = json::parse(output, nullptr, false);
  if (doc.is_discarded()) return cniError(ErrorCode::kDecodeFailure, cat(what, ": result is not JSON"));
  absl::StatusOr<Result> result = parseResult(doc, what);
  if (!result.ok()) return result.status();
  if (result->ips.empty()) {
    return cniError(ErrorCode::kDecodeFailure,
                    cat(what, ": result has no IPs (sluiced needs an IPv4 or an IPv6 address, or both)"));
  }
  // IPAM plugins are unaware of interfaces (spec "IP Allocation"); indexes
  // are ours to fill in, so drop any it sent.
  result->interfaces = json::array();
  for (json& ip : result->ips) ip.erase("interface");
  return result;
}

absl::Status IpamDelegate::del(std::string_view conf,
                               const std::optional<std::pair<std::string, std::string>>& attachment) {
  Environment env = env_;
  if (attachment) {
    env["CNI_CONTAINERID"] = attachment->first;
    env["CNI_IFNAME"] = attachment->second;
    env.erase("CNI_NETNS");
  }
  return execNegotiated("DEL", conf, env).status();
}

absl::Status IpamDelegate::check(std::string_view conf) { return execNegotiated("CHECK", conf, env_).status(); }

absl::Status IpamDelegate::gc(std::string_view conf) { return exec("GC", conf, env_).status(); }

absl::Status IpamDelegate::status(std::string_view conf) { return exec("STATUS", conf, env_).status(); }

absl::StatusOr<std::vector<std::string>> IpamDelegate::supportedVersions() {
  json req = {{"cniVersion", std::string(kLatestVersion)}};
  absl::StatusOr<std::string> out = exec("VERSION", req.dump(), env_);
  if (!out.ok()) return out.status();
  json doc = json::parse(*out, nullptr, false);
  std::vector<std::string> versions;
  if (doc.is_object() && doc.contains("supportedVersions") && doc["supportedVersions"].is_array()) {
    for (const json& v : doc["supportedVersions"]) {
      if (v.is_string()) versions.push_back(v.get<std::string>());
    }
  }
  return versions;
}

}  // namespace sluice::cni
