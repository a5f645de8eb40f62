#pragma once
// The members of the results file's /ranks/<r>/events rows, described once. The writer
// and the reader derive the HDF5 compound type (the Event layout in memory, packed in
// the file) from this list, so that a member added to Event and here reaches the file
// and the reader together; a test checks docs/reference/results-format.md's events table against
// a written file.
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cmlbed/trace/event.hpp"

namespace cmlbed::trace {

struct EventColumn {
  using Int32 = std::int32_t Event::*;
  using Int64 = std::int64_t Event::*;
  using LaneField = Lane Event::*;
  using KindField = EventKind Event::*;
  using MessageField = MessageType Event::*;
  using HeldField = Held Event::*;
  // The Event member that holds the column. Its C++ type fixes the stored type: the
  // enums are stored as HDF5 enums over uint8 that carry their names.
  using Field = std::variant<Int32, Int64, LaneField, KindField, MessageField, HeldField>;

  const char* name;  // HDF5 member name; scripts read events by it
  Field field;

  // Where the member lies in Event (padding included).
  std::size_t offset() const;
  // An enum member's names in value order (lane_names(), ...); nullptr for an integer.
  const std::vector<std::string>* enum_names() const;
};

// The members in file order. Files written before a member existed lack it (`message`,
// `held`);
// HDF5 matches members by name, so readers of such files keep working.
const std::vector<EventColumn>& event_columns();

}  // namespace cmlbed::trace
