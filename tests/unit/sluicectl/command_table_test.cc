// sluicectl's command table: every command registers (the modules' from
// their folders too), the usage text lists each, and what is not a command
// is bad usage (exit 2, the usage on stderr), decided before any call.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "dataplane/sluicectl/command.h"
#include "dataplane/sluicectl/run.h"

namespace sluice::ctl {
namespace {

std::string nameOf(const Command& c) {
  std::string out;
  for (const std::string& w : c.words) out += (out.empty() ? "" : " ") + w;
  return out;
}

// Runs sluicectl with `args`; the exit code, stdout and stderr.
struct Ran {
  int code;
  std::string out;
  std::string err;
};
Ran runCtl(std::vector<std::string> args) {
  args.insert(args.begin(), "sluicectl");
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  const int code = run(args);
  std::fflush(stdout);
  std::fflush(stderr);
  std::string out = testing::internal::GetCapturedStdout();
  std::string err = testing::internal::GetCapturedStderr();
  return {code, out, err};
}

TEST(SluicectlCommandTable, HoldsTheCoresAndTheModulesCommands) {
  std::set<std::string> names;
  for (const Command& c : registeredCommands()) names.insert(nameOf(c));
  const std::set<std::string> expected = {
      "stats",     "stats clear", "ports",    "pmd",   "flows",    "health",         "port add",
      "port del",  "config get",  "config set", "trace", "trace --packet", "capture",
      "vfs",                                  // modules/sriov/cli
      "nodes",     "node add",    "node del",  // modules/overlay/cli
  };
  EXPECT_EQ(names, expected);
}

TEST(SluicectlCommandTable, UsageListsEveryRegisteredCommand) {
  const std::string text = usage();
  EXPECT_EQ(text.rfind("usage: sluicectl [--socket PATH] [--json] [--timeout MS] COMMAND\ncommands:\n", 0), 0u);
  for (const Command& c : registeredCommands()) {
    const std::string line = "\n  " + nameOf(c) + (c.synopsis.empty() ? "" : " " + c.synopsis.substr(0, c.synopsis.find('\n')));
    EXPECT_NE(text.find(line), std::string::npos) << nameOf(c) << " missing from:\n" << text;
    const std::string help = c.help.substr(0, c.help.find('\n'));
    EXPECT_NE(text.find(help), std::string::npos) << help;
  }
}

TEST(SluicectlCommandTable, UnknownCommandPrintsTheUsageAndExits2) {
  Ran r = runCtl({"frobnicate"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, usage());
  EXPECT_EQ(r.out, "");
}

TEST(SluicectlCommandTable, NoCommandOrWrongArityIsBadUsage) {
  EXPECT_EQ(runCtl({}).code, 2);
  EXPECT_EQ(runCtl({"--json"}).code, 2);
  // A fixed-form command with words it does not take.
  Ran extra = runCtl({"stats", "now"});
  EXPECT_EQ(extra.code, 2);
  EXPECT_EQ(extra.err, usage());
  EXPECT_EQ(runCtl({"config", "set", "upcall-burst"}).code, 2);
  EXPECT_EQ(runCtl({"config", "get", "a", "b"}).code, 2);
  EXPECT_EQ(runCtl({"vfs", "all"}).code, 2);
  EXPECT_EQ(runCtl({"node"}).code, 2);
}

TEST(SluicectlCommandTable, BadOptionsAreBadUsageWithTheReason) {
  Ran missing = runCtl({"port", "add", "--ifname", "net1", "--ip", "10.0.0.1"});
  EXPECT_EQ(missing.code, 2);
  EXPECT_NE(missing.err.find("container-id"), std::string::npos) << missing.err;
  EXPECT_NE(missing.err.find(usage()), std::string::npos);
  EXPECT_EQ(runCtl({"port", "add", "--container-id", "c", "--ifname", "net1"}).code, 2);  // no --ip nor --ipv6
  EXPECT_EQ(runCtl({"node", "add", "--name", "n"}).code, 2);
  EXPECT_EQ(runCtl({"trace"}).code, 2);
  EXPECT_EQ(runCtl({"trace", "x"}).code, 2);
  EXPECT_EQ(runCtl({"trace", "1", "--frob", "2"}).code, 2);
  Ran no_file = runCtl({"capture", "1", "--count", "5"});
  EXPECT_EQ(no_file.code, 2);
  EXPECT_NE(no_file.err.find("capture needs -w FILE"), std::string::npos) << no_file.err;
}

TEST(SluicectlCommandTable, HelpPrintsTheUsage) {
  Ran r = runCtl({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, usage());
}

TEST(SluicectlCommandTable, UnreachableDataplaneExits3) {
  Ran r = runCtl({"--socket", "/nonexistent/sluice.sock", "--timeout", "500", "health"});
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("cannot reach sluiced at /nonexistent/sluice.sock"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace sluice::ctl
