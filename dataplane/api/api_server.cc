#include "dataplane/api/api_server.h"

#include <absl/strings/str_cat.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace sluice {
namespace {

// rw for the owner only, for the socket bind() makes (mode 0777 & ~umask).
constexpr mode_t kOwnerOnlyUmask = 0177;

}  // namespace

absl::StatusOr<std::unique_ptr<grpc::Server>> startApiServer(
    const std::string& path, const std::vector<grpc::Service*>& services,
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors) {
  grpc::ServerBuilder builder;
  if (!interceptors.empty()) builder.experimental().SetInterceptorCreators(std::move(interceptors));
  builder.AddListeningPort("unix:" + path, grpc::InsecureServerCredentials());
  for (grpc::Service* service : services) builder.RegisterService(service);
  // The umask is the process's: while it is narrowed, a file any other thread
  // makes is owner-only too. At start nothing else makes files the pods need
  // (their sockets come with AddPort, served only after this returns), and
  // owner-only is never less safe.
  const mode_t saved = ::umask(kOwnerOnlyUmask);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  ::umask(saved);
  if (server == nullptr) return absl::InternalError(absl::StrCat("cannot serve the API on ", path));
  // Refuse to run with an API others could reach (e.g. a path whose
  // directory's default ACL widens the mode).
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (!exists || !S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != 0600) {
    const std::string why = exists ? "not a socket of mode 0600" : std::strerror(errno);
    server->Shutdown();
    return absl::InternalError(absl::StrCat("API socket ", path, ": ", why));
  }
  return server;
}

}  // namespace sluice
