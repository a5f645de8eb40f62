#include "cmlbed/sim/profile.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cmlbed::sim {
namespace {

using Json = nlohmann::ordered_json;

// A field of `object` (named `where` in messages), of the type asked for.
template <typename T>
T field(const nlohmann::json& object, const char* name, const std::string& where) {
  if (!object.is_object() || !object.contains(name)) {
    throw std::invalid_argument(where + ": missing field '" + name + "'");
  }
  try {
    return object.at(name).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(where + "." + name + ": " + e.what());
  }
}

Json layer_json(const LayerProfile& layer) {
  return Json{{"name", layer.name},
              {"parameters", layer.parameters},
              {"flops_per_sample", layer.flops_per_sample},
              {"output_bytes_per_sample", layer.output_bytes_per_sample},
              {"forward_s", layer.forward_s},
              {"backward_s", layer.backward_s},
              {"step_s", layer.step_s}};
}

LayerProfile layer_from(const nlohmann::json& json, const std::string& where, std::size_t sizes) {
  LayerProfile layer;
  layer.name = field<std::string>(json, "name", where);
  layer.parameters = field<std::int64_t>(json, "parameters", where);
  layer.flops_per_sample = field<std::int64_t>(json, "flops_per_sample", where);
  layer.output_bytes_per_sample = field<std::int64_t>(json, "output_bytes_per_sample", where);
  layer.forward_s = field<std::vector<double>>(json, "forward_s", where);
  layer.backward_s = field<std::vector<double>>(json, "backward_s", where);
  layer.step_s = field<double>(json, "step_s", where);
  if (layer.forward_s.size() != sizes || layer.backward_s.size() != sizes) {
    throw std::invalid_argument(where + ": forward_s and backward_s need one value per batch size (" +
                                std::to_string(sizes) + ")");
  }
  return layer;
}

}  // namespace

Json to_json(const RankProfile& rank) {
  Json layers = Json::array();
  for (const LayerProfile& layer : rank.layers) layers.push_back(layer_json(layer));
  return Json{{"rank", rank.rank},
              {"role", rank.role},
              {"threads", rank.threads},
              {"slowdown", rank.slowdown},
              {"flops_per_second", rank.flops_per_second},
              {"aggregate_s_per_parameter", rank.aggregate_s_per_parameter},
              {"codec_s_per_byte", rank.codec_s_per_byte},
              {"wake_s", rank.wake_s},
              {"stage_factor", rank.stage_factor},
              {"seconds", rank.seconds},
              {"measured_by", rank.measured_by},
              {"layers", layers}};
}

Json to_json(const Profile& profile) {
  Json ranks = Json::array();
  for (const RankProfile& rank : profile.ranks) ranks.push_back(to_json(rank));
  Json checks = Json::array();
  for (const InterpolationCheck& check : profile.interpolation_checks) {
    checks.push_back(Json{{"batch_size", check.batch_size},
                          {"measured_s", check.measured_s},
                          {"interpolated_s", check.interpolated_s}});
  }
  return Json{{"format", "cmlbed-profile"},
              {"version", Profile::kVersion},
              {"model", profile.model},
              {"dataset", profile.dataset},
              {"optimizer", profile.optimizer},
              {"batch_sizes", profile.batch_sizes},
              {"warmup", profile.warmup},
              {"repeats", profile.repeats},
              {"measured_at", profile.measured_at},
              {"host", profile.host},
              {"cmlbed_version", profile.cmlbed_version},
              {"seconds", profile.seconds},
              {"interpolation_checks", checks},
              {"ranks", ranks}};
}

Profile profile_from_json(const nlohmann::json& json) {
  const std::string where = "profile";
  if (field<std::string>(json, "format", where) != "cmlbed-profile") {
    throw std::invalid_argument("not a cmlbed profile (format is not 'cmlbed-profile')");
  }
  const int version = field<int>(json, "version", where);
  if (version != Profile::kVersion) {
    throw std::invalid_argument("profile version " + std::to_string(version) + "; this cmlbed reads version " +
                                std::to_string(Profile::kVersion) + " (profile again with this cmlbed)");
  }
  Profile profile;
  profile.model = field<std::string>(json, "model", where);
  profile.dataset = field<std::string>(json, "dataset", where);
  profile.optimizer = field<std::string>(json, "optimizer", where);
  profile.batch_sizes = field<std::vector<std::int64_t>>(json, "batch_sizes", where);
  if (profile.batch_sizes.empty() || !std::is_sorted(profile.batch_sizes.begin(), profile.batch_sizes.end()) ||
      profile.batch_sizes.front() < 1 ||
      std::adjacent_find(profile.batch_sizes.begin(), profile.batch_sizes.end()) != profile.batch_sizes.end()) {
    throw std::invalid_argument("profile.batch_sizes: must be positive and strictly ascending");
  }
  profile.warmup = field<int>(json, "warmup", where);
  profile.repeats = field<int>(json, "repeats", where);
  profile.measured_at = field<std::string>(json, "measured_at", where);
  profile.host = field<std::string>(json, "host", where);
  profile.cmlbed_version = field<std::string>(json, "cmlbed_version", where);
  profile.seconds = field<double>(json, "seconds", where);
  for (const auto& check : field<nlohmann::json>(json, "interpolation_checks", where)) {
    profile.interpolation_checks.push_back({field<std::int64_t>(check, "batch_size", "interpolation_checks[]"),
                                            field<double>(check, "measured_s", "interpolation_checks[]"),
                                            field<double>(check, "interpolated_s", "interpolation_checks[]")});
  }
  const auto ranks = field<nlohmann::json>(json, "ranks", where);
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string at = "ranks[" + std::to_string(r) + "]";
    RankProfile rank;
    rank.rank = field<int>(ranks[r], "rank", at);
    if (rank.rank != static_cast<int>(r)) throw std::invalid_argument(at + ".rank: must be " + std::to_string(r));
    rank.role = field<std::string>(ranks[r], "role", at);
    rank.threads = field<int>(ranks[r], "threads", at);
    rank.slowdown = field<double>(ranks[r], "slowdown", at);
    rank.flops_per_second = field<double>(ranks[r], "flops_per_second", at);
    rank.aggregate_s_per_parameter = field<double>(ranks[r], "aggregate_s_per_parameter", at);
    rank.codec_s_per_byte = field<double>(ranks[r], "codec_s_per_byte", at);
    rank.wake_s = ranks[r].contains("wake_s") ? field<double>(ranks[r], "wake_s", at) : 0.0;
    rank.stage_factor = ranks[r].contains("stage_factor") ? field<double>(ranks[r], "stage_factor", at) : 1.0;
    rank.seconds = field<double>(ranks[r], "seconds", at);
    rank.measured_by = ranks[r].contains("measured_by") ? field<int>(ranks[r], "measured_by", at) : rank.rank;
    const auto layers = field<nlohmann::json>(ranks[r], "layers", at);
    for (std::size_t l = 0; l < layers.size(); ++l) {
      rank.layers.push_back(layer_from(layers[l], at + ".layers[" + std::to_string(l) + "]", profile.batch_sizes.size()));
    }
    profile.ranks.push_back(std::move(rank));
  }
  if (profile.ranks.empty()) throw std::invalid_argument("profile.ranks: empty");
  return profile;
}

void write_profile(const std::string& path, const Profile& profile) {
  std::ofstream out(path);
  out << to_json(profile).dump(2) << "\n";
  out.close();
  if (!out) throw std::runtime_error("cannot write the profile " + path);
}

Profile read_profile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read the profile " + path);
  try {
    return profile_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not JSON: " + e.what());
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

double at_batch_size(const std::vector<std::int64_t>& batch_sizes, const std::vector<double>& seconds,
                     double batch) {
  if (batch_sizes.empty() || batch_sizes.size() != seconds.size()) {
    throw std::invalid_argument("at_batch_size: one value per batch size needed");
  }
  const auto x = [&](std::size_t i) { return static_cast<double>(batch_sizes[i]); };
  if (batch <= x(0)) return seconds[0] * batch / x(0);
  std::size_t hi = 1;
  while (hi + 1 < batch_sizes.size() && x(hi) < batch) ++hi;
  if (batch_sizes.size() == 1) return seconds[0] * batch / x(0);
  const std::size_t lo = hi - 1;
  return seconds[lo] + (seconds[hi] - seconds[lo]) * (batch - x(lo)) / (x(hi) - x(lo));
}

}  // namespace cmlbed::sim
