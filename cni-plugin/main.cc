// sluice-cni: the CNI plugin executable the container runtime runs for every
// attachment on a network of "type": "sluice-cni". Hands the real process
// environment, stdin, stdout and stderr to the dispatcher.
#include <unistd.h>

#include <iostream>
#include <iterator>
#include <string>

#include "cni-plugin/dispatcher.h"

extern char** environ;

int main() {
  sluice::cni::Environment env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos) env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  std::string input((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
  return sluice::cni::runPlugin({env, input, std::cout, std::cerr});
}
