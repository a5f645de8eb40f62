#pragma once
// What the planner decides for one device: where its model is split and how many
// micro-batches each of its mini-batches is cut into (1 for sfl).
#include <cstddef>

namespace cmlbed::train {

struct DeviceChoice {
  std::size_t split = 0;
  int micro_batches = 1;
  bool operator==(const DeviceChoice& other) const {
    return split == other.split && micro_batches == other.micro_batches;
  }
  bool operator!=(const DeviceChoice& other) const { return !(*this == other); }
};

}  // namespace cmlbed::train
