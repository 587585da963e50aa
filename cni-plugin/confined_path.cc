// See confined_path.h.
#include "cni-plugin/confined_path.h"

#include <algorithm>

#include "absl/status/status.h"
#include "cni-plugin/text.h"

namespace sluice::cni {
namespace {

// Components of a normalised absolute path ("/" has none).
std::vector<std::string> componentsOf(std::string_view normalised) {
  std::vector<std::string> out;
  size_t pos = 1;
  while (pos < normalised.size()) {
    size_t next = normalised.find('/', pos);
    if (next == std::string_view::npos) next = normalised.size();
    out.emplace_back(normalised.substr(pos, next - pos));
    pos = next + 1;
  }
  return out;
}

}  // namespace

std::string ConfinedPath::str() const {
  std::string out = root;
  for (const std::string& c : components) {
    if (out.empty() || out.back() != '/') out.push_back('/');
    out += c;
  }
  return out;
}

ConfinedPath ConfinedPath::child(std::string_view name) const {
  ConfinedPath out = *this;
  out.components.emplace_back(name);
  return out;
}

std::optional<std::string> normaliseAbsolutePath(std::string_view path) {
  if (path.empty() || path[0] != '/' || path.find('\0') != std::string_view::npos) return std::nullopt;
  std::string out;
  size_t pos = 0;
  while (pos < path.size()) {
    while (pos < path.size() && path[pos] == '/') ++pos;
    size_t next = path.find('/', pos);
    if (next == std::string_view::npos) next = path.size();
    std::string_view part = path.substr(pos, next - pos);
    pos = next;
    if (part.empty() || part == ".") continue;
    if (part == "..") return std::nullopt;
    out.push_back('/');
    out.append(part);
  }
  return out.empty() ? std::string("/") : out;
}

absl::StatusOr<ConfinedPath> confinePath(std::string_view path, std::string_view root, bool allow_root) {
  std::optional<std::string> p = normaliseAbsolutePath(path);
  if (!p) {
    return absl::InvalidArgumentError(
        asv(cat("must be an absolute path without \"..\" components, got \"", path, "\"")));
  }
  std::optional<std::string> r = normaliseAbsolutePath(root);
  if (!r) return absl::InvalidArgumentError(asv(cat("the node config's directory \"", root, "\" is not usable")));
  std::vector<std::string> path_parts = componentsOf(*p);
  std::vector<std::string> root_parts = componentsOf(*r);
  const bool inside = path_parts.size() >= root_parts.size() &&
                      std::equal(root_parts.begin(), root_parts.end(), path_parts.begin());
  if (!inside || (!allow_root && path_parts.size() == root_parts.size())) {
    return absl::InvalidArgumentError(asv(cat("must be inside ", *r, "/ (the node's sluice-cni config), got \"", path, "\"")));
  }
  return ConfinedPath{*r, std::vector<std::string>(path_parts.begin() + static_cast<std::ptrdiff_t>(root_parts.size()),
                                                   path_parts.end())};
}

}  // namespace sluice::cni
