// sluicectl: the operator's CLI (run.h). Exit codes: 0 success, 1 the
// dataplane answered with an error or is not ready, 2 bad usage, 3 the
// dataplane could not be reached.
#include "dataplane/sluicectl/run.h"

int main(int argc, char** argv) { return sluice::ctl::run(std::vector<std::string>(argv, argv + argc)); }
