#pragma once
// Where the ranks of a run sit: how many share each node, and how many cores they may
// use there together. Emulated times hold only while every rank gets the CPU it asks
// for; ranks that outnumber their node's cores take turns on them
// (docs/explanation/fidelity.md).
#include <mpi.h>

#include <set>
#include <string>
#include <vector>

namespace cmlbed::net {

struct NodeShare {
  std::string host;
  std::vector<int> ranks;  // the MPI ranks placed on it, ascending
  std::set<int> cpus;      // the union of their affinity masks: the cores they share
  double ranks_per_core() const { return cpus.empty() ? 0.0 : static_cast<double>(ranks.size()) / cpus.size(); }
};

// "0-3,6" (as the kernel and taskset write CPU lists) -> {0, 1, 2, 3, 6};
// std::invalid_argument for text that is not such a list.
std::set<int> parse_cpu_list(const std::string& list);

// {0, 1, 2, 3, 6} -> "0-3,6", the form parse_cpu_list reads.
std::string cpu_list_text(const std::set<int>& cpus);

// One entry per host, in the order of their first rank; hosts[r] and cpu_lists[r] are
// rank r's host name and affinity list.
std::vector<NodeShare> node_shares(const std::vector<std::string>& hosts, const std::vector<std::string>& cpu_lists);

// Every rank's affinity list, gathered with the host names: the placement, on rank 0
// (others get an empty vector).
std::vector<NodeShare> gather_placement(MPI_Comm comm);

// "localhost: 4 ranks on 2 cores (0-1)"; nodes joined by "; ".
std::string placement_text(const std::vector<NodeShare>& nodes);

// The most ranks per usable core on any node (0 for none).
double most_ranks_per_core(const std::vector<NodeShare>& nodes);

}  // namespace cmlbed::net
