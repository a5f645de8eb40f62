#pragma once
// The method table as programs show it, from one list of columns: `cmlbed info --methods`
// (a text table), `cmlbed info --methods --json` (what scripts read instead of keeping
// lists of methods) and the copy every results file stores (root attribute
// method_table), so that a report can tell what a run's method does without the binary.
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cmlbed/config/methods.hpp"

namespace cmlbed {

struct MethodColumn {
  std::string key;     // the JSON key: the trait's name
  std::string header;  // the text table's header (one word)
  // The method's value: true/false, a word or a list of words.
  std::function<nlohmann::ordered_json(const MethodTraits&)> value;
  bool in_text = true;  // false: JSON only (the summary is printed below the text table)
};

const std::vector<MethodColumn>& method_columns();

// {"methods": [{"name": "fl", "summary": ..., "splits_model": false, ...}, ...]}
nlohmann::ordered_json method_table_json();

// A header line, one line per method (true: yes, false: -), a blank line, then each
// method's summary.
std::string method_table_text();

}  // namespace cmlbed
