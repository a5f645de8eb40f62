#pragma once
// SHA-256 (FIPS 180-4), to name the exact bytes of an input file in a results file
// (model.file's TorchScript module), so that a run can be traced to what it loaded.
#include <string>
#include <string_view>

namespace cmlbed {

// The digest as 64 lowercase hex digits.
std::string sha256_hex(std::string_view bytes);

}  // namespace cmlbed
