#pragma once
// The reference page of every configuration option (docs/reference/options.md), written
// from the option table by `cmlbed run --help --markdown`, so that the manual cannot
// drift from what the binary accepts (tests/docs_reference.sh compares the two).
#include <string>

namespace cmlbed {

// Markdown: an introduction, then one table per INI section with each option's name,
// default, accepted values and help text.
std::string options_markdown();

}  // namespace cmlbed
