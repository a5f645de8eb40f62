#include "cmlbed/train/plan_changes.hpp"

namespace cmlbed::train {

PlanChanges::~PlanChanges() = default;

}  // namespace cmlbed::train
