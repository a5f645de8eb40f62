#include "cmlbed/trace/event_columns.hpp"

#include <type_traits>
#include <utility>

namespace cmlbed::trace {

static_assert(std::is_standard_layout_v<Event>, "EventColumn::offset() measures members of a probe");
static_assert(sizeof(Event) == 48, "message and held fill what was padding; an event stays 48 bytes");

const std::vector<EventColumn>& event_columns() {
  using E = Event;
  static const std::vector<EventColumn> columns = {
      {"round", &E::round},   {"batch", &E::batch},           {"micro_batch", &E::micro_batch},
      {"lane", &E::lane},     {"kind", &E::kind},             {"message", &E::message},
      {"held", &E::held},     {"peer", &E::peer},     {"bytes", &E::bytes},           {"t_start_ns", &E::t_start_ns},
      {"t_end_ns", &E::t_end_ns},
  };
  return columns;
}

std::size_t EventColumn::offset() const {
  // Event is standard-layout, so the distance from a probe's start to its member is
  // the member's offsetof.
  static const Event probe{};
  return std::visit(
      [](auto member) {
        return static_cast<std::size_t>(reinterpret_cast<const char*>(&(probe.*member)) -
                                        reinterpret_cast<const char*>(&probe));
      },
      field);
}

const std::vector<std::string>* EventColumn::enum_names() const {
  return std::visit(
      [](auto member) -> const std::vector<std::string>* {
        using Value = std::remove_reference_t<decltype(std::declval<Event&>().*member)>;
        if constexpr (std::is_same_v<Value, Lane>) {
          return &lane_names();
        } else if constexpr (std::is_same_v<Value, EventKind>) {
          return &event_kind_names();
        } else if constexpr (std::is_same_v<Value, MessageType>) {
          return &message_type_names();
        } else if constexpr (std::is_same_v<Value, Held>) {
          return &held_names();
        } else {
          return nullptr;
        }
      },
      field);
}

}  // namespace cmlbed::trace
