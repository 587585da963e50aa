#include "agent/prefix_publish.h"

#include <algorithm>

namespace sluice::agent {

std::optional<nlohmann::json> routedPrefixesPatch(const std::vector<std::string>& local, const KubeNode& own) {
  // Both sides as the annotation's sorted text, so that order and spelling
  // (sluiced's normalised CIDRs) never cause a write.
  std::vector<std::string> shown;
  for (const Ipv4Cidr& c : own.routed_prefixes) shown.push_back(c.toString());
  for (const Ipv6Cidr& c : own.routed_prefixes_v6) shown.push_back(c.toString());
  std::vector<std::string> want;
  for (const std::string& text : local) {
    if (auto a = Ipv4Cidr::parse(text)) want.push_back(a->toString());
    else if (auto b = Ipv6Cidr::parse(text)) want.push_back(b->toString());
  }
  const bool unreadable = std::any_of(own.problems.begin(), own.problems.end(),
                                      [](const auto& p) { return p.first == NodeProblem::kBadRoutedPrefixes; });
  if (!unreadable && formatRoutedPrefixesAnnotation(shown) == formatRoutedPrefixesAnnotation(want)) return std::nullopt;
  // A merge patch of this one annotation (null removes it): nothing else of
  // the Node is sent.
  nlohmann::json value = want.empty() ? nlohmann::json(nullptr) : nlohmann::json(formatRoutedPrefixesAnnotation(want));
  return nlohmann::json{{"metadata", {{"annotations", {{kRoutedPrefixesAnnotation, value}}}}}};
}

}  // namespace sluice::agent
