// sluicectl's run (run.h): global options, then the table's command.
#include "dataplane/sluicectl/run.h"

#include <cstdio>
#include <exception>

#include "dataplane/sluicectl/client.h"
#include "dataplane/sluicectl/command.h"

namespace sluice::ctl {

int run(const std::vector<std::string>& argv) {
  Globals g;
  std::vector<std::string> words;
  try {
    // The global options come before the command's words; the first word
    // that is not one starts the command (whose own options parseOptions
    // reads).
    size_t i = 1;
    for (; i < argv.size(); ++i) {
      const std::string& a = argv[i];
      auto value = [&]() -> std::string {
        if (i + 1 >= argv.size()) throw boost::program_options::error(a + " needs a value");
        return argv[++i];
      };
      if (a == "--socket") g.socket = value();
      else if (a.rfind("--socket=", 0) == 0) g.socket = a.substr(9);
      else if (a == "--json") g.json = true;
      else if (a == "--timeout") g.timeout_ms = std::stoi(value());
      else if (a == "-h" || a == "--help") {
        std::fputs(usage().c_str(), stdout);
        return 0;
      } else break;
    }
    for (; i < argv.size(); ++i) {
      if (argv[i] == "--json") g.json = true;  // also accepted after the command
      else words.push_back(argv[i]);
    }
    Args args;
    const Command* command = words.empty() ? nullptr : findCommand(words, &args);
    if (command == nullptr) {
      std::fputs(usage().c_str(), stderr);
      return kExitUsage;
    }
    Client client(g);
    return command->run(client, args);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sluicectl: %s\n%s", e.what(), usage().c_str());
    return kExitUsage;
  }
}

}  // namespace sluice::ctl
