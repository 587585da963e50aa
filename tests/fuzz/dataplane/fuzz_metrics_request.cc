// libFuzzer target: what the metrics endpoint answers a request (method,
// path with any query string, the client's address) under an allow-list
// read from sluiced's config text. Whoever reaches the port chooses all
// but the list; the operator writes the list by hand. Any input must be
// answered with one of the endpoint's statuses, build the page only for an
// allowed GET or HEAD of /metrics, and refuse every peer outside the list.
#include <cstdint>
#include <string>
#include <string_view>

#include "dataplane/api/metrics_http.h"
#include "dataplane/config/ipv4_allow_list.h"

namespace {

// The next NUL-terminated field of the input (the rest if there is no NUL).
std::string_view field(std::string_view& in) {
  const size_t end = in.find('\0');
  std::string_view f = in.substr(0, end);
  in = end == std::string_view::npos ? std::string_view() : in.substr(end + 1);
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  const std::string_view list_text = field(in);
  const std::string_view method = field(in);
  const std::string_view path = field(in);
  const std::string peer(field(in));
  auto list = sluice::Ipv4AllowList::parse(list_text);
  if (!list.ok()) return 0;
  // The civetweb form names every network the list holds.
  if (!list->allowsEveryone() && list->civetwebAcl().rfind("-0.0.0.0/0,+", 0) != 0) __builtin_trap();
  const bool allowed = list->allows(peer);
  if (list->allowsEveryone() && !allowed) __builtin_trap();
  int renders = 0;
  const sluice::HttpAnswer a = sluice::answerMetricsRequest(method, path, allowed, [&] {
    ++renders;
    return std::string("sluice_up 1\n");
  });
  switch (a.status) {
    case 200: case 403: case 404: case 405: break;
    default: __builtin_trap();
  }
  if (!allowed && (a.status != 403 || renders != 0)) __builtin_trap();
  if ((renders != 0) != (a.status == 200)) __builtin_trap();
  if (method != "HEAD" && a.content_length != a.body.size()) __builtin_trap();
  if (method == "HEAD" && !a.body.empty()) __builtin_trap();
  return 0;
}
