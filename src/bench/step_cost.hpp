#pragma once
// The cost of one server-side training step (forward, loss, backward, optimizer step)
// of a zoo model's server part, in LibTorch, for comparison with the same network in
// PyTorch (scripts/bench/bench-step-pytorch.py).
#include <map>
#include <string>

#include "bench_util.hpp"

namespace cmlbed::bench {

Json step_cost(const std::map<std::string, std::string>& options);

}  // namespace cmlbed::bench
