// Names of devices as sysfs and the SR-IOV device plugin spell them, checked
// before they become path components (a name that is not one could walk the
// path elsewhere). Shared by sluiced's VF pools and the CNI plugin.
#pragma once

#include <string_view>

namespace sluice {

// "DDDD:BB:DD.F" in lower-case hex (the form sysfs and the SR-IOV device
// plugin use): domain 4 digits, bus 2, device 2 (< 0x20), function 0-7.
bool isPciAddress(std::string_view text);

// A netdev name usable as a single sysfs path component (IFNAMSIZ, no '/').
bool isNetdevName(std::string_view name);

}  // namespace sluice
