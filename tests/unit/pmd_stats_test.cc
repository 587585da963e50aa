#include "dataplane/core/pmd_stats.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "sluice/v1/dataplane.pb.h"

namespace sluice {
namespace {

// The proto's PmdStats is kept by hand (its field numbers are the wire
// format), so nothing but this test stops it and pmd_counters.def from
// drifting apart.
TEST(PmdStatsTest, ProtoHasAFieldForEveryCounterAndNoUnlistedOne) {
  const google::protobuf::Descriptor* message = v1::PmdStats::descriptor();
  std::set<std::string> counters;
#define SLUICE_PMD_COUNTER(field, proto_field, help) counters.insert(#proto_field);
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  for (const std::string& name : counters) {
    const google::protobuf::FieldDescriptor* f = message->FindFieldByName(name);
    if (f == nullptr) {
      ADD_FAILURE() << "pmd_counters.def lists " << name << ", PmdStats has no such field";
      continue;
    }
    EXPECT_EQ(f->type(), google::protobuf::FieldDescriptor::TYPE_UINT64) << name;
    EXPECT_FALSE(f->is_repeated()) << name;
  }
  // What PmdStats reports besides counters: the PMD's identity, its NUMA
  // socket and a gauge.
  const std::set<std::string> not_counters = {"index", "lcore", "numa_socket", "megaflows"};
  for (int i = 0; i < message->field_count(); ++i) {
    const std::string name(message->field(i)->name());
    EXPECT_TRUE(counters.contains(name) || not_counters.contains(name))
        << "PmdStats." << name << " is neither in pmd_counters.def nor a known non-counter field";
  }
}

TEST(PmdStatsTest, ReadsAndSubtractsEveryCounter) {
  auto counters = std::make_unique<PmdCounters>();
  uint64_t n = 0;
#define SLUICE_PMD_COUNTER(field, proto_field, help) counters->field.add(1000 + 10 * ++n);
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  PmdStatsView baseline = readPmdStats(*counters);
  n = 0;
#define SLUICE_PMD_COUNTER(field, proto_field, help) counters->field.add(++n);
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
  PmdStatsView now = readPmdStats(*counters);
  now.index = 3;
  now.lcore = 5;
  now.megaflows = 7;
  const PmdStatsView since = subtract(now, baseline);
  EXPECT_EQ(since.index, 3u);
  EXPECT_EQ(since.lcore, 5u);
  EXPECT_EQ(since.megaflows, 7u);
  n = 0;
#define SLUICE_PMD_COUNTER(field, proto_field, help)                  \
  ++n;                                                                \
  EXPECT_EQ(now.field, 1000 + 11 * n) << #field;                      \
  EXPECT_EQ(since.field, n) << #field;
#include "dataplane/datapath/pmd_counters.def"
#undef SLUICE_PMD_COUNTER
}

}  // namespace
}  // namespace sluice
