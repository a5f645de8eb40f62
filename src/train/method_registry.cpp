#include "cmlbed/train/method_registry.hpp"

#include <functional>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/methods.hpp"
#include "adasplit_method.hpp"
#include "local_loss.hpp"
#include "u_shaped.hpp"
#include "federated_averaging.hpp"
#include "split_learning.hpp"
#include "transfer_method.hpp"

namespace cmlbed::train {
namespace {

using Factory = std::function<std::unique_ptr<Method>(const Settings&, int rank, int devices, MPI_Comm comm)>;

struct Registered {
  const char* name;
  Factory make;
};

template <typename M>
Factory plain() {
  return [](const Settings& settings, int rank, int devices, MPI_Comm comm) {
    return std::make_unique<M>(settings, rank, devices, comm);
  };
}

const std::vector<Registered>& registry() {
  static const std::vector<Registered> methods = {
      {"fl", plain<FederatedAveraging>()},
      {"sl", plain<SplitLearning>()},
      {"sfl", plain<SplitLearning>()},
      {"pipar", plain<SplitLearning>()},
      {"sfl2", plain<SplitLearning>()},
      {"psl", plain<SplitLearning>()},
      {"localloss", plain<LocalLoss>()},
      {"ushaped", plain<UShaped>()},
      {"adasplit", plain<AdaSplit>()},
      {"transfer", plain<TransferMethod>()},
  };
  return methods;
}

const Registered* find(const std::string& name) {
  for (const Registered& method : registry()) {
    if (name == method.name) return &method;
  }
  return nullptr;
}

const Registered& find(const Settings& settings) {
  const MethodTraits& traits = method_traits(settings.experiment.method);
  if (const Registered* method = find(traits.name)) return *method;
  std::string available;
  for (const std::string& known : available_methods()) available += (available.empty() ? "" : ", ") + known;
  throw ConfigError("experiment.method = " + traits.name + " is not available in this build yet; available: " +
                    available);
}

}  // namespace

std::vector<std::string> available_methods() {
  std::vector<std::string> names;
  for (const Registered& method : registry()) names.emplace_back(method.name);
  return names;
}

bool has_factory(const std::string& name) { return find(name) != nullptr; }

void check_method_available(const Settings& settings) { find(settings); }

std::unique_ptr<Method> make_method(const Settings& settings, int rank, int devices, MPI_Comm comm) {
  return find(settings).make(settings, rank, devices, comm);
}

}  // namespace cmlbed::train
