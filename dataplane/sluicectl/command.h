// sluicectl's command table: each command is one entry (its words, its
// arguments, one line of help, its handler), registered from the folder that
// owns it: the core's from dataplane/sluicectl, a module's from the module's
// cli/ folder, as grout's modules register their CLI contexts:
//
//   SLUICECTL_COMMAND(vf_list, {.words = {"vfs"}, .help = "SR-IOV VFs ...", .run = listVfs});
//
// The usage text and the dispatch are both made from the table, so a command
// is named once. Filled during static initialisation, before main; read by
// the CLI's one thread.
#pragma once

#include <string>
#include <vector>

namespace sluice::ctl {

class Client;

// A command's words after its name (its positional arguments and options).
using Args = std::vector<std::string>;
// Runs the command; returns sluicectl's exit code (client.h) or throws
// boost::program_options::error (or another std::exception) for bad usage.
using Handler = int (*)(Client& client, const Args& args);

// Positional words a command takes beyond its name: no limit.
constexpr int kAnyArgs = -1;

struct Command {
  // The command's name, one or more words (e.g. {"port", "add"}).
  std::vector<std::string> words{};
  // Its arguments as the usage shows them; a '\n' starts a continuation line
  // (indented under the arguments).
  std::string synopsis{};
  // One line of help (a '\n' continues it, indented as the help column).
  std::string help{};
  // How many words may follow the name, for the command to be this one: a
  // command with a fixed form ("stats", "config set KEY VALUE") sets them;
  // one that parses options keeps the default and reports bad usage itself.
  int min_args = 0;
  int max_args = kAnyArgs;
  Handler run = nullptr;
};

// Adds `command` to the table; a second command of the same words and arity
// is a build mistake and aborts. Returns true (for the registrar's static).
bool registerCommand(Command command);

// The table, sorted by words (the order of the usage text).
std::vector<Command> registeredCommands();

// The command `words` names (the longest name whose words begin `words` and
// whose arity fits the rest), or null; `args` gets the words after the name.
const Command* findCommand(const std::vector<std::string>& words, Args* args);

// "usage: sluicectl [--socket PATH] ... COMMAND\ncommands:\n" and a line or
// more per registered command.
std::string usage();

}  // namespace sluice::ctl

#define SLUICECTL_CONCAT_INNER(a, b) a##b
#define SLUICECTL_CONCAT(a, b) SLUICECTL_CONCAT_INNER(a, b)
// Registers a command from its folder: `id` names the registration (unique
// in the target: sources are compiled in unity batches).
#define SLUICECTL_COMMAND(id, ...)                                             \
  [[maybe_unused]] static const bool SLUICECTL_CONCAT(sluicectl_command_, id) = \
      ::sluice::ctl::registerCommand(::sluice::ctl::Command __VA_ARGS__)
