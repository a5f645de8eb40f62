#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "cmlbed/config/config_error.hpp"
#include "cmlbed/config/method_columns.hpp"
#include "cmlbed/config/methods.hpp"
#include "cmlbed/model/zoo.hpp"
#include "commands.hpp"

namespace po = boost::program_options;

namespace cmlbed::cli {
namespace {

std::string join_shape(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (std::int64_t d : shape) text += (text.empty() ? "" : "x") + std::to_string(d);
  return text;
}

std::vector<model::LayerStats> stats_or_config_error(const model::ModelOptions& options) {
  try {
    return model::layer_stats(options);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(e.what());
  }
}

// One model: a row per split point P, so a user can pick P by eye. Row P describes
// the layer P-1 and what a split after it costs the device and the link.
void print_layers(const model::ModelOptions& options) {
  const auto stats = stats_or_config_error(options);
  std::int64_t params = 0, flops = 0;
  for (const auto& s : stats) {
    params += s.parameters;
    flops += s.flops_per_sample;
  }
  const std::int64_t classes = stats.back().output_shape.empty() ? options.classes : stats.back().output_shape.back();
  const std::string name = options.name == model::kTorchScript ? options.file : options.name;
  std::printf("model %s, input %s, %lld classes: %zu splittable layers, %lld parameters, "
              "%lld FLOPs per sample (a multiply-add = 2 FLOPs)\n",
              name.c_str(), options.input.to_string().c_str(), static_cast<long long>(classes), stats.size(),
              static_cast<long long>(params), static_cast<long long>(flops));
  if (options.name == model::kTorchScript) {
    std::printf("SHA-256 %s\n", model::model_file_sha256(options).c_str());
  }
  if (const std::string note = model::uncounted_flops_note(stats); !note.empty()) {
    std::printf("note: %s\n", note.c_str());
  }
  std::printf("split P: device runs layers [0,P) and sends layer P-1's output; server runs "
              "[P,%zu) and the loss\n\n",
              stats.size());
  std::printf("%3s  %-10s %-12s %12s %14s %14s %14s %14s\n", "P", "layer", "output", "params",
              "FLOPs/sample", "act B/sample", "device FLOPs", "device params");
  std::printf("%3d  %-10s %-12s %12s %14s %14lld %14d %14d\n", 0, "(input)",
              options.input.to_string().c_str(), "-", "-",
              static_cast<long long>(options.input.elements() * 4), 0, 0);
  std::int64_t device_flops = 0, device_params = 0;
  for (std::size_t i = 0; i < stats.size(); ++i) {
    const auto& s = stats[i];
    device_flops += s.flops_per_sample;
    device_params += s.parameters;
    std::printf("%3zu  %-10s %-12s %12lld %14lld %14lld %14lld %14lld\n", i + 1, s.name.c_str(),
                join_shape(s.output_shape).c_str(), static_cast<long long>(s.parameters),
                static_cast<long long>(s.flops_per_sample),
                static_cast<long long>(s.activation_bytes_per_sample),
                static_cast<long long>(device_flops), static_cast<long long>(device_params));
  }
}

// Every model: one line each, the overview a newcomer starts from.
void print_zoo(const ImageShape& input, std::int64_t classes) {
  std::printf("model zoo for input %s, %lld classes (`cmlbed info --model NAME` for layers)\n\n",
              input.to_string().c_str(), static_cast<long long>(classes));
  std::printf("%-18s %7s %12s %16s %20s\n", "model", "layers", "params", "FLOPs/sample",
              "largest act B/sample");
  for (const std::string& name : model::model_names()) {
    const auto stats = stats_or_config_error({name, input, classes, ""});
    std::int64_t params = 0, flops = 0, largest = 0;
    for (const auto& s : stats) {
      params += s.parameters;
      flops += s.flops_per_sample;
      largest = std::max(largest, s.activation_bytes_per_sample);
    }
    std::printf("%-18s %7zu %12lld %16lld %20lld\n", name.c_str(), stats.size(),
                static_cast<long long>(params), static_cast<long long>(flops),
                static_cast<long long>(largest));
  }
}

}  // namespace

int info_command(int argc, char** argv) {
  po::options_description options("cmlbed info options");
  options.add_options()("help,h", "show this help")(
      "methods", "the methods and what each does (the method table: splits the model, takes turns, "
                 "server replicas, devices served in a seeded order, micro-batches, averages, local phase, gradients sent back, "
                 "train.personalised, auto, cmlbed simulate, --resume, what DP noise perturbs)")(
      "json", "with --methods: the table as JSON ({\"methods\": [{\"name\": ..., \"splits_model\": true, ...}]}), "
              "for scripts")(
      "model", po::value<std::string>(), "one model: vgg5 vgg11 vgg16 resnet18 "
                                         "mobilenetv3-small mobilenetv3-large lenet")(
      "model-file", po::value<std::string>(),
      "one TorchScript module (as model.name = torchscript, model.file = PATH; docs/how-to/own-model.md)")(
      "input", po::value<std::string>()->default_value("3x32x32"), "input shape CxHxW")(
      "classes", po::value<std::int64_t>()->default_value(10), "output classes (>= 2)");
  po::variables_map args;
  try {
    po::store(po::command_line_parser(argc, argv)
                  .options(options)
                  .style(po::command_line_style::default_style &
                         ~po::command_line_style::allow_guessing)
                  .run(),
              args);
  } catch (const po::error& e) {
    throw ConfigError(std::string("info: ") + e.what());
  }
  if (args.count("help")) {
    std::cout << "Usage: cmlbed info [--model NAME | --model-file PATH] [--input CxHxW] [--classes N] | --methods [--json]\n"
              << options;
    return 0;
  }
  if (args.count("json") && !args.count("methods")) throw ConfigError("info: --json goes with --methods");
  if (args.count("methods")) {
    std::cout << (args.count("json") ? method_table_json().dump(2) + "\n" : method_table_text());
    return 0;
  }
  ImageShape input;
  try {
    input = parse_image_shape(args["input"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw ConfigError(std::string("info: --input ") + e.what());
  }
  const std::int64_t classes = args["classes"].as<std::int64_t>();
  if (classes < 2 || classes > 100000) {
    throw ConfigError("info: --classes " + std::to_string(classes) +
                      " is out of range; allowed: 2..100000");
  }
  if (args.count("model") && args.count("model-file")) {
    throw ConfigError("info: --model and --model-file exclude each other");
  }
  if (args.count("model-file")) {
    // The module decides its classes unless --classes is given.
    print_layers({model::kTorchScript, input, args["classes"].defaulted() ? 0 : classes,
                  args["model-file"].as<std::string>()});
  } else if (args.count("model")) {
    print_layers({args["model"].as<std::string>(), input, classes, ""});
  } else {
    print_zoo(input, classes);
  }
  return 0;
}

}  // namespace cmlbed::cli
