#pragma once
// PiPar's pipeline efficiency, from a pipar run's results file: each device's measured
// iteration time (first forward of a mini-batch to its optimizer step) divided by the
// ideal pipeline time computed from the same run's measured stage durations (device
// forward, upload, server forward+backward, download, device backward, step: medians
// per device) for m micro-batches, the device running its m forwards first and each
// backward when its gradient is back. The ideal ignores other devices sharing the
// server, so contention shows up as efficiency above 1.
// The first warmup_rounds rounds are not counted (their first steps pay LibTorch's
// allocations and first kernel choices, and the first messages the connections).
#include <string>

#include "bench_util.hpp"

namespace cmlbed::bench {

Json pipeline_efficiency(const std::string& pipar_results_file, int warmup_rounds = 1);

}  // namespace cmlbed::bench
