#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

const std::vector<std::string>& lane_names() {
  static const std::vector<std::string> names = {"compute", "uplink", "downlink"};
  return names;
}

const std::vector<std::string>& event_kind_names() {
  static const std::vector<std::string> names = {"forward", "backward", "step",     "send",
                                                 "recv",    "wait",     "aggregate", "evaluate",
                                                 "compute", "sleep"};
  return names;
}

const std::vector<std::string>& message_type_names() {
  static const std::vector<std::string> names = {"none",        "activation",    "gradient", "model",
                                                 "transfer_up", "transfer_down", "control"};
  return names;
}

const std::vector<std::string>& held_names() {
  static const std::vector<std::string> names = {"no", "kept", "overran"};
  return names;
}

}  // namespace cmlbed::trace
