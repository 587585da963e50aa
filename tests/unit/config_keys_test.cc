#include "dataplane/config/config_keys.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace sluice {
namespace {

absl::StatusOr<SluicedConfig> parse(std::vector<const char*> args) {
  args.insert(args.begin(), "sluiced");
  return parseSluicedConfig(static_cast<int>(args.size()), args.data());
}

// config_keys.def generates the field, flag and help of a key, but its
// checks are written by hand: a key added there without them must not pass.
TEST(ConfigKeysTest, EveryKeyIsUnderstoodByTheSettingParser) {
  std::set<std::string> seen;
  for (const ConfigKey& key : configKeys()) {
    EXPECT_TRUE(seen.insert(key.name).second) << key.name << " is declared twice";
    auto r = applyConfigJson(std::string(R"({")") + key.name + R"(": "\u0001"})", SluicedConfig{});
    EXPECT_EQ(r.status().message().find("unknown setting"), std::string::npos) << key.name << ": " << r.status();
  }
}

// What --help shows as a key's default is a value the key accepts, and
// giving it changes nothing.
TEST(ConfigKeysTest, EveryShownDefaultParsesToTheDefault) {
  const SluicedConfig defaults;
  for (const ConfigKey& key : configKeys()) {
    if (key.kind == ConfigKeyKind::kFileOnly || key.kind == ConfigKeyKind::kDerivedDefault) continue;
    const std::string flag = std::string("--") + key.name;
    const std::string value = key.value_text(defaults);
    auto c = parse({flag.c_str(), value.c_str()});
    ASSERT_TRUE(c.ok()) << flag << " " << value << ": " << c.status();
    EXPECT_EQ(key.value_text(*c), value) << flag;
  }
}

TEST(ConfigKeysTest, FileOnlyKeysAreNoFlags) {
  for (const ConfigKey& key : configKeys()) {
    if (key.kind != ConfigKeyKind::kFileOnly) continue;
    const std::string flag = std::string("--") + key.name;
    EXPECT_FALSE(parse({flag.c_str(), "x"}).ok()) << flag;
    auto help = parse({"--help"});
    EXPECT_EQ(help.status().message().find(flag), std::string::npos) << flag;
  }
}

TEST(ConfigKeysTest, BooleanKeysTakeJsonBooleans) {
  for (const ConfigKey& key : configKeys()) {
    auto r = applyConfigJson(std::string(R"({")") + key.name + R"(": true})", SluicedConfig{});
    if (key.kind == ConfigKeyKind::kBoolean) {
      ASSERT_TRUE(r.ok()) << key.name << ": " << r.status();
      EXPECT_EQ(key.value_text(*r), "true") << key.name;
    } else {
      EXPECT_FALSE(r.ok()) << key.name << " took a JSON boolean";
    }
  }
}

}  // namespace
}  // namespace sluice
