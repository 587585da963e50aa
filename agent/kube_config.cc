#include "agent/kube_config.h"

#include <absl/strings/escaping.h>
#include <absl/strings/str_cat.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

namespace sluice::agent {
namespace {

std::string scalar(const YAML::Node& n, const char* key) {
  const YAML::Node v = n[key];
  return v && v.IsScalar() ? v.as<std::string>() : std::string();
}

// The entry of list `kind` ("clusters", "users", "contexts") named `name`.
YAML::Node named(const YAML::Node& root, const char* kind, const std::string& name) {
  const YAML::Node list = root[kind];
  if (!list || !list.IsSequence()) return YAML::Node();
  for (const YAML::Node& item : list)
    if (item.IsMap() && scalar(item, "name") == name) return item;
  return YAML::Node();
}

std::string relativeTo(const std::filesystem::path& dir, const std::string& p) {
  if (p.empty() || std::filesystem::path(p).is_absolute()) return p;
  return (dir / p).string();
}

absl::StatusOr<std::string> base64(const std::string& field, const std::string& text) {
  std::string out;
  if (!absl::Base64Unescape(text, &out)) return absl::InvalidArgumentError(absl::StrCat(field, ": not base64"));
  return out;
}

}  // namespace

absl::StatusOr<KubeConfig> inClusterConfig(const std::map<std::string, std::string>& env, const std::string& sa_dir) {
  auto host = env.find("KUBERNETES_SERVICE_HOST");
  auto port = env.find("KUBERNETES_SERVICE_PORT");
  if (host == env.end() || port == env.end() || host->second.empty() || port->second.empty())
    return absl::FailedPreconditionError(
        "not in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT unset (give --kubeconfig)");
  KubeConfig c;
  // An IPv6 service address goes in brackets in a URL.
  const bool v6 = host->second.find(':') != std::string::npos;
  c.server = absl::StrCat("https://", v6 ? "[" : "", host->second, v6 ? "]" : "", ":", port->second);
  c.token_file = sa_dir + "/token";
  c.ca_file = sa_dir + "/ca.crt";
  if (!std::filesystem::exists(c.token_file))
    return absl::FailedPreconditionError(absl::StrCat("in cluster, but no service-account token at ", c.token_file));
  return c;
}

absl::StatusOr<KubeConfig> kubeconfigFile(const std::string& path, const std::string& context_name) {
  YAML::Node root;
  try {
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
  if (!root.IsMap()) return absl::InvalidArgumentError(absl::StrCat(path, ": not a kubeconfig (no mapping)"));
  const std::filesystem::path dir = std::filesystem::path(path).parent_path();
  try {
    const std::string ctx_name = context_name.empty() ? scalar(root, "current-context") : context_name;
    if (ctx_name.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no current-context"));
    const YAML::Node ctx = named(root, "contexts", ctx_name);
    if (!ctx || !ctx["context"].IsMap())
      return absl::InvalidArgumentError(absl::StrCat(path, ": no context '", ctx_name, "'"));
    const std::string cluster_name = scalar(ctx["context"], "cluster");
    const std::string user_name = scalar(ctx["context"], "user");
    const YAML::Node cluster_entry = named(root, "clusters", cluster_name);
    if (!cluster_entry || !cluster_entry["cluster"].IsMap())
      return absl::InvalidArgumentError(absl::StrCat(path, ": no cluster '", cluster_name, "'"));
    const YAML::Node cluster = cluster_entry["cluster"];
    KubeConfig c;
    c.server = scalar(cluster, "server");
    while (!c.server.empty() && c.server.back() == '/') c.server.pop_back();
    if (c.server.rfind("https://", 0) != 0)
      return absl::InvalidArgumentError(absl::StrCat(path, ": cluster '", cluster_name, "' server must be https://"));
    c.ca_file = relativeTo(dir, scalar(cluster, "certificate-authority"));
    if (std::string d = scalar(cluster, "certificate-authority-data"); !d.empty()) {
      auto pem = base64("certificate-authority-data", d);
      if (!pem.ok()) return pem.status();
      c.ca_pem = *pem;
    }
    c.insecure_skip_tls_verify = scalar(cluster, "insecure-skip-tls-verify") == "true";
    if (!user_name.empty()) {
      const YAML::Node user_entry = named(root, "users", user_name);
      if (!user_entry) return absl::InvalidArgumentError(absl::StrCat(path, ": no user '", user_name, "'"));
      const YAML::Node user = user_entry["user"];
      if (user && user.IsMap()) {
        if (user["exec"] || user["auth-provider"])
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": user '", user_name, "' uses exec/auth-provider, which sluice-agent does not run"));
        c.token = scalar(user, "token");
        c.token_file = relativeTo(dir, scalar(user, "tokenFile"));
        c.client_cert_file = relativeTo(dir, scalar(user, "client-certificate"));
        c.client_key_file = relativeTo(dir, scalar(user, "client-key"));
        if (std::string d = scalar(user, "client-certificate-data"); !d.empty()) {
          auto pem = base64("client-certificate-data", d);
          if (!pem.ok()) return pem.status();
          c.client_cert_pem = *pem;
        }
        if (std::string d = scalar(user, "client-key-data"); !d.empty()) {
          auto pem = base64("client-key-data", d);
          if (!pem.ok()) return pem.status();
          c.client_key_pem = *pem;
        }
      }
    }
    return c;
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": ", e.what()));
  }
}

}  // namespace sluice::agent
