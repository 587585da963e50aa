// The command table (command.h) and the usage text made from it.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "dataplane/sluicectl/command.h"

namespace sluice::ctl {
namespace {

// A function-local static: registrations from other translation units may
// run before any namespace-scope object of this one is constructed.
std::vector<Command>& table() {
  static std::vector<Command> commands;
  return commands;
}

std::string joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : " ") + w;
  return out;
}

bool arityFits(const Command& c, size_t n) {
  return n >= static_cast<size_t>(c.min_args) && (c.max_args == kAnyArgs || n <= static_cast<size_t>(c.max_args));
}

// Help starts in this column, or two spaces after a longer name and
// synopsis; on a line of its own when the two would pass kUsageWidth.
constexpr size_t kHelpColumn = 21;
constexpr size_t kUsageWidth = 110;

}  // namespace

bool registerCommand(Command command) {
  auto& commands = table();
  for (const Command& c : commands) {
    if (c.words == command.words && c.min_args == command.min_args && c.max_args == command.max_args) {
      // Two commands by one name is a build mistake; nothing else can report it.
      std::fprintf(stderr, "sluicectl: command \"%s\" registered twice\n", joined(command.words).c_str());
      std::abort();
    }
  }
  commands.push_back(std::move(command));
  return true;
}

std::vector<Command> registeredCommands() {
  std::vector<Command> sorted = table();
  std::stable_sort(sorted.begin(), sorted.end(), [](const Command& a, const Command& b) { return a.words < b.words; });
  return sorted;
}

const Command* findCommand(const std::vector<std::string>& words, Args* args) {
  const Command* best = nullptr;
  for (const Command& c : table()) {
    if (c.words.size() > words.size() || !std::equal(c.words.begin(), c.words.end(), words.begin())) continue;
    if (!arityFits(c, words.size() - c.words.size())) continue;
    if (best == nullptr || c.words.size() > best->words.size()) best = &c;
  }
  if (best != nullptr) args->assign(words.begin() + static_cast<std::ptrdiff_t>(best->words.size()), words.end());
  return best;
}

std::string usage() {
  std::string out =
      "usage: sluicectl [--socket PATH] [--json] [--timeout MS] COMMAND\n"
      "commands:\n";
  for (const Command& c : registeredCommands()) {
    const std::string name = "  " + joined(c.words);
    // The synopsis: its continuation lines under its first word.
    std::string line = name;
    if (!c.synopsis.empty()) {
      line += " ";
      const std::string indent(line.size(), ' ');
      for (char ch : c.synopsis) line += ch == '\n' ? "\n" + indent : std::string(1, ch);
    }
    const std::string help_indent(kHelpColumn, ' ');
    std::string help;
    for (char ch : c.help) help += ch == '\n' ? "\n" + help_indent : std::string(1, ch);
    const size_t column = std::max(kHelpColumn, line.size() + 2);
    const bool one_line = line.find('\n') == std::string::npos && column + help.size() <= kUsageWidth;
    if (help.empty()) out += line + "\n";
    else if (one_line) out += line + std::string(column - line.size(), ' ') + help + "\n";
    else out += line + "\n" + help_indent + help + "\n";
  }
  return out;
}

}  // namespace sluice::ctl
