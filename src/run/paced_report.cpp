#include "paced_report.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

namespace cmlbed::run {

bool PacedStages::any() const {
  return std::any_of(paced.begin(), paced.end(), [](double n) { return n > 0; });
}

PacedStages paced_stages(const std::vector<std::vector<double>>& per_rank, std::size_t first) {
  PacedStages out;
  for (const auto& figures : per_rank) {
    if (figures.size() < first + 4) {
      throw std::invalid_argument("paced stages: a rank sent " + std::to_string(figures.size()) +
                                  " values, expected at least " + std::to_string(first + 4));
    }
    out.paced.push_back(figures[first]);
    out.overran.push_back(figures[first + 1]);
    out.overrun_s.push_back(figures[first + 2]);
    out.worst_ratio.push_back(figures[first + 3]);
  }
  return out;
}

void write_paced_stages(trace::ResultsFile& results, const PacedStages& paced) {
  results.write_process_measure("paced_stages", paced.paced);
  results.write_process_measure("paced_overran", paced.overran);
  results.write_process_measure("paced_overrun_s", paced.overrun_s);
  results.write_process_measure("paced_worst_ratio", paced.worst_ratio);
}

std::string paced_line(const PacedStages& paced) {
  const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  const double stages = sum(paced.paced), overran = sum(paced.overran);
  char text[256];
  if (overran == 0) {
    std::snprintf(text, sizeof text, "held stages: all %.0f paced or stretched stages kept their length", stages);
    return text;
  }
  std::string ranks;
  for (std::size_t rank = 0; rank < paced.overran.size(); ++rank) {
    if (paced.overran[rank] > 0) ranks += (ranks.empty() ? "" : ", ") + std::to_string(rank);
  }
  std::snprintf(text, sizeof text,
                "held stages: %.0f of %.0f paced or stretched stages ran long (this machine was too slow or "
                "too busy for the emulated devices), by %.3f s in all, at worst %.2fx their length (device",
                overran, stages, sum(paced.overrun_s),
                *std::max_element(paced.worst_ratio.begin(), paced.worst_ratio.end()));
  return std::string(text) + (ranks.find(',') == std::string::npos ? " " : "s ") + ranks + ")";
}

}  // namespace cmlbed::run
