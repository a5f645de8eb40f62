#include "pipeline_efficiency.hpp"

#include <map>
#include <stdexcept>

#include "cmlbed/config/methods.hpp"
#include "cmlbed/trace/results_file.hpp"

namespace cmlbed::bench {
namespace {

using trace::Event;
using trace::EventKind;
using trace::Lane;

double seconds(const Event& e) { return static_cast<double>(e.t_end_ns - e.t_start_ns) * 1e-9; }

// A send's time on its link: from when the link was free of the previous send (or the
// send was enqueued, if later) to its last byte. The event itself also counts the time
// spent queued behind earlier micro-batches, which is not the stage's own duration.
class LinkService {
 public:
  double next(const Event& e) {
    const std::int64_t start = std::max(e.t_start_ns, previous_end_);
    previous_end_ = e.t_end_ns;
    return static_cast<double>(e.t_end_ns - start) * 1e-9;
  }

 private:
  std::int64_t previous_end_ = 0;
};

struct Stages {
  double forward = 0, upload = 0, server = 0, download = 0, backward = 0, step = 0;
};

// List schedule of one mini-batch of m micro-batches on four resources: device compute,
// uplink, server compute, downlink.
double ideal_iteration(const Stages& s, int m) {
  std::vector<double> forward_end(m), upload_end(m), server_end(m), download_end(m);
  for (int i = 0; i < m; ++i) {
    forward_end[i] = (i ? forward_end[i - 1] : 0) + s.forward;
    upload_end[i] = std::max(forward_end[i], i ? upload_end[i - 1] : 0) + s.upload;
    server_end[i] = std::max(upload_end[i], i ? server_end[i - 1] : 0) + s.server;
    download_end[i] = std::max(server_end[i], i ? download_end[i - 1] : 0) + s.download;
  }
  double backward_end = forward_end[m - 1];
  for (int i = 0; i < m; ++i) backward_end = std::max(backward_end, download_end[i]) + s.backward;
  return backward_end + s.step;
}

}  // namespace

Json pipeline_efficiency(const std::string& path, int warmup_rounds) {
  const MethodTraits* method = find_method(trace::ResultsFile::read_string_attribute(path, "method"));
  if (method == nullptr || !method->micro_batches) {
    throw std::invalid_argument(path + " is not a run with micro-batches (" +
                                method_list(&MethodTraits::micro_batches) + ")");
  }
  const auto rounds = trace::ResultsFile::read_rounds(path);
  if (static_cast<int>(rounds.size()) <= warmup_rounds) {
    throw std::invalid_argument(path + " has " + std::to_string(rounds.size()) +
                                " round(s), none left after --warmup " +
                                std::to_string(warmup_rounds));
  }
  const int ranks = static_cast<int>(rounds.at(0).busy_s.size());
  const auto server_events = trace::ResultsFile::read_events(path, 0);

  // Server compute per micro-batch (forward + backward), and downloads per device.
  std::vector<double> server_compute;
    std::map<int, std::vector<double>> downloads;
  std::map<int, LinkService> downlinks;
  for (const Event& e : server_events) {
    if (e.round >= 0 && e.round < warmup_rounds) continue;
    if (e.lane == Lane::compute && (e.kind == EventKind::forward || e.kind == EventKind::backward)) {
      server_compute.push_back(seconds(e));
    }
    if (e.kind == EventKind::send && e.micro_batch >= 0) downloads[e.peer].push_back(downlinks[e.peer].next(e));
  }
  // Forward and backward are recorded separately: a micro-batch's server time is their sum.
  const double server_per_micro = 2 * median(server_compute);

  std::vector<Json> devices;
  std::vector<double> all_ratios;
  for (int device = 1; device < ranks; ++device) {
    std::vector<double> forward, backward, step, upload;
    std::map<std::pair<int, int>, std::pair<std::int64_t, std::int64_t>> iteration;  // (round, batch) -> start, end
    int micro_batches = 0;
    LinkService uplink;
    for (const Event& e : trace::ResultsFile::read_events(path, device)) {
      if (e.round >= 0 && e.round < warmup_rounds) continue;
      if (e.lane == Lane::compute && e.kind == EventKind::forward) forward.push_back(seconds(e));
      if (e.lane == Lane::compute && e.kind == EventKind::backward) backward.push_back(seconds(e));
      if (e.lane == Lane::compute && e.kind == EventKind::step) step.push_back(seconds(e));
      if (e.kind == EventKind::send && e.micro_batch >= 0) upload.push_back(uplink.next(e));
      if (e.micro_batch >= 0) micro_batches = std::max(micro_batches, e.micro_batch + 1);
      if (e.lane != Lane::compute || e.batch < 0) continue;
      auto& span = iteration[{e.round, e.batch}];
      if (e.kind == EventKind::forward && e.micro_batch == 0) span.first = e.t_start_ns;
      if (e.kind == EventKind::step) span.second = e.t_end_ns;
    }
    Stages s;
    s.forward = median(forward);
    s.upload = median(upload);
    s.server = server_per_micro;
    s.download = median(downloads[device]);
    s.backward = median(backward);
    s.step = median(step);
    std::vector<double> measured;
    for (const auto& [key, span] : iteration) {
      if (span.first > 0 && span.second > span.first) {
        measured.push_back(static_cast<double>(span.second - span.first) * 1e-9);
      }
    }
    const double ideal = ideal_iteration(s, std::max(1, micro_batches));
    const double ratio = median(measured) / ideal;
    all_ratios.push_back(ratio);
    std::printf("device %d: m=%d  stage medians ms: forward %.2f upload %.2f server %.2f download %.2f "
                "backward %.2f step %.2f  -> ideal %.1f ms, measured %.1f ms, ratio %.3f\n",
                device, micro_batches, 1e3 * s.forward, 1e3 * s.upload, 1e3 * s.server,
                1e3 * s.download, 1e3 * s.backward, 1e3 * s.step, 1e3 * ideal,
                1e3 * median(measured), ratio);
    devices.push_back(Json()
                          .number("device", device)
                          .number("micro_batches", micro_batches)
                          .number("forward_s", s.forward)
                          .number("upload_s", s.upload)
                          .number("server_s", s.server)
                          .number("download_s", s.download)
                          .number("backward_s", s.backward)
                          .number("step_s", s.step)
                          .number("ideal_iteration_s", ideal)
                          .number("median_measured_iteration_s", median(measured))
                          .number("ratio", ratio));
  }
  return Json()
      .text("file", path)
      .number("warmup_rounds", warmup_rounds)
      .objects("devices", devices)
      .number("median_ratio", median(all_ratios));
}

}  // namespace cmlbed::bench
