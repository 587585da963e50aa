// See dispatcher.h.
#include "cni-plugin/dispatcher.h"

#include <chrono>
#include <exception>
#include <optional>

#include <nlohmann/json.hpp>

#include "cni-plugin/attachment_store.h"
#include "cni-plugin/attachment_teardown.h"
#include "cni-plugin/cni_error.h"
#include "cni-plugin/commands.h"
#include "cni-plugin/dataplane_client.h"
#include "cni-plugin/file_util.h"
#include "cni-plugin/ipam_delegate.h"
#include "cni-plugin/logger.h"
#include "cni-plugin/netconf.h"
#include "cni-plugin/node_config.h"
#include "cni-plugin/node_policy.h"
#include "cni-plugin/text.h"

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
  for (const SpecVersion& v : kSpecVersions) out["supportedVersions"].push_back(std::string(v.name));
  io.out << out.dump() << '\n';
  return 0;
}

// A verb the config's spec version does not have is the spec's
// "incompatible version" (1): the runtime asked for something that version
// cannot express.
absl::Status verbInVersion(Command command, std::string_view version) {
  bool (*has)(const SpecVersion&) = nullptr;
  switch (command) {
    case Command::kCheck: has = [](const SpecVersion& v) { return v.has_check; }; break;
    case Command::kGc:
    case Command::kStatus: has = [](const SpecVersion& v) { return v.has_gc_and_status; }; break;
    default: return absl::OkStatus();
  }
  if (has(specVersion(version))) return absl::OkStatus();
  std::string_view first;
  for (const SpecVersion& v : kSpecVersions) {
    if (has(v)) {
      first = v.name;
      break;
    }
  }
  return cniError(ErrorCode::kIncompatibleVersion, cat(commandName(command), " needs cniVersion ", first,
                                                       " or later, config says ", version));
}

int dispatch(const PluginIo& io, Logger& log) {
  absl::StatusOr<Command> command = parseCommand(io.env);
  if (!command.ok()) return fail(io, log, command.status(), peekCniVersion(io.stdin_data));
  if (*command == Command::kVersion) return runVersion(io, log);

  absl::StatusOr<CniEnv> env = parseEnv(io.env);
  if (!env.ok()) return fail(io, log, env.status(), peekCniVersion(io.stdin_data));
  absl::StatusOr<NetConf> conf = parseNetConf(io.stdin_data);
  if (!conf.ok()) return fail(io, log, conf.status(), peekCniVersion(io.stdin_data));

  absl::StatusOr<NodeConfig> node = loadNodeConfig(io.env);
  if (!node.ok()) return fail(io, log, node.status(), conf->cni_version);
  // DEL must succeed for whatever ADD refuses (nothing of it can exist, and
  // a DEL that fails fails again on every retry, leaking the sandbox), so for
  // DEL a path the node refuses is logged and left alone instead.
  const bool tolerant = env->command == Command::kDel;

  absl::StatusOr<std::optional<ConfinedPath>> log_file = confineLogFile(*conf, *node);
  std::string log_file_trouble;
  if (log_file.ok() && *log_file) {
    // A log file that cannot be opened must not fail the pod's network set-up.
    absl::StatusOr<UniqueFd> fd = openForAppend(**log_file, 0640);
    if (fd.ok()) {
      log.useFile(std::move(*fd));
    } else {
      log_file_trouble = cat(fd.status().message(), "; logging to stderr");
    }
  }
  log.setContext(env->container_id.empty()
                     ? std::string(commandName(env->command))
                     : cat(commandName(env->command), " ", env->container_id.substr(0, 12), "/", env->ifname));
  if (!log_file.ok()) {
    if (!tolerant) return fail(io, log, log_file.status(), conf->cni_version);
    log_file_trouble = cat(log_file.status().message(), "; logging to stderr");
  }
  if (!log_file_trouble.empty()) log.warn(log_file_trouble);
  for (const std::string& field : conf->unknown_fields) log.info(cat("ignoring unknown field \"", field, "\""));
  if (!env->ignored_args.empty()) log.warn(cat(env->ignored_args, "; ignored (", commandName(env->command), " needs none of it)"));
  if (!env->refused_ifname.empty()) {
    log.info(cat(env->refused_ifname, "; ADD refuses such a name, so there is nothing to delete"));
    return 0;
  }

  if (absl::Status s = verbInVersion(env->command, conf->cni_version); !s.ok()) {
    return fail(io, log, s, conf->cni_version);
  }

  absl::StatusOr<ConfinedPath> data_dir = confineDataDir(*conf, *node);
  if (!data_dir.ok()) {
    if (!tolerant) return fail(io, log, data_dir.status(), conf->cni_version);
    log.warn(cat(data_dir.status().message(), "; ADD refuses this config, so it has no attachment to delete"));
    return 0;
  }
  // Every verb that may create or remove a pod's socket directory needs it;
  // the others refuse it as ADD would, so a config is valid or not alike.
  std::optional<ConfinedPath> socket_dir;
  if (absl::StatusOr<ConfinedPath> p = confineSocketDir(*conf, *node); p.ok()) {
    socket_dir = std::move(*p);
  } else if (!tolerant) {
    return fail(io, log, p.status(), conf->cni_version);
  } else {
    log.warn(cat(p.status().message(), "; not touched"));
  }
  std::optional<ConfinedPath> device_info_file;
  if (absl::StatusOr<std::optional<ConfinedPath>> p = confineDeviceInfoFile(conf->device_info_file, *node); p.ok()) {
    device_info_file = std::move(*p);
  } else if (!tolerant) {
    return fail(io, log, p.status(), conf->cni_version);
  } else {
    log.warn(cat(p.status().message(), "; not touched"));
  }

  // Only a sluiced the node lists hears about its pods. DEL still reaches
  // the node's own sluiced (the only one any port of ours can be on).
  absl::StatusOr<std::string> api_socket = confineApiSocket(*conf, *node);
  if (!api_socket.ok()) {
    if (!tolerant || node->api_sockets.empty()) return fail(io, log, api_socket.status(), conf->cni_version);
    log.warn(cat(api_socket.status().message(), "; deleting at ", node->api_sockets.front()));
    api_socket = node->api_sockets.front();
  }

  const std::chrono::milliseconds timeout(conf->timeout_ms);
  DataplaneClient dataplane(*api_socket, timeout);
  AttachmentStore store(*data_dir, conf->name);
  // The delegate gets our environment; one CNI_ARGS we ignored would fail
  // it as well (host-local parses it).
  Environment delegate_env = io.env;
  if (!env->ignored_args.empty()) delegate_env.erase("CNI_ARGS");
  std::optional<IpamDelegate> ipam;
  if (conf->ipam) ipam.emplace(delegate_env, env->path, conf->ipam->type, timeout, log);
  CommandContext ctx{*env,  *conf, io.stdin_data, log, dataplane, store, ipam ? &*ipam : nullptr,
                     *node, device_info_file, socket_dir};

  std::optional<json> result;  // ADD's
  absl::Status status;
  switch (env->command) {
    case Command::kAdd: {
      absl::StatusOr<json> added = runAdd(ctx);
      if (added.ok()) {
        result = std::move(*added);
      } else {
        status = added.status();
      }
      break;
    }
    case Command::kDel: status = runDel(ctx); break;
    case Command::kCheck: status = runCheck(ctx); break;
    case Command::kStatus: status = runStatus(ctx); break;
    case Command::kGc: status = runGc(ctx); break;
    case Command::kVersion: break;  // handled above
  }
  // Pending deletes need sluiced, which this invocation has just reached
  // (GC finishes them all itself; CHECK only looks).
  const bool retries = env->command == Command::kAdd || env->command == Command::kDel ||
                       env->command == Command::kStatus;
  if (retries && dataplane.answered()) retryPendingDeletes(ctx, {env->container_id, env->ifname});
  if (!status.ok()) return fail(io, log, status, conf->cni_version);
  if (result) io.out << result->dump() << '\n';
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
