// See dispatcher.h.
#include "cni-plugin/dispatcher.h"

#include <chrono>
#include <exception>
#include <optional>

#include <nlohmann/json.hpp>

#include "cni-plugin/text.h"
#include "cni-plugin/attachment_store.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/dataplane_client.h"
#include "cni-plugin/ipam_delegate.h"
#include "cni-plugin/logger.h"
#include "cni-plugin/netconf.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

int fail(const PluginIo& io, Logger& log, const absl::Status& status, std::string_view version) {
  log.error(cat("code ", static_cast<int>(cniCodeOf(status)), ": ", status.message()));
  io.out << errorJson(status, version).dump() << '\n';
  return 1;
}

// VERSION: stdin is optional ({"cniVersion": ...}); the answer uses the
// asked-for version when we speak it.
int runVersion(const PluginIo& io, Logger& log) {
  std::string version(kLatestVersion);
  if (io.stdin_data.find_first_not_of(" \t\r\n") != std::string_view::npos) {
    json doc = json::parse(io.stdin_data, nullptr, false);
    if (!doc.is_object()) {
      return fail(io, log, cniError(ErrorCode::kDecodeFailure, "VERSION: stdin is not a JSON object"), version);
    }
    if (auto it = doc.find("cniVersion"); it != doc.end() && it->is_string() && isSupportedVersion(it->get<std::string>())) {
      version = it->get<std::string>();
    }
  }
  json out = {{"cniVersion", version}, {"supportedVersions", json::array()}};
  for (std::string_view v : kSupportedVersions) out["supportedVersions"].push_back(std::string(v));
  io.out << out.dump() << '\n';
  return 0;
}

int dispatch(const PluginIo& io, Logger& log) {
  absl::StatusOr<Command> command = parseCommand(io.env);
  if (!command.ok()) return fail(io, log, command.status(), peekCniVersion(io.stdin_data));
  if (*command == Command::kVersion) return runVersion(io, log);

  absl::StatusOr<CniEnv> env = parseEnv(io.env);
  if (!env.ok()) return fail(io, log, env.status(), peekCniVersion(io.stdin_data));
  absl::StatusOr<NetConf> conf = parseNetConf(io.stdin_data);
  if (!conf.ok()) return fail(io, log, conf.status(), peekCniVersion(io.stdin_data));

  if (!conf->log_file.empty()) log.openFile(conf->log_file);
  log.setContext(env->container_id.empty()
                     ? std::string(commandName(env->command))
                     : cat(commandName(env->command), " ", env->container_id.substr(0, 12), "/", env->ifname));
  for (const std::string& field : conf->unknown_fields) log.info(cat("ignoring unknown field \"", field, "\""));

  if ((env->command == Command::kStatus || env->command == Command::kGc) && conf->cni_version == "1.0.0") {
    return fail(io, log,
                cniError(ErrorCode::kIncompatibleVersion,
                         cat(commandName(env->command), " needs cniVersion 1.1.0, config says 1.0.0")),
                conf->cni_version);
  }

  const std::chrono::milliseconds timeout(conf->timeout_ms);
  DataplaneClient dataplane(conf->api_socket, timeout);
  AttachmentStore store(conf->data_dir, conf->name);
  std::optional<IpamDelegate> ipam;
  if (conf->ipam) ipam.emplace(io.env, env->path, conf->ipam->type, timeout, log);
  CommandContext ctx{*env, *conf, io.stdin_data, log, dataplane, store, ipam ? &*ipam : nullptr};

  absl::Status status;
  switch (env->command) {
    case Command::kAdd: {
      absl::StatusOr<json> result = runAdd(ctx);
      if (!result.ok()) return fail(io, log, result.status(), conf->cni_version);
      io.out << result->dump() << '\n';
      return 0;
    }
    case Command::kDel: status = runDel(ctx); break;
    case Command::kCheck: status = runCheck(ctx); break;
    case Command::kStatus: status = runStatus(ctx); break;
    case Command::kGc: status = runGc(ctx); break;
    case Command::kVersion: break;  // handled above
  }
  if (!status.ok()) return fail(io, log, status, conf->cni_version);
  return 0;
}

}  // namespace

int runPlugin(const PluginIo& io) {
  Logger log(io.err);
  // Our code reports errors as values; this only catches what a library may
  // still throw (std::bad_alloc, a JSON accessor we got wrong), so that the
  // runtime always gets a well-formed error instead of an abort.
  try {
    return dispatch(io, log);
  } catch (const std::exception& e) {
    return fail(io, log, cniError(ErrorCode::kInternal, cat("internal error: ", e.what())),
                peekCniVersion(io.stdin_data));
  }
}

}  // namespace sluice::cni
