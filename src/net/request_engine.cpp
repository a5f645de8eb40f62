#include "request_engine.hpp"

#include <algorithm>

#include "cmlbed/net/mpi_error.hpp"

namespace cmlbed::net::detail {

void RequestEngine::add(MPI_Request request, Traffic traffic, std::function<void()> on_complete,
                        std::int64_t look_ns) {
  requests_.push_back(request);
  traffic_.push_back(traffic);
  look_ns_.push_back(look_ns);
  on_complete_.push_back(std::move(on_complete));
}

std::optional<std::int64_t> RequestEngine::arrival_look_ns() const {
  std::optional<std::int64_t> look;
  for (std::size_t i = 0; i < traffic_.size(); ++i) {
    if (traffic_[i] == Traffic::arriving && (!look || look_ns_[i] < *look)) look = look_ns_[i];
  }
  return look;
}

bool RequestEngine::bytes_moving() const {
  return std::find(traffic_.begin(), traffic_.end(), Traffic::moving) != traffic_.end();
}

bool RequestEngine::only_paced_sends() const {
  return std::all_of(traffic_.begin(), traffic_.end(), [](Traffic t) { return t == Traffic::paced; });
}

bool RequestEngine::test() {
  if (requests_.empty()) return false;
  int count = 0;
  indices_.resize(requests_.size());
  CMLBED_MPI_CHECK(MPI_Testsome(static_cast<int>(requests_.size()), requests_.data(), &count,
                                indices_.data(), MPI_STATUSES_IGNORE));
  if (count == MPI_UNDEFINED || count == 0) return false;
  std::vector<std::function<void()>> completions;
  for (int i = 0; i < count; ++i) completions.push_back(std::move(on_complete_[indices_[i]]));
  // Compact: completed requests were set to MPI_REQUEST_NULL by MPI_Testsome.
  std::size_t kept = 0;
  for (std::size_t i = 0; i < requests_.size(); ++i) {
    if (requests_[i] == MPI_REQUEST_NULL) continue;
    requests_[kept] = requests_[i];
    traffic_[kept] = traffic_[i];
    look_ns_[kept] = look_ns_[i];
    on_complete_[kept] = std::move(on_complete_[i]);
    ++kept;
  }
  requests_.resize(kept);
  traffic_.resize(kept);
  look_ns_.resize(kept);
  on_complete_.resize(kept);
  // After compaction: a completion may add requests.
  for (auto& completion : completions) completion();
  return true;
}

void RequestEngine::cancel_all() {
  // Unchecked: this runs in a destructor, on receives nobody matched (MPI_Cancel is
  // well defined for receives); there is nobody left to report a failure to.
  for (MPI_Request& request : requests_) {
    if (request == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  requests_.clear();
  traffic_.clear();
  look_ns_.clear();
  on_complete_.clear();
}

}  // namespace cmlbed::net::detail
