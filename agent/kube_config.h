// Where the Kubernetes API is and how to authenticate to it: in-cluster (the
// service account's token and CA, KUBERNETES_SERVICE_HOST/PORT) or a
// kubeconfig file (its current context's cluster and user). Read at start
// on the main thread; the token file is re-read by the client whenever it
// changes (service-account tokens are rotated by the kubelet).
#pragma once

#include <absl/status/statusor.h>

#include <map>
#include <string>

namespace sluice::agent {

struct KubeConfig {
  std::string server;  // https://host:port, no trailing slash
  // Trust: a CA file or the CA's PEM bytes (certificate-authority-data).
  std::string ca_file;
  std::string ca_pem;
  bool insecure_skip_tls_verify = false;
  // Bearer token: literal, or a file re-read when it changes.
  std::string token;
  std::string token_file;
  // Client certificate (optional): files or PEM bytes.
  std::string client_cert_file, client_key_file;
  std::string client_cert_pem, client_key_pem;
};

inline constexpr char kServiceAccountDir[] = "/var/run/secrets/kubernetes.io/serviceaccount";

// In-cluster: `env` holds KUBERNETES_SERVICE_HOST and _PORT; `sa_dir` the
// token and ca.crt.
absl::StatusOr<KubeConfig> inClusterConfig(const std::map<std::string, std::string>& env,
                                           const std::string& sa_dir = kServiceAccountDir);
// A kubeconfig file (YAML); `context` empty: its current-context. Relative
// file paths in it are relative to the file's folder, as kubectl reads them.
absl::StatusOr<KubeConfig> kubeconfigFile(const std::string& path, const std::string& context = "");

}  // namespace sluice::agent
