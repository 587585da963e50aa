// What the node's administrator lets a port's routed prefixes be, checked
// by the control thread at AddPort and again for each port restored from the
// checkpoint (a checkpoint written under a wider policy does not outlive a
// narrower one). Every other node routes a local prefix's traffic here, ahead
// of its external route, so a prefix must lie inside routed-prefix-ranges
// and cover none of what belongs to someone else: the special ranges, the
// cluster's services, the node's own host addresses and external gateway.
// (The overlay feature refuses its VTEP's subnet itself.)
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "common/net_address.h"
#include "dataplane/config/config.h"

namespace sluice {

// FailedPrecondition naming the first prefix refused and why ("routed_prefixes:
// 128.0.0.0/1 overlaps 224.0.0.0/4 (multicast)"); OK for none.
absl::Status checkRoutedPrefixPolicy(const SluicedConfig& config, const std::vector<Ipv4Cidr>& v4,
                                     const std::vector<Ipv6Cidr>& v6);

}  // namespace sluice
