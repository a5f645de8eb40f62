#include "cmlbed/config/option_table.hpp"

#include <sstream>

#include "cmlbed/config/methods.hpp"
#include "cmlbed/config/option_rows.hpp"

#include "cmlbed/data/dataset_loader.hpp"
#include "cmlbed/model/zoo.hpp"

namespace cmlbed {
namespace {

using T = OptionType;
using namespace rows;

// experiment.method's help: every row of the method table with its summary.
std::string method_help() {
  std::string help = "collaborative learning method to run";
  for (const MethodTraits& method : method_table()) {
    help += (&method == &method_table().front() ? ": " : "; ") + method.name + " = " + method.summary;
  }
  return help;
}

// The zoo's networks, then torchscript (a module from model.file).
std::vector<std::string> model_choices() {
  std::vector<std::string> names = model::model_names();
  names.push_back(model::kTorchScript);
  return names;
}

// Options of the run: [experiment], [model], [data].
std::vector<OptionSpec> run_options() {
  return {
      // [experiment]
      choice(CMLBED_FIELD(experiment, method), default_method(), method_names(), method_help()),
      changeable_on_resume(bounded(option(CMLBED_FIELD(experiment, rounds), T::integer, "5", "rounds",
                                          "training rounds (see train.aggregate_every)"),
                                   1, 1e6)),
      bounded(option(CMLBED_FIELD(experiment, seed), T::integer, "1", "integer",
                     "seed for model weights, data partition and synthetic data"),
              0, 4294967295.0),

      changeable_on_resume(option(CMLBED_FIELD(experiment, timeout), T::duration, "300s", "duration",
                                  "longest wait for any one message; a dead rank or lost message ends the run "
                                  "with an error naming rank and stage (completed rounds stay in the file)")),

      // [model]
      choice(CMLBED_FIELD(model, name), "vgg5", model_choices(), "network from the model zoo, or torchscript: "
             "the TorchScript module in model.file (docs/how-to/own-model.md)"),
      option(CMLBED_FIELD(model, file), T::path, "", "file",
             "model.name=torchscript only: a module saved by torch.jit.save whose forward calls its "
             "children in order (an nn.Sequential), split between them; its weights are the "
             "initial ones whatever experiment.seed (docs/how-to/own-model.md)"),
      per_device(autoable(bounded(option(CMLBED_FIELD(model, split), T::integer, "2", "layer index P",
                                         "split point: the device runs layers [0,P), the server "
                                         "layers [P,L) and the loss; P=L is plain FL, P=0 sends raw "
                                         "inputs (see `cmlbed info --model NAME`); auto (sfl, pipar): "
                                         "the planner picks P for the lowest predicted round "
                                         "time (docs/explanation/simulator.md)"),
                                  0, 10000))),

      // [data]
      choice(CMLBED_FIELD(data, dataset), "fashion-mnist", data::dataset_names(), "training and test data"),
      option(CMLBED_FIELD(data, dir), T::path, "", "directory",
             "where the dataset's files are; empty = the dataset's default "
             "(/usr/share/datasets/fashion-mnist for fashion-mnist)"),
      option(CMLBED_FIELD(data, file), T::path, "", "file",
             "data.dataset=arrays only: an .npz (numpy.savez) or HDF5 file holding train_images, "
             "train_labels, test_images, test_labels and optionally mean and std (docs/how-to/own-data.md)"),
      choice(CMLBED_FIELD(data, partition), "iid", {"iid", "dirichlet", "shards"},
             "how the training set is split across devices (the test set stays at the "
             "server)"),
      bounded(option(CMLBED_FIELD(data, alpha), T::real, "0.5", "concentration",
                     "Dirichlet label-skew concentration (small = more skew); "
                     "data.partition=dirichlet only"),
              1e-6, 1e6),
      bounded(option(CMLBED_FIELD(data, classes_per_device), T::integer, "2", "classes",
                     "classes each device sees; data.partition=shards only"),
              1, 1000),
      bounded(option(CMLBED_FIELD(data, train_limit), T::integer, "0", "samples",
                     "use only the first N training samples (0 = all)"),
              0, 1e9),
      bounded(option(CMLBED_FIELD(data, test_limit), T::integer, "0", "samples",
                     "use only the first N test samples (0 = all)"),
              0, 1e9),
      option(CMLBED_FIELD(data, synthetic_shape), T::shape, "1x28x28", "CxHxW",
             "image shape of the synthetic dataset"),
      bounded(option(CMLBED_FIELD(data, synthetic_classes), T::integer, "10", "classes",
                     "classes of the synthetic dataset"),
              2, 255),
      bounded(option(CMLBED_FIELD(data, synthetic_train), T::integer, "6000", "samples",
                     "training samples of the synthetic dataset"),
              1, 1e8),
      bounded(option(CMLBED_FIELD(data, synthetic_test), T::integer, "1000", "samples",
                     "test samples of the synthetic dataset"),
              1, 1e8),
  };
}

// Options of training: [train], [sl].
std::vector<OptionSpec> training_options() {
  return {
      // [train]
      bounded(option(CMLBED_FIELD(train, batch_size), T::integer, "32", "samples",
                     "mini-batch size on each device"),
              1, 65536),
      choice(CMLBED_FIELD(train, optimizer), "sgd", {"sgd", "adam"}, "optimizer on both sides of the split"),
      bounded(option(CMLBED_FIELD(train, lr), T::real, "0.01", "", "learning rate"), 1e-12, 100),
      bounded(option(CMLBED_FIELD(train, momentum), T::real, "0.9", "", "SGD momentum"), 0, 0.999999),
      bounded(option(CMLBED_FIELD(train, weight_decay), T::real, "0", "", "L2 weight decay"), 0, 1),
      // Before it, every method kept its optimizers' state across averages.
      existed_later(choice(CMLBED_FIELD(train, optimizer_state), "reset", {"reset", "keep"},
             "what an optimizer's state (SGD momentum, Adam's moments) does when its model's "
             "weights are replaced from outside: reset starts a fresh optimizer (fl, sfl, pipar: "
             "on each device and server replica after every average; sl: on a device each time "
             "the device part is handed to it), as Flower's examples and SplitFed's code do; keep "
             "carries it on, as PiPar's code (PipeLearn) does. Never reset: sl's server part, "
             "adasplit (nothing replaced). docs/explanation/optimizer-state.md"),
                    "keep"),
      option(CMLBED_FIELD(train, personalised), T::flag, "false", "true/false",
             method_list(&MethodTraits::personalisable) +
                 ": each device keeps its own device part (never averaged, never "
             "handed to another device) and is scored with it followed by the shared server "
             "part, as AdaSplit's devices are; the server side stays shared (sfl, pipar average "
             "the server replicas, sl trains one server part). No device part is sent while "
             "training (sl: a one-byte control word starts a turn). Not with fl, adasplit "
             "(personalised already), transfer or plan.replan. docs/explanation/adasplit.md"),
      bounded(option(CMLBED_FIELD(train, local_epochs), T::integer, "1", "epochs",
                     "passes over the local data per round (ignored when "
                     "train.local_iterations > 0)"),
              0, 1e6),
      bounded(option(CMLBED_FIELD(train, local_iterations), T::integer, "0", "mini-batches",
                     "mini-batches per device per round; 0 = use train.local_epochs"),
              0, 1e9),
      bounded(option(CMLBED_FIELD(train, aggregate_every), T::integer, "1", "rounds",
                     "FedAvg every k rounds (and after the last); devices keep their own "
                     "models in between (" + method_list(&MethodTraits::averages) + ")"),
              1, 1e6),
      bounded(option(CMLBED_FIELD(train, server_threads), T::integer, "1", "threads",
                     "LibTorch intra-op threads on the server rank"),
              1, 1024),
      bounded(option(CMLBED_FIELD(train, server_streams), T::integer, "1", "streams",
                     method_list(&MethodTraits::server_replicas, "and") +
                         ": server compute streams serving different devices at once "
                     "(device d on stream (d-1) mod k), each with server_threads / k threads"),
              1, 1024),
      bounded(option(CMLBED_FIELD(train, device_threads), T::integer, "1", "threads",
                     "LibTorch intra-op threads on each device rank"),
              1, 1024),

  };
}

// Options of the planner: [plan].
std::vector<OptionSpec> planning_options() {
  return {
      option(CMLBED_FIELD(plan, profile), T::path, "", "path",
             "with model.split or pipar.micro_batches = auto: plan from this profile "
             "(`cmlbed profile`) instead of profiling before round 1"),
      bounded(option(CMLBED_FIELD(plan, min_split), T::integer, "1", "layer index",
                     "with model.split = auto (and in `cmlbed plan`): the smallest split the "
                     "planner may choose; the default 1 keeps at least one layer on every "
                     "device, so raw samples never leave it; 0 lets the planner choose split "
                     "0, which uploads raw samples (centralised training, not split learning)"),
              0, 10000),
      with_word(bounded(option(CMLBED_FIELD(plan, host_cores), T::integer, "placement", "cores",
                               "the simulator and planner: every rank runs on one host with this "
                               "many cores, and their stages' work shares them (processor sharing); "
                               "0: each rank has cores of its own (right where mpirun spreads the "
                               "ranks one per core over nodes); placement: as the ranks are placed "
                               "(cmlbed run: the cores of their host, from MPI and the affinity "
                               "masks; cmlbed plan and simulate: the devices and the server on this "
                               "host's cores; docs/explanation/fidelity.md)"),
                        0, 1 << 20),
                "placement"),
      option(CMLBED_FIELD(plan, host_slice), T::duration, "0ms", "duration",
             "with plan.host_cores: the scheduler's time slice on that host (Linux: "
             "/sys/kernel/debug/sched/base_slice_ns, by default 0.75 ms x (1 + log2 of the "
             "cores, at most 8)); a message that arrives while every core is busy reaches "
             "the waiting thread 3 half-slices late (3 wake-ups each wait for a core); 0: "
             "not modelled"),
      choice(CMLBED_FIELD(plan, check_pacing), "warn", {"warn", "strict", "off"},
             "before round 1 (and with --dry-run): predict from a profile of this host whether it "
             "keeps the paced or stretched devices' pace with the ranks sharing its cores, and where "
             "not, the fastest device speed and the most devices it keeps; warn: print it; strict: "
             "refuse the run (exit 2; --strict-emulation); off: skip the check and its profile "
             "(docs/explanation/fidelity.md)"),
      choice(CMLBED_FIELD(plan, replan), "off", {"off", "on_change"},
             "with model.split or pipar.micro_batches = auto: on_change plans for the links' "
             "rates as they are at the start, and plans again after a round in which a rate "
             "trace changed a link (at the first such round that averages the models), "
             "re-splitting the model if the new plan is predicted 1% faster; off: one plan "
             "before round 1, simulating the traces from the start (docs/explanation/simulator.md)"),
  };
}

// Options of links and devices: [network], [devices].
std::vector<OptionSpec> network_options() {
  return {
      // [network]: defaults for every device, overridable in [device.K]
      drawn_per_device(option(CMLBED_FIELD(network, uplink_rate), T::rate, "", "tc rate",
                        "device->server rate, e.g. 10mbit (bits/s) or 2mbps (BYTES/s); "
                        "empty = unshaped")),
      drawn_per_device(option(CMLBED_FIELD(network, downlink_rate), T::rate, "", "tc rate",
                        "server->device rate; empty = unshaped")),
      per_device(bounded(option(CMLBED_FIELD(network, burst), T::size, "64kb", "tc size",
                                "token bucket size, e.g. 32kb (tc: 1 kb = 1024 bytes)"),
                         1, 1e12)),
      per_device(option(CMLBED_FIELD(network, delay), T::duration, "0ms", "duration",
                        "one-way latency added after shaping, e.g. 20ms")),
      per_device(option(CMLBED_FIELD(network, jitter), T::duration, "0ms", "duration",
                        "delay varies uniformly within +-jitter (at most network.delay); "
                        "messages stay in order")),
      per_device(option(CMLBED_FIELD(network, uplink_trace), T::path, "", "CSV file",
                        "changing uplink rate: lines 't_seconds,rate' (tc units) from the "
                        "start of the run; network.uplink_rate applies before the first")),
      per_device(option(CMLBED_FIELD(network, downlink_trace), T::path, "", "CSV file",
                        "changing downlink rate, same format")),

      // [devices]: defaults for every device, overridable in [device.K]
      drawn_per_device(bounded(option(CMLBED_FIELD(devices, slowdown), T::real, "1", "factor >= 1",
                                "every compute stage of the device lasts k times its "
                                "CPU time (its wall time with device_threads > 1)"),
                         1, 1e6)),
      drawn_per_device(option(CMLBED_FIELD(devices, flops), T::compute_rate, "", "compute rate",
                        "the device's speed, e.g. 2GFLOP/s: each compute stage lasts exactly "
                        "its FLOPs / this rate (the real work runs inside it, the rest is "
                        "slept), so round times do not depend on this machine's speed or load; "
                        "empty = this machine's speed (x devices.slowdown). Not with "
                        "devices.slowdown")),
      per_device(bounded(option(CMLBED_FIELD(devices, data_share), T::real, "1", "weight",
                                "relative share of the training set (data.partition=iid "
                                "only)"),
                         1e-9, 1e9)),

  };
}

// Options of [privacy], [evaluation], [output].
std::vector<OptionSpec> privacy_and_output_options() {
  return {
      // [privacy] (docs/explanation/privacy.md)
      choice(CMLBED_FIELD(privacy, mechanism), "none", {"none", "gaussian", "laplace"},
             "differential privacy: split methods clip every sample's uploaded activation "
             "(L2 for gaussian, L1 for laplace) to privacy.clip and add noise of std / scale "
             "noise_multiplier x clip; fl (gaussian only): DP-FedAvg, each update clipped, "
             "Gaussian noise of noise_multiplier x clip / devices on the average"),
      bounded(option(CMLBED_FIELD(privacy, clip), T::real, "1", "norm", "clipping norm C"), 1e-12, 1e12),
      bounded(option(CMLBED_FIELD(privacy, noise_multiplier), T::real, "1", "sigma",
                     "noise standard deviation (or Laplace scale) in units of privacy.clip"),
              0, 1e6),
      bounded(option(CMLBED_FIELD(privacy, delta), T::real, "1e-5", "probability",
                     "delta of the (epsilon, delta) figure the results file records (gaussian)"),
              1e-300, 0.999999),
      choice(CMLBED_FIELD(privacy, adjacency), "add-remove", {"add-remove", "replace-one"},
             "the neighbouring datasets the recorded epsilon is for: add-remove (one sample, "
             "or fl: one device's data, present or absent; L2 sensitivity of a clipped "
             "release C) or replace-one (one replaced by another; sensitivity 2C, so a larger "
             "epsilon for the same noise)"),

      // [evaluation]
      choice(CMLBED_FIELD(evaluation, scope), "global", {"global", "per-device"},
             "global: the aggregated model on the whole test set; per-device: each device "
             "scored on the test samples of its own classes, weighted by its label shares "
             "(test_accuracy = the sample-weighted mean, device_accuracy per device)"),

      // [output]
      option(CMLBED_FIELD(output, file), T::path, "", "path",
             "HDF5 results file; empty = results/<method>-<date>-<time>.h5"),
      changeable_on_resume(option(CMLBED_FIELD(output, overwrite), T::flag, "false", "true/false",
                                  "replace output.file if it exists")),
      option(CMLBED_FIELD(output, timeline), T::flag, "true", "true/false",
             "record per-stage events (turn off only to measure the recording's cost)"),
      changeable_on_resume(option(CMLBED_FIELD(output, progress), T::flag, "true", "true/false",
                                  "print a progress line per round on rank 0")),
      changeable_on_resume(bounded(option(CMLBED_FIELD(output, checkpoint), T::integer, "1", "rounds",
                                          "write a checkpoint (<output.file>.ckpt) every N rounds and after the "
                                          "last, for `cmlbed run --resume`; 0 = never"),
                                   0, 1e9)),
  };
}

// Each method's own options (MethodTraits::options), in the method table's order.
std::vector<OptionSpec> method_options() {
  std::vector<OptionSpec> options;
  for (const MethodTraits& method : method_table()) options.insert(options.end(), method.options.begin(), method.options.end());
  return options;
}

std::vector<OptionSpec> build_table() {
  std::vector<OptionSpec> table;
  for (auto part : {run_options, training_options, method_options, planning_options, network_options,
                    privacy_and_output_options}) {
    std::vector<OptionSpec> options = part();
    table.insert(table.end(), std::make_move_iterator(options.begin()), std::make_move_iterator(options.end()));
  }
  return table;
}

}  // namespace

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = build_table();
  return table;
}

const OptionSpec* find_option(std::string_view name) {
  for (const OptionSpec& spec : option_table()) {
    if (spec.name == name) return &spec;
  }
  return nullptr;
}

namespace {

std::string format_bound(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string allowed_values(const OptionSpec& spec) {
  const bool has_min = spec.min > -1e299;
  const bool has_max = spec.max < 1e299;
  std::string range;
  if (has_min && has_max) {
    range = " in [" + format_bound(spec.min) + ", " + format_bound(spec.max) + "]";
  } else if (has_min) {
    range = " >= " + format_bound(spec.min);
  }
  const std::string unit = spec.unit.empty() ? "" : " (" + spec.unit + ")";
  switch (spec.type) {
    case OptionType::integer:
      return "an integer" + range + unit + (spec.allows_auto ? " or auto" : "") +
             (spec.word.empty() ? "" : " or " + spec.word);
    case OptionType::real: return "a number" + range + unit;
    case OptionType::flag: return "true or false";
    case OptionType::choice: {
      std::string words;
      for (const std::string& c : spec.choices) words += (words.empty() ? "" : ", ") + c;
      return "one of " + words;
    }
    case OptionType::size: return "a tc size" + range + " bytes";
    default: return spec.unit;
  }
}

const OptionSpec* find_per_device_option(std::string_view key) {
  for (const OptionSpec& spec : option_table()) {
    if (spec.per_device && spec.key() == key) return &spec;
  }
  return nullptr;
}

}  // namespace cmlbed
