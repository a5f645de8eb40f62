#include "cmlbed/config/methods.hpp"

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/option_rows.hpp"

namespace cmlbed {
namespace {

using T = OptionType;
using namespace rows;

MethodTraits adasplit_row() {
  MethodTraits adasplit;
  adasplit.name = "adasplit";
  adasplit.summary = "AdaSplit: local rounds, then an orchestrator picks the devices the server trains on; "
                     "no gradients sent back";
  adasplit.splits_model = true;
  adasplit.local_phase = true;
  adasplit.personalised_always = true;
  adasplit.simulatable = true;
  adasplit.checkpointable = true;
  adasplit.noise = NoiseTarget::activations;
  adasplit.privacy_mechanisms = {"none", "gaussian", "laplace"};
  adasplit.personalised_refusal = "adasplit is personalised already (each device keeps its part, the server a "
                                  "mask per device); set train.personalised = false";
  // docs/explanation/adasplit.md
  adasplit.options = {
    bounded(option(CMLBED_FIELD(adasplit, local_fraction), T::real, "0.6", "fraction",
                   "kappa: the first floor(kappa x experiment.rounds) rounds are the local "
                   "phase, where devices train alone on their contrastive loss and send "
                   "nothing"),
            0, 1),
    bounded(option(CMLBED_FIELD(adasplit, selected), T::integer, "3", "devices",
                   "eta: devices the orchestrator picks per iteration of the global phase "
                   "(at most the number of devices)"),
            1, 1 << 20),
    choice(CMLBED_FIELD(adasplit, orchestrator), "ucb", {"ucb", "random", "all"},
           "ucb: discounted UCB on the devices' server loss; random: eta uniformly; "
           "all: every device every iteration (no orchestrator)"),
    bounded(option(CMLBED_FIELD(adasplit, discount), T::real, "0.75", "gamma",
                   "discount of the UCB orchestrator's loss and selection history"),
            1e-9, 1),
    bounded(option(CMLBED_FIELD(adasplit, temperature), T::real, "0.07", "",
                   "temperature of the devices' supervised NT-Xent loss"),
            1e-6, 100),
    bounded(option(CMLBED_FIELD(adasplit, l1), T::real, "1e-4", "lambda",
                   "weight of the L1 term sum(sigmoid(M_d)) on the server's per-device masks"),
            0, 1e6),
    bounded(option(CMLBED_FIELD(adasplit, embedding_dim), T::integer, "64", "features",
                   "output size of the devices' projection head"),
            1, 1 << 16),
    bounded(option(CMLBED_FIELD(adasplit, head_channels), T::integer, "128", "channels",
                   "hidden width of the projection head (1x1 convolution, or linear for a "
                   "flat activation)"),
            1, 1 << 16),
  };
  return adasplit;
}

MethodTraits localloss_row() {
  MethodTraits localloss;
  localloss.name = "localloss";
  localloss.summary = "local-loss split learning (CSE-FSL): devices train on an auxiliary head and upload an "
                      "activation every few mini-batches, the server trains on them; no gradients sent back; "
                      "device parts averaged";
  localloss.splits_model = true;
  localloss.averages = true;
  localloss.simulatable = true;
  localloss.checkpointable = true;
  localloss.noise = NoiseTarget::activations;
  localloss.privacy_mechanisms = {"none", "gaussian", "laplace"};
  localloss.personalised_refusal = "localloss averages every device's part and head (FedAvg); a personalised "
                                   "variant is not built; set train.personalised = false";
  // docs/explanation/methods.md
  localloss.options = {
    bounded(option(CMLBED_FIELD(localloss, upload_every), T::integer, "1", "mini-batches",
                   "h: a device uploads the activation and labels of every h-th mini-batch (the "
                   "first of each h) for the server to train on; CSE-FSL's upload interval"),
            1, 1e9),
    bounded(option(CMLBED_FIELD(localloss, head_hidden), T::integer, "128", "channels",
                   "hidden width of the devices' auxiliary head (AdaSplit's projection head, "
                   "with one output per class)"),
            1, 1 << 16),
  };
  return localloss;
}

MethodTraits ushaped_row() {
  MethodTraits ushaped;
  ushaped.name = "ushaped";
  ushaped.summary = "U-shaped split learning: each device keeps the first layers and the last with the loss, "
                    "the server runs a middle replica per device; labels never leave; averaged as sfl";
  ushaped.splits_model = true;
  ushaped.server_replicas = true;
  ushaped.device_tail = true;
  ushaped.simulatable = true;
  ushaped.averages = true;
  ushaped.sends_gradients = true;
  ushaped.checkpointable = true;
  ushaped.noise = NoiseTarget::activations;
  ushaped.privacy_mechanisms = {"none", "gaussian", "laplace"};
  ushaped.personalised_refusal = "a personalised ushaped (each device keeping its head and tail) is not built; "
                                 "set train.personalised = false";
  // docs/explanation/methods.md
  ushaped.options = {
    with_word(bounded(option(CMLBED_FIELD(ushaped, tail), T::integer, "last", "layer",
                             "the second cut: the device's tail runs layers [tail, L) and the loss, the "
                             "server's middle [model.split, tail); last = L - 1, the last layer; tail = L "
                             "leaves the loss alone on the device"),
                      0, 1 << 20),
              "last"),
  };
  ushaped.check_options = [](const Settings& settings, std::size_t layers, int devices) {
    const auto last = static_cast<std::int64_t>(layers);
    const std::int64_t tail = settings.ushaped.tail.value_or(last - 1);
    if (tail > last) {
      throw ConfigError(settings.said(&settings.ushaped.tail) + " is beyond the model's " + std::to_string(last) +
                        " layers; allowed: model.split.." + std::to_string(last));
    }
    for (int device = 0; device <= devices; ++device) {
      const Auto<std::int64_t> split = settings.model.split.of(device);
      if (!split.is_auto() && split.value() > tail) {
        throw ConfigError(settings.said(&settings.model.split, device) + " with " +
                          settings.said(&settings.ushaped.tail) +
                          ": the device's head must end before its tail begins; allowed: 0.." + std::to_string(tail));
      }
    }
    if (settings.train.server_streams != 1) {
      throw ConfigError(settings.said(&settings.train.server_streams) +
                        " with experiment.method = ushaped: its middles are served on one stream (set 1)");
    }
  };
  return ushaped;
}

MethodTraits transfer_row() {
  MethodTraits transfer;
  transfer.name = "transfer";
  transfer.summary = "the runtime smoke job: each device computes and sends bytes, no model is trained";
  transfer.trains = false;
  transfer.privacy_mechanisms = {"none"};
  transfer.personalised_refusal = "the transfer job trains no model";
  transfer.options = {
    bounded(option(CMLBED_FIELD(transfer, bytes), T::size, "1MiB", "tc size",
                   "bytes each device sends to the server per round, and gets back"),
            0, 1e10),
    option(CMLBED_FIELD(transfer, compute), T::duration, "0ms", "duration",
           "CPU time each device computes per round before sending (stretched by "
           "devices.slowdown)"),
  };
  return transfer;
}

std::vector<MethodTraits> build_table() {
  std::vector<MethodTraits> table;

  MethodTraits& fl = table.emplace_back();
  fl.name = "fl";
  fl.summary = "federated averaging: each device trains the whole model, the server averages the models";
  fl.averages = true;
  fl.simulatable = true;
  fl.checkpointable = true;
  fl.noise = NoiseTarget::model_updates;
  fl.privacy_mechanisms = {"none", "gaussian"};  // DP-FedAvg is Gaussian
  fl.personalised_refusal = "fl trains the whole model on every device and has no device part to keep";

  MethodTraits& sl = table.emplace_back();
  sl.name = "sl";
  sl.summary = "split learning: the devices take turns, one device part handed from device to device";
  sl.splits_model = true;
  sl.takes_turns = true;
  sl.sends_gradients = true;
  sl.personalisable = true;
  sl.simulatable = true;
  sl.checkpointable = true;
  sl.noise = NoiseTarget::activations;
  sl.privacy_mechanisms = {"none", "gaussian", "laplace"};
  sl.options = {
    bounded(option(CMLBED_FIELD(sl, batches_per_turn), T::integer, "1", "mini-batches",
                   "sl: mini-batches a device trains before the device part moves on to the "
                   "next device (devices take turns 1..N round-robin until each has trained "
                   "its round's mini-batches); 1 = AdaSplit's SL baseline, which learns on "
                   "label-skewed shards; 0 = all of them in one turn (Gupta & Raskar, "
                   "SplitFed's SL code), which on label-skewed shards collapses to a "
                   "constant prediction (docs/explanation/optimizer-state.md)"),
            0, 1e9),
  };

  MethodTraits& sfl = table.emplace_back();
  sfl.name = "sfl";
  sfl.summary = "SplitFed: every device at once, each with its own server replica; parts and replicas averaged";
  sfl.splits_model = true;
  sfl.server_replicas = true;
  sfl.averages = true;
  sfl.sends_gradients = true;
  sfl.personalisable = true;
  sfl.plannable = true;
  sfl.simulatable = true;
  sfl.checkpointable = true;
  sfl.noise = NoiseTarget::activations;
  sfl.privacy_mechanisms = {"none", "gaussian", "laplace"};

  MethodTraits& pipar = table.emplace_back(sfl);
  pipar.name = "pipar";
  pipar.summary = "PiPar: SplitFed with mini-batches cut into micro-batches that pipeline compute and links";
  pipar.micro_batches = true;
  pipar.options = {
    per_device(autoable(bounded(option(CMLBED_FIELD(pipar, micro_batches), T::integer, "4", "micro-batches",
                                       "micro-batches each mini-batch is cut into (pipar only); "
                                       "auto: the planner picks it (docs/explanation/simulator.md)"),
                                1, 65536))),
    bounded(option(CMLBED_FIELD(pipar, min_micro_batch), T::integer, "8", "samples",
                   "with pipar.micro_batches = auto (and in `cmlbed plan`): the smallest "
                   "micro-batch, in samples, the planner may choose (it never cuts a "
                   "mini-batch of fewer samples); smaller micro-batches train another model "
                   "where a device layer normalises over the batch (docs/explanation/fidelity.md)"),
            1, 65536),
  };

  MethodTraits& sfl2 = table.emplace_back();
  sfl2.name = "sfl2";
  sfl2.summary = "SplitFed V2: every device at once; one server part serves them one device at a time, "
                 "in a seeded random order; device parts averaged";
  sfl2.splits_model = true;
  sfl2.serves_in_device_order = true;
  sfl2.averages = true;
  sfl2.sends_gradients = true;
  sfl2.personalisable = true;
  sfl2.plannable = true;
  sfl2.simulatable = true;
  sfl2.checkpointable = true;
  sfl2.noise = NoiseTarget::activations;
  sfl2.privacy_mechanisms = {"none", "gaussian", "laplace"};

  MethodTraits& psl = table.emplace_back();
  psl.name = "psl";
  psl.summary = "parallel split learning: every device at once; one server part takes mini-batch b of every "
                "device as one batch; device parts never averaged";
  psl.splits_model = true;
  psl.serves_batches_together = true;
  psl.sends_gradients = true;
  psl.personalised_always = true;
  psl.simulatable = true;
  psl.checkpointable = true;
  psl.plannable = true;
  psl.noise = NoiseTarget::activations;
  psl.privacy_mechanisms = {"none", "gaussian", "laplace"};
  psl.personalised_refusal = "psl keeps each device's part anyway (device parts are never averaged); "
                             "set train.personalised = false";

  table.push_back(localloss_row());
  table.push_back(ushaped_row());
  table.push_back(adasplit_row());
  table.push_back(transfer_row());
  return table;
}

}  // namespace

const std::vector<MethodTraits>& method_table() {
  static const std::vector<MethodTraits> table = build_table();
  return table;
}

const MethodTraits* find_method(const std::string& name) {
  for (const MethodTraits& row : method_table()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

const MethodTraits& method_traits(const std::string& name) {
  if (const MethodTraits* row = find_method(name)) return *row;
  throw ConfigError("experiment.method = " + name + " is not a method; methods: " +
                    method_list([](const MethodTraits&) { return true; }));
}

const std::string& default_method() {
  static const std::string name = "sfl";
  return name;
}

const std::vector<std::string>& method_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> all;
    for (const MethodTraits& row : method_table()) all.push_back(row.name);
    return all;
  }();
  return names;
}

std::string method_list(const std::function<bool(const MethodTraits&)>& has, const std::string& last_word) {
  std::vector<std::string> names;
  for (const MethodTraits& row : method_table()) {
    if (has(row)) names.push_back(row.name);
  }
  std::string list;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) list += (i + 1 == names.size() && last_word != ",") ? " " + last_word + " " : ", ";
    list += names[i];
  }
  return list;
}

}  // namespace cmlbed
