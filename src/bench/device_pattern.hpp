#pragma once
// A device part's stages in the order a pipar device runs them (m forwards back to back,
// then the m backwards, then one optimizer step and zero_grad) against the same
// micro-batches each run forward-then-backward alone, as the profiler chains its layers:
// medians per micro-batch index, to see whether a stage depends on how many micro-batches
// are in flight (docs/explanation/simulator.md, prediction accuracy).
#include <map>
#include <string>

#include "bench_util.hpp"

namespace cmlbed::bench {

Json device_pattern(const std::map<std::string, std::string>& options);

}  // namespace cmlbed::bench
