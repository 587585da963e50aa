// sluicectl's text for `config get` and `config set`: one setting per line,
// its key, value, whether it is live (changes while sluiced runs) or needs a
// restart, and where the value came from. sluicectl only.
#pragma once

#include <string>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {

std::string formatConfig(const v1::GetConfigResponse& resp);
std::string formatConfigSet(const v1::SetConfigResponse& resp);

}  // namespace sluice
