#pragma once
// The readers' tests: `action` must throw a DataError whose message is one line (the
// CLI prints it as such) and contains each of `parts` (the file's name, and what was
// expected against what was found).
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "cmlbed/data/data_error.hpp"

namespace cmlbed::data::test_support {

template <typename Action>
void expect_data_error(Action action, std::initializer_list<std::string> parts) {
  try {
    action();
    ADD_FAILURE() << "expected a DataError, but nothing was thrown";
  } catch (const DataError& error) {
    const std::string message = error.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "message \"" << message << "\" lacks \"" << part << "\"";
    }
  }
}

}  // namespace cmlbed::data::test_support
