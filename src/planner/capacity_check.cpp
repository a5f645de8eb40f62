#include "cmlbed/planner/capacity_check.hpp"

#include <cmath>
#include <cstdio>

#include "cmlbed/planner/replanning.hpp"

namespace cmlbed::planner {
namespace {

// Each device's own split and micro-batch count, as configured.
std::vector<DeviceChoice> configured_plan(const PlanSpec& spec) {
  std::vector<DeviceChoice> plan;
  for (const DevicePlanSpec& device : spec.devices) {
    plan.push_back({device.split, spec.traits().micro_batches ? device.micro_batches : 1});
  }
  return plan;
}

PlanCandidate predicted(const PlanSpec& spec, const sim::Profile& profile, const std::vector<std::size_t>& samples) {
  return predict_plan(spec, profile, samples, configured_plan(spec), first_plan_links_held_at(spec));
}

std::string percent(double share) {
  char text[32];
  std::snprintf(text, sizeof text, share >= 1 ? "%.0f%%" : "%.2g%%", 100 * share);
  return text;
}

// How far down the devices' speed is searched: 1/4096 of the configured one.
constexpr double kSlowestFactor = 1.0 / 4096;

}  // namespace

bool any_device_held(const PlanSpec& spec) {
  for (const DevicePlanSpec& device : spec.devices) {
    if (device.flops_per_second || (device.slowdown > 1 && spec.device_threads == 1)) return true;
  }
  return false;
}

std::string PacingCheck::text() const {
  if (!held) return "no device is paced or stretched: nothing to keep";
  const std::string figures = "predicted overrun " + percent(predicted.overrun_share) + " of the held time";
  if (keeps_pace()) return "this host keeps the devices' pace (" + figures + ")";
  std::string text = "this host cannot keep the devices' pace (" + figures + ", over 1% is not faithful)";
  if (rate_factor) {
    char fastest[128];
    std::snprintf(fastest, sizeof fastest, "; the fastest devices it keeps: devices.flops = %.3gGFLOP/s (x%.3g)",
                  fastest_flops.value_or(0) * 1e-9, *rate_factor);
    text += fastest;
  }
  if (devices) text += std::string(rate_factor ? ", or" : ";") + " at most " + std::to_string(*devices) + " device(s)";
  if (rate_factor && !devices) text += "; fewer devices at this speed do not help";
  if (!rate_factor && !devices) text += "; not with fewer devices nor slower ones either";
  return text;
}

PacingCheck check_pacing(const std::function<PlanSpec(int devices)>& spec_of,
                         const std::function<std::vector<std::size_t>(int devices)>& samples_of,
                         const sim::Profile& profile, int devices) {
  PacingCheck check;
  const PlanSpec spec = spec_of(devices);
  const std::vector<std::size_t> samples = samples_of(devices);
  check.held = any_device_held(spec);
  if (!check.held) return check;
  check.predicted = predicted(spec, profile, samples);
  if (check.keeps_pace()) return check;
  // The fastest speed that keeps pace: halving from 1 until it does, then bisecting
  // between the last two factors in 6 steps (to within 1.1% of the factor).
  bool paced = false;
  for (const DevicePlanSpec& device : spec.devices) paced = paced || device.flops_per_second.has_value();
  if (paced) {
    const auto keeps_at = [&](double factor) {
      PlanSpec scaled = spec;
      for (DevicePlanSpec& device : scaled.devices) {
        if (device.flops_per_second) *device.flops_per_second *= factor;
      }
      return predicted(scaled, profile, samples).keeps_pace();
    };
    double too_fast = 1, low = 0.5;
    while (low >= kSlowestFactor && !keeps_at(low)) too_fast = low, low /= 2;
    if (low >= kSlowestFactor) {
      for (int step = 0; step < 6; ++step) {
        const double middle = std::sqrt(low * too_fast);
        (keeps_at(middle) ? low : too_fast) = middle;
      }
      check.rate_factor = low;
      if (spec.devices.front().flops_per_second) check.fastest_flops = *spec.devices.front().flops_per_second * low;
    }
  }
  // The most devices that keep pace: the largest n < devices (the devices' own settings
  // for 1..n, the rest left out).
  int lowest = 1, highest = devices - 1;
  const auto keeps_with = [&](int n) { return predicted(spec_of(n), profile, samples_of(n)).keeps_pace(); };
  if (highest >= 1 && keeps_with(lowest)) {
    while (lowest < highest) {
      const int middle = (lowest + highest + 1) / 2;
      if (keeps_with(middle)) {
        lowest = middle;
      } else {
        highest = middle - 1;
      }
    }
    check.devices = lowest;
  }
  return check;
}

}  // namespace cmlbed::planner
