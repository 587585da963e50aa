// See remote_node_decode.h.
#include "dataplane/modules/overlay/api/remote_node_decode.h"

#include <absl/strings/str_cat.h>

#include "common/remote_node_limits.h"

namespace sluice {
namespace {

grpc::Status invalid(const std::string& why) { return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, why); }

}  // namespace

grpc::Status decodeNode(const v1::RemoteNode& in, RemoteNodeConfig& node, NodeSource& source) {
  node.name = in.name();
  if (!parseVtep(in.vtep(), node)) return invalid(absl::StrCat("vtep: '", in.vtep(), "' is not an IPv4 or IPv6 address"));
  // The counts first: a request of thousands of entries is refused before
  // any is parsed.
  if (static_cast<size_t>(in.pod_cidrs_size()) > 2 * kMaxPodCidrsPerFamily)
    return invalid(absl::StrCat("pod_cidrs: ", in.pod_cidrs_size(), " given; at most ", kMaxPodCidrsPerFamily,
                                " per family"));
  if (static_cast<size_t>(in.routed_prefixes_size()) > kMaxRoutedPrefixesPerNode)
    return invalid(absl::StrCat("routed_prefixes: ", in.routed_prefixes_size(), " given; at most ",
                                kMaxRoutedPrefixesPerNode, " per node"));
  // One list for both families, each entry's own syntax telling which.
  for (const std::string& text : in.pod_cidrs()) {
    if (auto v4 = Ipv4Cidr::parse(text)) {
      node.pod_cidrs.push_back(*v4);
    } else if (auto v6 = Ipv6Cidr::parse(text)) {
      node.pod_cidrs_v6.push_back(*v6);
    } else {
      return invalid(absl::StrCat("pod_cidrs: '", text, "' is not an IPv4 or IPv6 CIDR (host bits zero)"));
    }
  }
  if (node.pod_cidrs.size() > kMaxPodCidrsPerFamily || node.pod_cidrs_v6.size() > kMaxPodCidrsPerFamily)
    return invalid(absl::StrCat("pod_cidrs: ", node.pod_cidrs.size(), " IPv4 and ", node.pod_cidrs_v6.size(),
                                " IPv6; at most ", kMaxPodCidrsPerFamily, " per family"));
  for (const std::string& text : in.routed_prefixes()) {
    if (auto v4 = Ipv4Cidr::parse(text)) {
      node.routed_prefixes.push_back(*v4);
    } else if (auto v6 = Ipv6Cidr::parse(text)) {
      node.routed_prefixes_v6.push_back(*v6);
    } else {
      return invalid(absl::StrCat("routed_prefixes: '", text, "' is not an IPv4 or IPv6 CIDR (host bits zero)"));
    }
  }
  if (!in.mac().empty()) {
    auto mac = MacAddress::parse(in.mac());
    if (!mac || mac->isMulticast() || mac->isZero())
      return invalid(absl::StrCat("mac: '", in.mac(), "' is not a unicast MAC"));
    node.mac = *mac;
  }
  // A caller names only the controller's source; the config file's is
  // sluiced's to give.
  source = in.source() == v1::NODE_SOURCE_KUBERNETES ? NodeSource::kKubernetes : NodeSource::kApi;
  return grpc::Status::OK;
}

}  // namespace sluice
