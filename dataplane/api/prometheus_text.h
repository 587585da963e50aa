// The Prometheus text exposition format (version 0.0.4): metric families
// with their HELP and TYPE lines, samples with escaped labels. Families are
// kept in the order they were first named and each family's samples are
// written together, whatever order they were added in (the format requires
// one group per family). Pure: no I/O, no clock.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sluice {

enum class MetricType { kCounter, kGauge, kHistogram };

using MetricLabels = std::vector<std::pair<std::string, std::string>>;

class PrometheusText {
 public:
  // Declares a family; a second declaration of the same name keeps the
  // first one's help and type.
  void family(std::string_view name, MetricType type, std::string_view help);
  // A sample of a declared family, named `family` + `suffix` (the suffix is
  // "_bucket", "_sum" or "_count" for a histogram, else empty).
  void sample(std::string_view family, std::string_view suffix, const MetricLabels& labels, uint64_t value);
  void sample(std::string_view family, std::string_view suffix, const MetricLabels& labels, double value);
  std::string str() const;

 private:
  struct Family {
    std::string name;
    MetricType type;
    std::string help;
    std::string samples;
  };
  void addLine(std::string_view family, std::string_view suffix, const MetricLabels& labels,
               std::string_view value);
  std::vector<Family> families_;
  std::map<std::string, size_t, std::less<>> index_;
};

// Label value escaping: backslash, double quote and line feed.
std::string escapeLabelValue(std::string_view value);
// HELP text escaping: backslash and line feed.
std::string escapeHelp(std::string_view help);
// A float as the format writes it: shortest round-trip form, +Inf, -Inf, NaN.
std::string formatMetricDouble(double value);

}  // namespace sluice
