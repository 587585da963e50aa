#include "tests/integration/state_files.h"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace sluice::test {

namespace fs = std::filesystem;

std::set<std::string> filesUnder(const std::string& dir) {
  std::set<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it)
    out.insert(fs::relative(it->path(), dir).string());
  return out;
}

std::string fileText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool checkpointNames(const std::string& state_dir, const std::string& container_id) {
  // The checkpoint is written one member per line (see checkpoint.cc).
  return fileText(state_dir + "/checkpoint.json").find("\"container_id\": \"" + container_id + "\"") !=
         std::string::npos;
}

}  // namespace sluice::test
