#include "dataplane/api/observe_format.h"

#include <absl/strings/str_cat.h>

namespace sluice {

std::string formatTraceRecord(const v1::TraceRecord& r, uint32_t n) {
  std::string out = n == 0 ? "packet" : absl::StrCat("#", n, " pmd ", r.pmd());
  absl::StrAppend(&out, " in_port ", r.in_port(), ", ", r.length(), " bytes\n");
  absl::StrAppend(&out, "  parse:    ", r.parse(), "  ", r.key(), "\n");
  if (!r.decap().empty()) absl::StrAppend(&out, "  decap:    ", r.decap(), "\n");
  absl::StrAppend(&out, "  tier:     ", r.tier());
  if (!r.upcall().empty()) absl::StrAppend(&out, " (upcall ", r.upcall(), ")");
  absl::StrAppend(&out, "\n");
  if (!r.megaflow_match().empty()) {
    absl::StrAppend(&out, "  megaflow: ", r.megaflow() >= 0 ? absl::StrCat("#", r.megaflow(), " ") : "",
                    r.megaflow_match(), "\n");
    absl::StrAppend(&out, "  mask:     ", r.megaflow_mask(), "\n");
  }
  absl::StrAppend(&out, "  actions:  ", r.actions(), "\n");
  if (r.output_port() >= 0) absl::StrAppend(&out, "  result:   output to port ", r.output_port(), "\n");
  else if (!r.drop_reason().empty()) absl::StrAppend(&out, "  result:   dropped (", r.drop_reason(), ")\n");
  if (r.dropped() != 0) absl::StrAppend(&out, "  (", r.dropped(), " records lost so far: the trace ring was full)\n");
  return out;
}

}  // namespace sluice
