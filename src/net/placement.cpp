#include "cmlbed/net/placement.hpp"

#include <algorithm>
#include <stdexcept>

#include "cmlbed/base/cpu_usage.hpp"
#include "cmlbed/net/gather.hpp"

namespace cmlbed::net {
namespace {

int cpu_number(const std::string& text, const std::string& list) {
  if (text.empty() || !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      text.size() > 6) {
    throw std::invalid_argument("'" + list + "' is not a CPU list such as 0-3,6");
  }
  return std::stoi(text);
}

}  // namespace

std::string cpu_list_text(const std::set<int>& cpus) {
  std::string text;
  for (auto it = cpus.begin(); it != cpus.end();) {
    int last = *it;
    auto next = std::next(it);
    while (next != cpus.end() && *next == last + 1) last = *next++;
    if (!text.empty()) text += ",";
    text += std::to_string(*it) + (last > *it ? "-" + std::to_string(last) : "");
    it = next;
  }
  return text;
}

std::set<int> parse_cpu_list(const std::string& list) {
  std::set<int> cpus;
  std::size_t from = 0;
  while (from <= list.size() && !list.empty()) {
    const std::size_t comma = std::min(list.find(',', from), list.size());
    const std::string item = list.substr(from, comma - from);
    const std::size_t dash = item.find('-');
    const int first = cpu_number(item.substr(0, dash), list);
    const int last = dash == std::string::npos ? first : cpu_number(item.substr(dash + 1), list);
    if (last < first) throw std::invalid_argument("'" + list + "': range " + item + " runs backwards");
    for (int cpu = first; cpu <= last; ++cpu) cpus.insert(cpu);
    from = comma + 1;
  }
  return cpus;
}

std::vector<NodeShare> node_shares(const std::vector<std::string>& hosts, const std::vector<std::string>& cpu_lists) {
  if (hosts.size() != cpu_lists.size()) {
    throw std::invalid_argument("placement: " + std::to_string(hosts.size()) + " host names but " +
                                std::to_string(cpu_lists.size()) + " CPU lists");
  }
  std::vector<NodeShare> nodes;
  for (std::size_t rank = 0; rank < hosts.size(); ++rank) {
    auto node = std::find_if(nodes.begin(), nodes.end(), [&](const NodeShare& n) { return n.host == hosts[rank]; });
    if (node == nodes.end()) node = nodes.insert(nodes.end(), NodeShare{hosts[rank], {}, {}});
    node->ranks.push_back(static_cast<int>(rank));
    const std::set<int> cpus = parse_cpu_list(cpu_lists[rank]);
    node->cpus.insert(cpus.begin(), cpus.end());
  }
  return nodes;
}

std::vector<NodeShare> gather_placement(MPI_Comm comm) {
  const std::vector<std::string> hosts = gather_host_names(comm);
  const std::vector<std::string> lists = gather_strings(cpu_list_text(usable_cpus()), comm);
  return hosts.empty() ? std::vector<NodeShare>{} : node_shares(hosts, lists);
}

std::string placement_text(const std::vector<NodeShare>& nodes) {
  std::string text;
  for (const NodeShare& node : nodes) {
    if (!text.empty()) text += "; ";
    text += node.host + ": " + std::to_string(node.ranks.size()) + (node.ranks.size() == 1 ? " rank" : " ranks") +
            " on " + std::to_string(node.cpus.size()) + (node.cpus.size() == 1 ? " core" : " cores") + " (" +
            cpu_list_text(node.cpus) + ")";
  }
  return text;
}

double most_ranks_per_core(const std::vector<NodeShare>& nodes) {
  double most = 0;
  for (const NodeShare& node : nodes) most = std::max(most, node.ranks_per_core());
  return most;
}

}  // namespace cmlbed::net
