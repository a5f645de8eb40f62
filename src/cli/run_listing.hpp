#pragma once
#include <ostream>

#include "cmlbed/config/settings.hpp"

namespace cmlbed::cli {

// What a run will do, for the user to check before spending hours: method, model and
// split per device, data partition sizes, links, and the resolved configuration.
void print_run_listing(const Settings& settings, int devices, std::ostream& out);

}  // namespace cmlbed::cli
