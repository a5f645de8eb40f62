#include "cmlbed/config/method_columns.hpp"

#include <algorithm>
#include <sstream>

namespace cmlbed {
namespace {

using Json = nlohmann::ordered_json;

MethodColumn flag(std::string key, std::string header, bool MethodTraits::*trait) {
  return {std::move(key), std::move(header), [trait](const MethodTraits& m) { return Json(m.*trait); }};
}

std::string noise_word(NoiseTarget noise) {
  switch (noise) {
    case NoiseTarget::model_updates: return "model-updates";
    case NoiseTarget::activations: return "activations";
    case NoiseTarget::nothing: break;
  }
  return "nothing";
}

std::vector<MethodColumn> build_columns() {
  return {
      {"name", "method", [](const MethodTraits& m) { return Json(m.name); }},
      {"summary", "summary", [](const MethodTraits& m) { return Json(m.summary); }, /*in_text=*/false},
      {"trains", "trains", [](const MethodTraits& m) { return Json(m.trains); }, /*in_text=*/false},
      flag("splits_model", "splits", &MethodTraits::splits_model),
      flag("takes_turns", "turns", &MethodTraits::takes_turns),
      flag("server_replicas", "replicas", &MethodTraits::server_replicas),
      flag("serves_in_device_order", "ordered", &MethodTraits::serves_in_device_order),
      flag("serves_batches_together", "together", &MethodTraits::serves_batches_together),
      flag("device_tail", "tail", &MethodTraits::device_tail),
      flag("micro_batches", "micro", &MethodTraits::micro_batches),
      flag("averages", "averages", &MethodTraits::averages),
      flag("local_phase", "local", &MethodTraits::local_phase),
      flag("sends_gradients", "gradients", &MethodTraits::sends_gradients),
      {"personalised", "personalised",
       [](const MethodTraits& m) { return m.personalised_always ? Json("always") : Json(m.personalisable); }},
      flag("plannable", "auto", &MethodTraits::plannable),
      flag("simulatable", "simulate", &MethodTraits::simulatable),
      flag("checkpointable", "resume", &MethodTraits::checkpointable),
      {"noise", "noise", [](const MethodTraits& m) { return Json(noise_word(m.noise)); }},
      {"privacy_mechanisms", "mechanisms", [](const MethodTraits& m) { return Json(m.privacy_mechanisms); }},
  };
}

std::string cell(const Json& value) {
  if (value.is_boolean()) return value.get<bool>() ? "yes" : "-";
  if (value.is_array()) {
    std::string words;
    for (const Json& word : value) words += (words.empty() ? "" : ",") + word.get<std::string>();
    return words;
  }
  return value.get<std::string>();
}

}  // namespace

const std::vector<MethodColumn>& method_columns() {
  static const std::vector<MethodColumn> columns = build_columns();
  return columns;
}

Json method_table_json() {
  Json methods = Json::array();
  for (const MethodTraits& method : method_table()) {
    Json row = Json::object();
    for (const MethodColumn& column : method_columns()) row[column.key] = column.value(method);
    methods.push_back(std::move(row));
  }
  return Json{{"methods", std::move(methods)}};
}

std::string method_table_text() {
  std::vector<const MethodColumn*> shown;
  for (const MethodColumn& column : method_columns()) {
    if (column.in_text) shown.push_back(&column);
  }
  std::vector<std::vector<std::string>> lines(1);
  for (const MethodColumn* column : shown) lines[0].push_back(column->header);
  for (const MethodTraits& method : method_table()) {
    std::vector<std::string>& line = lines.emplace_back();
    for (const MethodColumn* column : shown) line.push_back(cell(column->value(method)));
  }
  std::vector<std::size_t> widths(shown.size(), 0);
  for (const auto& line : lines) {
    for (std::size_t c = 0; c < line.size(); ++c) widths[c] = std::max(widths[c], line[c].size());
  }
  std::ostringstream out;
  for (const auto& line : lines) {
    for (std::size_t c = 0; c < line.size(); ++c) {
      const bool last = c + 1 == line.size();
      out << line[c] << (last ? "\n" : std::string(widths[c] - line[c].size() + 1, ' '));
    }
  }
  out << "\n";
  std::size_t name_width = 0;
  for (const MethodTraits& method : method_table()) name_width = std::max(name_width, method.name.size());
  for (const MethodTraits& method : method_table()) {
    out << method.name << std::string(name_width - method.name.size() + 1, ' ') << method.summary << "\n";
  }
  return out.str();
}

}  // namespace cmlbed
