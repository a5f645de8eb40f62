#pragma once
// What each collaborative learning method is, in one table. Everything outside a method's
// own files (the option table and help texts, validation, resume rules, privacy, the
// simulator, the planner and `auto`) asks this table what a method does instead of
// comparing its name. It sits in config/ because config is below everything that asks;
// train/method_registry.cpp attaches the code that runs each row.
//
// Adding a method: its own files under src/train/, one row in src/config/methods.cpp (with
// the rows of its own options), its options' section in settings.hpp, one factory line in
// src/train/method_registry.cpp, and tests (docs/how-to/new-method.md).
#include <functional>
#include <string>
#include <vector>

#include "cmlbed/config/option_table.hpp"

namespace cmlbed {

struct Settings;

// What differential privacy (privacy.mechanism) perturbs in a method.
enum class NoiseTarget {
  nothing,        // no training data leaves the devices (the transfer job)
  model_updates,  // DP-FedAvg: each device's clipped update, noise on the average
  activations,    // each sample's uploaded activation, clipped, noise added
};

struct MethodTraits {
  std::string name;     // experiment.method
  std::string summary;  // one line for help texts: what the method does in a round
  bool trains = true;              // false: moves bytes only (the transfer job)
  bool splits_model = false;       // a device part and a server part; model.split applies
  bool takes_turns = false;        // the devices train one after another, one device part handed on
  bool server_replicas = false;    // a server part per device, served at once (train.server_streams)
  bool serves_in_device_order = false;  // one server part serves one device's mini-batches at a time,
                                        // devices in a seeded random order (sim::device_serving_order)
  bool serves_batches_together = false;  // one server part takes mini-batch b of every device as one
                                         // batch, the devices' activations concatenated (psl)
  bool device_tail = false;        // the device also runs the last layers and the loss (ushaped.tail):
                                   // the labels stay on it
  bool micro_batches = false;      // mini-batches are cut into pipar.micro_batches pieces
  bool averages = false;           // models averaged every train.aggregate_every rounds
  bool local_phase = false;        // local rounds (adasplit.local_fraction) before global ones
  bool sends_gradients = false;    // the server sends activation gradients back to the devices
  bool personalisable = false;     // train.personalised may keep a device part per device
  bool personalised_always = false;  // each device keeps its own part anyway
  bool plannable = false;          // model.split and pipar.micro_batches may be `auto`
  bool simulatable = false;        // `cmlbed simulate` and the planner can predict its rounds
  bool checkpointable = false;     // writes checkpoints; `cmlbed run --resume` continues it
  NoiseTarget noise = NoiseTarget::nothing;
  std::vector<std::string> privacy_mechanisms;  // allowed privacy.mechanism values
  std::string personalised_refusal;  // why train.personalised is refused ("" where it is not)
  // The options of its own section ([adasplit]), rows of the option table written as
  // option_table.cpp writes its own (option_rows.hpp), each bound to its field in
  // settings.hpp; option_table() lists them after the training options.
  std::vector<OptionSpec> options;
  // Checks of its own options against the model's `layers` and the run's `devices`, run
  // with the other checks before round 1 (setup/validate.cpp); throws ConfigError with
  // one line. Empty: nothing of its own to check.
  std::function<void(const Settings&, std::size_t layers, int devices)> check_options;
};

// Every method, in the order help texts list them.
const std::vector<MethodTraits>& method_table();

// The row of `name`, or nullptr.
const MethodTraits* find_method(const std::string& name);

// The row of `name`; ConfigError naming the known methods when there is none.
const MethodTraits& method_traits(const std::string& name);

// experiment.method when a configuration does not set it.
const std::string& default_method();

// The names of every method, in the table's order.
const std::vector<std::string>& method_names();

// "fl, sl, sfl" (or "fl, sl and sfl" with last_word = "and"): the names of the methods
// with a trait, for help texts and error messages.
std::string method_list(const std::function<bool(const MethodTraits&)>& has, const std::string& last_word = ",");

}  // namespace cmlbed
