// The installed executable itself (main.cc): it hands the real environment
// and stdin to the dispatcher, answers on stdout and exits non-zero on error.
#include <gtest/gtest.h>

#include <chrono>

#include <nlohmann/json.hpp>

#include "cni-plugin/process_runner.h"

namespace sluice::cni {
namespace {

using nlohmann::json;

absl::StatusOr<ProcessOutput> runBinary(const Environment& env, const std::string& input) {
  return runProcess(SLUICE_CNI_BINARY, env, input, std::chrono::milliseconds(30000));
}

TEST(SluiceCniBinary, AnswersVersion) {
  absl::StatusOr<ProcessOutput> out = runBinary({{"CNI_COMMAND", "VERSION"}}, R"({"cniVersion":"1.1.0"})");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 0);
  EXPECT_EQ(json::parse(out->out),
            json({{"cniVersion", "1.1.0"}, {"supportedVersions", {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}}}));
  EXPECT_TRUE(out->err.empty());
}

TEST(SluiceCniBinary, ReportsErrorsOnStdoutAndLogsOnStderr) {
  absl::StatusOr<ProcessOutput> out = runBinary(
      {{"CNI_COMMAND", "ADD"}, {"CNI_CONTAINERID", "c1"}, {"CNI_NETNS", "/x"}, {"CNI_IFNAME", "net1"}}, "{not json");
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 1);
  json err = json::parse(out->out, nullptr, false);
  ASSERT_TRUE(err.is_object()) << out->out;
  EXPECT_EQ(err["code"], 6);
  EXPECT_NE(out->err.find("code 6"), std::string::npos) << out->err;
}

}  // namespace
}  // namespace sluice::cni
