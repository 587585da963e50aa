// See cni_env.h.
#include "cni-plugin/cni_env.h"

#include <cctype>

#include "cni-plugin/text.h"
#include "cni-plugin/cni_error.h"

namespace sluice::cni {
namespace {

// File names are limited to 255 bytes; the attachment record is named
// "<container id>:<ifname>" (ifname ≤ 15); 128 is also sluiced's limit.
constexpr size_t kMaxContainerIdLen = 128;
// IFNAMSIZ (16) including the terminating NUL.
constexpr size_t kMaxIfnameLen = 15;

absl::Status envError(std::string_view msg) {
  return cniError(ErrorCode::kInvalidEnvironment, msg);
}

std::optional<std::string> lookup(const Environment& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

absl::StatusOr<std::string> required(const Environment& env, const char* name) {
  std::optional<std::string> value = lookup(env, name);
  if (!value || value->empty()) return envError(cat(name, " is required"));
  return *value;
}

// Splits on `sep`, dropping empty pieces.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (!s.empty()) {
    size_t pos = s.find(sep);
    std::string_view piece = s.substr(0, pos);
    if (!piece.empty()) out.push_back(piece);
    if (pos == std::string_view::npos) break;
    s.remove_prefix(pos + 1);
  }
  return out;
}

bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// The kernel's isspace() (lib/ctype.c): the C locale's six plus 0xA0, which
// its Latin-1 table also marks as space.
bool isKernelSpace(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u == ' ' || (u >= '\t' && u <= '\r') || u == 0xA0;
}

}  // namespace

std::string_view commandName(Command command) {
  switch (command) {
    case Command::kAdd: return "ADD";
    case Command::kDel: return "DEL";
    case Command::kCheck: return "CHECK";
    case Command::kVersion: return "VERSION";
    case Command::kStatus: return "STATUS";
    case Command::kGc: return "GC";
  }
  return "?";
}

std::optional<std::string> CniEnv::arg(std::string_view key) const {
  for (const auto& [k, v] : args) {
    if (k == key) return v;
  }
  return std::nullopt;
}

absl::StatusOr<Command> parseCommand(const Environment& env) {
  absl::StatusOr<std::string> name = required(env, "CNI_COMMAND");
  if (!name.ok()) return name.status();
  if (*name == "ADD") return Command::kAdd;
  if (*name == "DEL") return Command::kDel;
  if (*name == "CHECK") return Command::kCheck;
  if (*name == "VERSION") return Command::kVersion;
  if (*name == "STATUS") return Command::kStatus;
  if (*name == "GC") return Command::kGc;
  return envError(cat("CNI_COMMAND: unknown command \"", *name, "\""));
}

absl::Status validateContainerId(std::string_view id) {
  if (id.empty()) return envError("CNI_CONTAINERID is required");
  if (id.size() > kMaxContainerIdLen) {
    return envError(cat("CNI_CONTAINERID: longer than ", kMaxContainerIdLen, " characters"));
  }
  if (!isAlnum(id[0])) return envError("CNI_CONTAINERID: must start with an alphanumeric character");
  for (char c : id) {
    if (!isAlnum(c) && c != '_' && c != '.' && c != '-') {
      return envError("CNI_CONTAINERID: may contain only alphanumerics, '_', '.' and '-'");
    }
  }
  return absl::OkStatus();
}

absl::Status validateIfname(std::string_view ifname) {
  if (ifname.empty()) return envError("CNI_IFNAME is required");
  if (ifname == "." || ifname == "..") return envError("CNI_IFNAME: must not be \".\" or \"..\"");
  if (ifname.size() > kMaxIfnameLen) {
    return envError(cat("CNI_IFNAME: longer than ", kMaxIfnameLen, " bytes"));
  }
  for (char c : ifname) {
    if (c == '/' || c == ':' || c == '\0' || isKernelSpace(c)) {
      return envError("CNI_IFNAME: must not contain '/', ':', NUL or whitespace");
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<CniEnv> parseEnv(const Environment& env) {
  CniEnv out;
  absl::StatusOr<Command> command = parseCommand(env);
  if (!command.ok()) return command.status();
  out.command = *command;

  // Which variables each verb requires (CNI spec 1.1, "Parameters" per verb).
  const bool needs_attachment =
      out.command == Command::kAdd || out.command == Command::kDel || out.command == Command::kCheck;
  const bool needs_netns = out.command == Command::kAdd || out.command == Command::kCheck;
  const bool needs_path = out.command == Command::kCheck || out.command == Command::kGc;

  if (needs_attachment) {
    out.container_id = lookup(env, "CNI_CONTAINERID").value_or("");
    if (absl::Status s = validateContainerId(out.container_id); !s.ok()) return s;
    out.ifname = lookup(env, "CNI_IFNAME").value_or("");
    if (absl::Status s = validateIfname(out.ifname); !s.ok()) {
      if (out.command != Command::kDel || out.ifname.empty()) return s;
      out.refused_ifname = std::string(s.message());
    }
  }
  out.netns = lookup(env, "CNI_NETNS").value_or("");
  if (needs_netns && out.netns.empty()) return envError("CNI_NETNS is required");

  std::string path = lookup(env, "CNI_PATH").value_or("");
  for (std::string_view dir : split(path, ':')) {
    out.path.emplace_back(dir);
  }
  if (needs_path && out.path.empty()) return envError("CNI_PATH is required");

  // CNI_ARGS: "K=V;K=V". A pair without '=' or with an empty key is malformed.
  const bool needs_args = out.command == Command::kAdd || out.command == Command::kCheck;
  std::string args = lookup(env, "CNI_ARGS").value_or("");
  for (std::string_view pair : split(args, ';')) {
    size_t eq = pair.find('=');
    if (eq == std::string_view::npos || eq == 0) {
      std::string why = cat("CNI_ARGS: malformed pair \"", pair, "\" (want KEY=VALUE)");
      if (needs_args) return envError(why);
      out.args.clear();
      out.ignored_args = std::move(why);
      break;
    }
    out.args.emplace_back(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1)));
  }
  return out;
}

}  // namespace sluice::cni
