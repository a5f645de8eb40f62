#include "scripted_model.hpp"

#include <sys/stat.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/csrc/jit/runtime/jit_exception.h>
#include <torch/script.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>

#include "cmlbed/base/sha256.hpp"
#include "cmlbed/model/weight_masks.hpp"
#include "counted_ops.hpp"

namespace cmlbed::model {
namespace {

std::invalid_argument file_error(const std::string& path, const std::string& why) {
  return std::invalid_argument("model.file '" + path + "': " + why);
}

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

}  // namespace

// The interpreter's message is a traceback that ends with "RuntimeError: <cause>" (an
// operator's error) or "builtins.ValueError: <cause>" (one a module's Python code
// raised): the last such line's cause; else the first line.
std::string error_cause(const std::exception& error) {
  if (const auto* jit = dynamic_cast<const torch::jit::JITException*>(&error); jit && jit->getOriginalMsg()) {
    return first_line(*jit->getOriginalMsg());
  }
  std::istringstream lines(error.what());
  std::string found;
  for (std::string line; std::getline(lines, line);) {
    const std::size_t colon = line.find(": ");
    const std::string name = line.substr(0, colon);
    const bool ends_in_error = name.size() >= 5 && name.compare(name.size() - 5, 5, "Error") == 0;
    const bool names_an_error = colon != std::string::npos && name.find(' ') == std::string::npos &&
                                (ends_in_error || name.find("Exception") != std::string::npos);
    if (names_an_error) found = line.substr(colon + 2);
  }
  return found.empty() ? first_line(error.what()) : found;
}

namespace {

// Every part loads the module afresh and a run counts the layers more than once, so
// the file is read once per process (again only if it changed on disk). Callers get a
// snapshot: a file read again by another thread leaves theirs as it was.
struct LoadedFile {
  std::string bytes;
  std::string sha256;
  struct timespec modified {};
  off_t size = 0;
};

std::shared_ptr<const LoadedFile> loaded_file(const std::string& path) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const LoadedFile>> files;
  if (path.empty()) throw std::invalid_argument("model.name = torchscript needs model.file = PATH");
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) throw file_error(path, std::strerror(errno));
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<const LoadedFile>& cached = files[path];
  if (cached && cached->size == info.st_size && cached->modified.tv_sec == info.st_mtim.tv_sec &&
      cached->modified.tv_nsec == info.st_mtim.tv_nsec) {
    return cached;
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  if (!in || !(bytes << in.rdbuf())) throw file_error(path, "cannot be read");
  auto file = std::make_shared<LoadedFile>();
  file->bytes = bytes.str();
  file->sha256 = sha256_hex(file->bytes);
  file->modified = info.st_mtim;
  file->size = info.st_size;
  cached = file;
  return cached;
}

torch::jit::Module load_module(const std::string& path) {
  const std::shared_ptr<const LoadedFile> file = loaded_file(path);
  std::istringstream stream(file->bytes);
  try {
    return torch::jit::load(stream);
  } catch (const std::exception& e) {  // c10::Error; an ErrorReport for code 1.13 cannot compile
    throw file_error(path, "not a TorchScript module saved by torch.jit.save (" + error_cause(e) + ")");
  }
}

struct Child {
  std::string name;
  torch::jit::Module module;
};

// The children that `module`'s forward calls, in order, or why it is not a sequence.
struct ChildSequence {
  std::vector<Child> children;
  std::string refusal;  // empty: a sequence
};

ChildSequence child_sequence(const torch::jit::Module& module) {
  ChildSequence sequence;
  const auto refuse = [&](std::string why) {
    sequence.children.clear();
    sequence.refusal = std::move(why);
    return sequence;
  };
  const c10::optional<torch::jit::Method> forward = module.find_method("forward");
  if (!forward) return refuse("it has no forward method");
  const std::shared_ptr<torch::jit::Graph> graph = forward->graph();
  if (graph->inputs().size() != 2 || graph->outputs().size() != 1) {
    return refuse("its forward does not take one input and return one output");
  }
  torch::jit::Value* self = graph->inputs()[0];
  torch::jit::Value* current = graph->inputs()[1];
  std::map<torch::jit::Value*, std::string> fetched;  // child modules read from self
  std::set<std::string> called;
  for (torch::jit::Node* node : graph->nodes()) {
    if (node->kind() == c10::prim::Constant) continue;
    if (node->kind() == c10::prim::GetAttr && node->input() == self) {
      const std::string name = node->s(torch::jit::attr::name);
      const auto type = node->output()->type()->cast<c10::ClassType>();
      if (!type || !type->is_module()) return refuse("its forward reads the attribute '" + name + "'");
      fetched[node->output()] = name;
      continue;
    }
    if (node->kind() == c10::prim::CallMethod && node->inputs().size() == 2 &&
        fetched.count(node->inputs()[0]) != 0) {
      const std::string& name = fetched[node->inputs()[0]];
      if (node->s(torch::jit::attr::name) != "forward") {
        return refuse("it calls " + name + "." + node->s(torch::jit::attr::name) + ", not " + name + "'s forward");
      }
      if (node->inputs()[1] != current) {
        return refuse("it calls " + name + " on something other than the previous child's output");
      }
      if (!called.insert(name).second) return refuse("it calls " + name + " more than once");
      sequence.children.push_back({name, module.attr(name).toModule()});
      current = node->output();
      continue;
    }
    return refuse("it computes " + std::string(node->kind().toQualString()) + " outside its children");
  }
  if (graph->outputs()[0] != current) return refuse("it does not return the last child's output");
  if (sequence.children.empty()) return refuse("it calls no child module");
  return sequence;
}

// "__torch__.torch.nn.modules.conv.___torch_mangle_3.Conv2d" -> "torch.nn.modules.conv.Conv2d"
std::string module_type(const torch::jit::Module& module) {
  const std::string qualified = module.type()->name()->qualifiedName();
  std::string type;
  std::istringstream parts(qualified);
  for (std::string part; std::getline(parts, part, '.');) {
    if (part == "__torch__" || part.rfind("___torch_mangle_", 0) == 0) continue;
    type += (type.empty() ? "" : ".") + part;
  }
  return type;
}

std::string short_type(const std::string& type) { return type.substr(type.rfind('.') + 1); }

// FLOPs under the zoo's convention (counted_ops.hpp, docs/reference/model-zoo.md), from the
// module's own parameters and constants and the shapes that flowed; nullopt when a
// constant they need is missing (a traced pooling layer keeps none).
using FlopRule = std::optional<std::int64_t> (*)(const torch::jit::Module&, const torch::Tensor& in,
                                                 const torch::Tensor& out);

// Convolution and linear layers: each output value is a dot product over
// weight.numel() / out_features inputs, plus its bias.
std::optional<std::int64_t> weighted_flops(const torch::jit::Module& m, const torch::Tensor&,
                                           const torch::Tensor& out) {
  const torch::Tensor weight = m.attr("weight").toTensor();
  const bool bias = m.hasattr("bias") && m.attr("bias").isTensor();
  return 2 * (weight.numel() / weight.size(0)) * out.numel() + (bias ? out.numel() : 0);
}

std::optional<std::int64_t> batch_norm_flops(const torch::jit::Module&, const torch::Tensor& in,
                                             const torch::Tensor&) {
  return 2 * in.numel();
}

std::optional<std::int64_t> per_output_value(const torch::jit::Module&, const torch::Tensor&,
                                             const torch::Tensor& out) {
  return out.numel();
}

std::optional<std::int64_t> no_flops(const torch::jit::Module&, const torch::Tensor&, const torch::Tensor&) {
  return 0;
}

std::optional<std::pair<std::int64_t, std::int64_t>> pair_constant(const torch::jit::Module& m,
                                                                   const std::string& name) {
  const std::optional<c10::IValue> value = m.type()->findConstant(name);
  if (!value) return std::nullopt;
  if (value->isInt()) return std::make_pair(value->toInt(), value->toInt());
  std::vector<std::int64_t> items;
  if (value->isIntList()) {
    items = value->toIntVector();
  } else if (value->isTuple()) {
    for (const c10::IValue& item : value->toTupleRef().elements()) {
      if (!item.isInt()) return std::nullopt;
      items.push_back(item.toInt());
    }
  }
  if (items.size() == 1) return std::make_pair(items[0], items[0]);
  if (items.size() == 2) return std::make_pair(items[0], items[1]);
  return std::nullopt;
}

// Max and average pooling: one FLOP per input value each window reads. Windows that
// tile the input in ceil mode (stride = kernel, no padding or dilation; the zoo's pools)
// read each value once; otherwise every window is counted whole.
std::optional<std::int64_t> window_pool_flops(const torch::jit::Module& m, const torch::Tensor& in,
                                              const torch::Tensor& out) {
  const auto kernel = pair_constant(m, "kernel_size");
  const auto stride = pair_constant(m, "stride");
  const auto padding = pair_constant(m, "padding");
  const auto dilation = pair_constant(m, "dilation");  // MaxPool2d's; AvgPool2d has none
  const c10::optional<c10::IValue> ceil_mode = m.type()->findConstant("ceil_mode");
  if (!kernel || !stride || !padding || !ceil_mode || !ceil_mode->isBool()) return std::nullopt;
  const bool undilated = !dilation || (dilation->first == 1 && dilation->second == 1);
  if (*stride == *kernel && padding->first == 0 && padding->second == 0 && undilated && ceil_mode->toBool()) {
    return in.numel();
  }
  return out.numel() * kernel->first * kernel->second;
}

// Adaptive pooling: output cell i of n over an input of size s reads
// [floor(i*s/n), ceil((i+1)*s/n)).
std::int64_t adaptive_reads(std::int64_t size, std::int64_t cells) {
  std::int64_t reads = 0;
  for (std::int64_t i = 0; i < cells; ++i) reads += ((i + 1) * size + cells - 1) / cells - i * size / cells;
  return reads;
}

std::optional<std::int64_t> adaptive_pool_flops(const torch::jit::Module&, const torch::Tensor& in,
                                                const torch::Tensor& out) {
  if (in.dim() != 4 || out.dim() != 4) return std::nullopt;
  return in.size(0) * in.size(1) * adaptive_reads(in.size(2), out.size(2)) *
         adaptive_reads(in.size(3), out.size(3));
}

const std::map<std::string, FlopRule>& flop_rules() {
  static const std::map<std::string, FlopRule> rules = [] {
    std::map<std::string, FlopRule> r;
    const std::string nn = "torch.nn.modules.";
    for (const char* type : {"conv.Conv1d", "conv.Conv2d", "linear.Linear"}) r[nn + type] = weighted_flops;
    for (const char* type : {"batchnorm.BatchNorm1d", "batchnorm.BatchNorm2d"}) r[nn + type] = batch_norm_flops;
    for (const char* type : {"ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU", "Hardswish", "Hardsigmoid",
                             "Hardtanh", "Sigmoid", "Tanh"}) {
      r[nn + "activation." + type] = per_output_value;
    }
    for (const char* type : {"MaxPool2d", "AvgPool2d"}) r[nn + "pooling." + type] = window_pool_flops;
    for (const char* type : {"AdaptiveAvgPool2d", "AdaptiveMaxPool2d"}) r[nn + "pooling." + type] = adaptive_pool_flops;
    for (const char* type : {"flatten.Flatten", "dropout.Dropout", "dropout.Dropout2d", "linear.Identity"}) {
      r[nn + type] = no_flops;
    }
    return r;
  }();
  return rules;
}

// The module's forward, counting its FLOPs: by rule for a known type, part by part for
// a sequence of children (an nn.Sequential), else skipped (and said so).
torch::Tensor counted_forward(torch::jit::Module module, const std::string& path,
                              const torch::Tensor& input, FlopCounter& counter) {
  const std::string type = module_type(module);
  const auto rule = flop_rules().find(type);
  if (rule == flop_rules().end()) {
    const ChildSequence sequence = child_sequence(module);
    if (sequence.refusal.empty()) {
      torch::Tensor x = input;
      for (const Child& child : sequence.children) x = counted_forward(child.module, path + "." + child.name, x, counter);
      return x;
    }
  }
  torch::Tensor output = module.forward({input}).toTensor();
  const std::optional<std::int64_t> flops =
      rule == flop_rules().end() ? std::nullopt : rule->second(module, input, output);
  if (flops) {
    counter.add(*flops);
  } else {
    counter.skip(path + " (" + short_type(type) + ")");
  }
  return output;
}

// Registers `source`'s parameters, buffers and children (recursively) on `target`
// under the same names, sharing their tensors: the optimiser, aggregation and
// checkpoints work on the module's own weights, named as in its state_dict.
void mirror(torch::nn::Module& target, const torch::jit::Module& source) {
  for (const auto& parameter : source.named_parameters(/*recurse=*/false)) {
    target.register_parameter(parameter.name, parameter.value, parameter.value.requires_grad());
  }
  for (const auto& buffer : source.named_buffers(/*recurse=*/false)) {
    target.register_buffer(buffer.name, buffer.value);
  }
  for (const auto& child : source.named_children()) {
    auto part = std::make_shared<torch::nn::Module>();
    mirror(*part, child.value);
    target.register_module(child.name, part);
  }
}

// The weights and biases of `module`'s convolutions and linear layers (AdaSplit masks
// them as the zoo's), in module tree order; forward reads them from the attributes.
void add_mask_slots(torch::jit::Module module, std::vector<MaskSlot>& slots) {
  static const std::set<std::string> masked = {"torch.nn.modules.conv.Conv2d", "torch.nn.modules.linear.Linear"};
  if (masked.count(module_type(module)) != 0) {
    for (const char* name : {"weight", "bias"}) {
      if (!module.hasattr(name) || !module.attr(name).isTensor()) continue;
      slots.push_back({[module, name] { return module.attr(name).toTensor(); },
                       [module, name](const torch::Tensor& value) mutable { module.setattr(name, value); }});
    }
  }
  for (const auto& child : module.named_children()) add_mask_slots(child.value, slots);
}

// One top-level child of the module as a splittable layer.
class ScriptedLayer : public Layer, public MaskableLayer {
 public:
  ScriptedLayer(std::string name, torch::jit::Module unit) : name_(std::move(name)), unit_(std::move(unit)) {
    mirror(*this, unit_);
  }

  torch::Tensor forward(const torch::Tensor& x) override {
    // The graph executor's optimisations (differentiable subgraphs, fusion) may compute
    // in another order than LibTorch's plain operators; without them each operator runs
    // as in the zoo's layers, so both compute the same values. The switch is per thread
    // (server streams run replicas on threads of their own), hence set at every call.
    const torch::jit::GraphOptimizerEnabledGuard plain_operators(false);
    if (FlopCounter* counter = FlopCounter::active()) return counted_forward(unit_, name_, x, *counter);
    return unit_.forward({x}).toTensor();
  }

  void train(bool on = true) override {
    torch::nn::Module::train(on);
    unit_.train(on);
  }

  std::vector<MaskSlot> mask_slots() override {
    std::vector<MaskSlot> slots;
    add_mask_slots(unit_, slots);
    return slots;
  }

 private:
  std::string name_;
  torch::jit::Module unit_;
};

std::string shape_text(const torch::Tensor& x) {
  std::string text;
  for (std::int64_t i = 1; i < x.dim(); ++i) text += (i > 1 ? "x" : "") + std::to_string(x.size(i));
  return text.empty() ? "a scalar" : text;
}

}  // namespace

std::vector<NamedLayer> scripted_layers(const ModelOptions& options, torch::Tensor probe) {
  const std::string& path = options.file;
  torch::jit::Module root = load_module(path);
  const ChildSequence sequence = child_sequence(root);
  if (!sequence.refusal.empty()) {
    throw file_error(path, "the module's forward is not a sequence of its children (" + sequence.refusal +
                               "); put the layers in an nn.Sequential, or make forward call each child once, "
                               "in order, on the previous child's output (docs/how-to/own-model.md)");
  }
  std::vector<NamedLayer> layers;
  torch::NoGradGuard no_grad;
  for (const Child& child : sequence.children) {
    auto layer = std::make_shared<ScriptedLayer>(child.name, child.module);
    layer->eval();  // batch norm cannot take batch statistics of one sample
    const std::string input = shape_text(probe);
    try {
      probe = layer->forward(probe);
    } catch (const std::exception& e) {  // c10::Error, or the interpreter's JITException
      throw file_error(path, "layer " + child.name + " cannot take an input of " + input + " per sample (" +
                                 error_cause(e) + ")");
    }
    layer->train();
    layers.push_back({child.name, std::move(layer)});
  }
  const bool one_per_class = probe.dim() == 2 && (options.classes == 0 ? probe.size(1) >= 2 : probe.size(1) == options.classes);
  if (!one_per_class) {
    throw file_error(path, "the last layer outputs " + shape_text(probe) + " per sample; it must output one value per class (" +
                               (options.classes == 0 ? std::string("at least 2") : std::to_string(options.classes)) + ")");
  }
  return layers;
}

std::string model_file_sha256(const ModelOptions& options) {
  return options.name == kTorchScript ? loaded_file(options.file)->sha256 : std::string();
}

}  // namespace cmlbed::model
