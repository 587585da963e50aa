#include "dataplane/api/prometheus_text.h"

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace sluice {

std::string escapeLabelValue(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string escapeHelp(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (char c : help) {
    if (c == '\\') out += "\\\\";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string formatMetricDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buf[64];
  // Plain decimals where they are short (bucket bounds like 0.0001 read as
  // written), exponents only for the very large or small.
  const double magnitude = std::fabs(value);
  const bool fixed = magnitude == 0 || (magnitude >= 1e-5 && magnitude < 1e16);
  auto [end, ec] = fixed ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                         : std::to_chars(buf, buf + sizeof buf, value);
  if (ec != std::errc()) return "NaN";  // cannot happen for a finite double in 64 bytes
  return std::string(buf, end);
}

void PrometheusText::family(std::string_view name, MetricType type, std::string_view help) {
  if (index_.find(name) != index_.end()) return;
  index_.emplace(std::string(name), families_.size());
  families_.push_back({std::string(name), type, std::string(help), {}});
}

void PrometheusText::addLine(std::string_view family, std::string_view suffix, const MetricLabels& labels,
                             std::string_view value) {
  auto it = index_.find(family);
  // A sample of an undeclared family is a bug of the caller, not of input.
  if (it == index_.end()) throw std::logic_error("metric family not declared: " + std::string(family));
  std::string& out = families_[it->second].samples;
  out.append(family).append(suffix);
  if (!labels.empty()) {
    out += '{';
    for (size_t i = 0; i < labels.size(); ++i) {
      if (i > 0) out += ',';
      out.append(labels[i].first).append("=\"").append(escapeLabelValue(labels[i].second)).append("\"");
    }
    out += '}';
  }
  out.append(" ").append(value).append("\n");
}

void PrometheusText::sample(std::string_view family, std::string_view suffix, const MetricLabels& labels,
                            uint64_t value) {
  addLine(family, suffix, labels, std::to_string(value));
}

void PrometheusText::sample(std::string_view family, std::string_view suffix, const MetricLabels& labels,
                            double value) {
  addLine(family, suffix, labels, formatMetricDouble(value));
}

std::string PrometheusText::str() const {
  std::string out;
  for (const Family& f : families_) {
    // A family without samples (e.g. no PMD has a tunnel) is left out.
    if (f.samples.empty()) continue;
    out.append("# HELP ").append(f.name).append(" ").append(escapeHelp(f.help)).append("\n");
    out.append("# TYPE ").append(f.name).append(" ");
    out.append(f.type == MetricType::kCounter ? "counter" : f.type == MetricType::kGauge ? "gauge" : "histogram");
    out.append("\n").append(f.samples);
  }
  return out;
}

}  // namespace sluice
