#include <algorithm>
#include <stdexcept>

#include "cmlbed/base/seed_streams.hpp"
#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/weight_masks.hpp"
#include "cmlbed/model/zoo.hpp"
#include "layers.hpp"
#include "scripted_model.hpp"

namespace cmlbed::model {
namespace {

// The limits documented in zoo.hpp. With at most 64 channels at full resolution in this
// zoo, a layer's output stays within 2^26 values (256 MiB) per sample.
constexpr std::int64_t kMaxInputValues = std::int64_t{1} << 20;
constexpr std::int64_t kMaxLayerParameters = std::int64_t{1} << 27;

// The seed layer `index`'s weights are drawn from (scripts/tools/export-model.py computes
// the same).
std::uint64_t layer_seed(std::uint64_t seed, std::size_t index) {
  return stream_seed(seed, "weights", {static_cast<std::int64_t>(index)});
}

// One sample of the input; checked first, because every layer's output (up to 64
// channels at full resolution in this zoo) grows with it.
torch::Tensor probe_input(const ModelOptions& options) {
  const ImageShape& in = options.input;
  if (in.channels < 1 || in.height < 1 || in.width < 1) {
    throw std::invalid_argument("model '" + options.name + "' cannot take input " +
                                in.to_string() + ": every dimension must be at least 1");
  }
  if (in.channels > kMaxInputValues || in.height > kMaxInputValues ||
      in.width > kMaxInputValues ||
      in.channels * in.height * in.width > kMaxInputValues) {
    throw std::invalid_argument("model '" + options.name + "' cannot take input " +
                                in.to_string() + ": allowed: at most " +
                                std::to_string(kMaxInputValues) +
                                " values per sample (C x H x W, e.g. 3x512x512)");
  }
  return torch::zeros({1, in.channels, in.height, in.width});
}

// Appends layers one at a time: seeds each from (seed, index) and runs a probe sample
// through it, so the next layer can be sized from the shape that really comes out.
class NetworkBuilder {
 public:
  NetworkBuilder(const ModelOptions& options, std::uint64_t seed)
      : options_(options), seed_(seed), probe_(probe_input(options)) {}

  // Before a dense layer is made: its weights are allocated (and drawn) at once, so a
  // huge one must be refused before, not after.
  void check_dense(const std::string& name, std::int64_t in, std::int64_t out) const {
    const std::int64_t parameters = in * out + out;
    if (parameters > kMaxLayerParameters) {
      throw std::invalid_argument(
          "model '" + options_.name + "' is too large for input " + options_.input.to_string() +
          ": layer " + name + " would have " + std::to_string(parameters) +
          " parameters (" + std::to_string(in) + " inputs); allowed: at most " +
          std::to_string(kMaxLayerParameters) + " per layer (use a smaller input)");
    }
  }

  template <typename LayerType, typename... Args>
  void add(std::string name, Args&&... args) {
    torch::manual_seed(layer_seed(seed_, layers_.size()));
    auto layer = std::make_shared<LayerType>(std::forward<Args>(args)...);
    torch::NoGradGuard no_grad;
    layer->eval();  // batch norm cannot take batch statistics of one sample
    try {
      probe_ = layer->forward(probe_);
    } catch (const c10::Error& e) {
      throw std::invalid_argument("model '" + options_.name + "' cannot take input " +
                                  options_.input.to_string() + ": layer " + name + " fails (" +
                                  e.msg().substr(0, e.msg().find('\n')) + ")");
    }
    layer->train();
    layers_.push_back({std::move(name), std::move(layer)});
  }

  // The seed of the next layer's dropout masks (the run's "dropout" stream of that layer).
  std::uint64_t next_layer_dropout_seed() const {
    return stream_seed(seed_, "dropout", {static_cast<std::int64_t>(layers_.size())});
  }
  std::int64_t channels() const { return probe_.size(1); }
  std::int64_t features() const { return probe_.numel(); }
  std::int64_t classes() const { return options_.classes; }
  std::vector<NamedLayer> take() { return std::move(layers_); }

 private:
  ModelOptions options_;
  std::uint64_t seed_;
  torch::Tensor probe_;
  std::vector<NamedLayer> layers_;
};

void conv(NetworkBuilder& b, const std::string& name, std::int64_t out, std::int64_t kernel = 3,
          std::int64_t stride = 1, bool batch_norm = true, Activation act = Activation::relu,
          std::int64_t padding = -1) {
  b.add<ConvBnAct>(name, ConvSpec{b.channels(), out, kernel, stride, 1, padding, batch_norm, act});
}

void dense(NetworkBuilder& b, const std::string& name, std::int64_t out,
           Activation act = Activation::relu, double dropout = 0.0) {
  b.check_dense(name, b.features(), out);
  b.add<Dense>(name, b.features(), out, act, dropout, b.next_layer_dropout_seed());
}

// PiPar's VGG-5 (from FedAdapt): three 3x3 convolutions, two dense layers.
void vgg5(NetworkBuilder& b) {
  conv(b, "conv1", 32);
  b.add<MaxPool>("pool1", 2);
  conv(b, "conv2", 64);
  b.add<MaxPool>("pool2", 2);
  conv(b, "conv3", 64);
  dense(b, "fc1", 128);
  dense(b, "fc2", b.classes(), Activation::none);
}

// VGG with batch norm; 0 in the plan is a 2x2 max pool. CIFAR-style classifier.
void vgg(NetworkBuilder& b, const std::vector<int>& plan) {
  int convs = 0, pools = 0;
  for (int width : plan) {
    if (width == 0) {
      b.add<MaxPool>("pool" + std::to_string(++pools), 2);
    } else {
      conv(b, "conv" + std::to_string(++convs), width);
    }
  }
  dense(b, "fc1", 512);
  dense(b, "fc2", 512);
  dense(b, "fc3", b.classes(), Activation::none);
}

// CIFAR ResNet-18: 3x3 stem without max pool, four stages of two basic blocks.
void resnet18(NetworkBuilder& b) {
  conv(b, "stem", 64);
  int block = 0;
  for (std::int64_t width : {64, 128, 256, 512}) {
    for (int i = 0; i < 2; ++i) {
      const std::int64_t stride = (i == 0 && width != 64) ? 2 : 1;
      b.add<BasicBlock>("block" + std::to_string(++block), b.channels(), width, stride);
    }
  }
  b.add<GlobalAvgPool>("pool");
  dense(b, "fc", b.classes(), Activation::none);
}

// MobileNetV3 (torchvision's configuration): stem, bottlenecks, 1x1 conv, classifier.
void mobilenetv3(NetworkBuilder& b, const std::vector<BottleneckSpec>& bottlenecks,
                 std::int64_t last_conv, std::int64_t hidden) {
  conv(b, "stem", 16, 3, 2, true, Activation::hardswish);
  int index = 0;
  for (BottleneckSpec spec : bottlenecks) {
    spec.in = b.channels();
    b.add<Bottleneck>("bneck" + std::to_string(++index), spec);
  }
  conv(b, "conv_last", last_conv, 1, 1, true, Activation::hardswish);
  b.add<GlobalAvgPool>("pool");
  dense(b, "fc1", hidden, Activation::hardswish, 0.2);
  dense(b, "fc2", b.classes(), Activation::none);
}

constexpr Activation RE = Activation::relu;
constexpr Activation HS = Activation::hardswish;

// {in (filled in), kernel, expanded, out, squeeze-excite, activation, stride}
const std::vector<BottleneckSpec> kMobileNetV3Small = {
    {0, 3, 16, 16, true, RE, 2},   {0, 3, 72, 24, false, RE, 2},  {0, 3, 88, 24, false, RE, 1},
    {0, 5, 96, 40, true, HS, 2},   {0, 5, 240, 40, true, HS, 1},  {0, 5, 240, 40, true, HS, 1},
    {0, 5, 120, 48, true, HS, 1},  {0, 5, 144, 48, true, HS, 1},  {0, 5, 288, 96, true, HS, 2},
    {0, 5, 576, 96, true, HS, 1},  {0, 5, 576, 96, true, HS, 1},
};

const std::vector<BottleneckSpec> kMobileNetV3Large = {
    {0, 3, 16, 16, false, RE, 1},   {0, 3, 64, 24, false, RE, 2},   {0, 3, 72, 24, false, RE, 1},
    {0, 5, 72, 40, true, RE, 2},    {0, 5, 120, 40, true, RE, 1},   {0, 5, 120, 40, true, RE, 1},
    {0, 3, 240, 80, false, HS, 2},  {0, 3, 200, 80, false, HS, 1},  {0, 3, 184, 80, false, HS, 1},
    {0, 3, 184, 80, false, HS, 1},  {0, 3, 480, 112, true, HS, 1},  {0, 3, 672, 112, true, HS, 1},
    {0, 5, 672, 160, true, HS, 2},  {0, 5, 960, 160, true, HS, 1},  {0, 5, 960, 160, true, HS, 1},
};

// LeNet-5 as AdaSplit splits it: two 5x5 convolutions without padding, three dense.
void lenet(NetworkBuilder& b) {
  conv(b, "conv1", 6, 5, 1, false, Activation::relu, 0);
  b.add<MaxPool>("pool1", 2);
  conv(b, "conv2", 16, 5, 1, false, Activation::relu, 0);
  b.add<MaxPool>("pool2", 2);
  dense(b, "fc1", 120);
  dense(b, "fc2", 84);
  dense(b, "fc3", b.classes(), Activation::none);
}

}  // namespace

const std::vector<std::string>& model_names() {
  static const std::vector<std::string> names = {
      "vgg5", "vgg11", "vgg16", "resnet18", "mobilenetv3-small", "mobilenetv3-large", "lenet"};
  return names;
}

std::vector<NamedLayer> build_layers(const ModelOptions& options, std::uint64_t seed) {
  if (options.name == kTorchScript) {
    std::vector<NamedLayer> layers = scripted_layers(options, probe_input(options));
    // A zoo network leaves LibTorch's default generator (which dropout draws from)
    // seeded from the run's seed; so does a module from a file, whose weights need no
    // draws. Unseeded, the generator starts from a random seed in every process.
    torch::manual_seed(layer_seed(seed, layers.size()));
    return layers;
  }
  if (options.classes < 2) throw std::invalid_argument("a model needs at least 2 classes");
  NetworkBuilder b(options, seed);
  const std::string& n = options.name;
  if (n == "vgg5") {
    vgg5(b);
  } else if (n == "vgg11") {
    vgg(b, {64, 0, 128, 0, 256, 256, 0, 512, 512, 0, 512, 512, 0});
  } else if (n == "vgg16") {
    vgg(b, {64, 64, 0, 128, 128, 0, 256, 256, 256, 0, 512, 512, 512, 0, 512, 512, 512, 0});
  } else if (n == "resnet18") {
    resnet18(b);
  } else if (n == "mobilenetv3-small") {
    mobilenetv3(b, kMobileNetV3Small, 576, 1024);
  } else if (n == "mobilenetv3-large") {
    mobilenetv3(b, kMobileNetV3Large, 960, 1280);
  } else if (n == "lenet") {
    lenet(b);
  } else {
    std::string known;
    for (const std::string& name : model_names()) known += (known.empty() ? "" : ", ") + name;
    throw std::invalid_argument("unknown model '" + n + "'; known models: " + known +
                                ", or torchscript with model.file = PATH");
  }
  return b.take();
}

std::vector<LayerStats> layer_stats(const ModelOptions& options) {
  std::vector<LayerStats> stats;
  torch::NoGradGuard no_grad;
  torch::Tensor x = torch::zeros({1, options.input.channels, options.input.height,
                                  options.input.width});
  for (const NamedLayer& named : build_layers(options, 0)) {
    LayerStats s;
    s.name = named.name;
    const torch::Tensor input = x;
    named.layer->eval();
    {
      FlopCounter counter;
      x = named.layer->forward(x);
      s.flops_per_sample = counter.total();
      s.uncounted_flops = counter.skipped();
    }
    // Training on one sample: LibTorch's own check (batch norm over one value per
    // channel) is the definition, so ask it rather than re-deriving where it applies.
    named.layer->train();
    try {
      named.layer->forward(input);
    } catch (const std::exception& e) {  // c10::Error; a TorchScript layer's JITException
      if (std::string(e.what()).find("more than 1 value per channel when training") == std::string::npos) {
        throw std::invalid_argument("model '" + options.name + "': layer " + s.name + " fails in training mode (" +
                                    error_cause(e) + ")");
      }
      s.min_training_batch = 2;
    }
    s.output_shape.assign(x.sizes().begin() + 1, x.sizes().end());
    s.activation_bytes_per_sample = x.numel() * static_cast<std::int64_t>(sizeof(float));
    for (const torch::Tensor& p : named.layer->parameters()) s.parameters += p.numel();
    for (const torch::Tensor& b : named.layer->buffers()) s.buffer_values += b.numel();
    for (const MaskSlot& slot : masked_slots(*named.layer)) s.maskable_values += slot.read().numel();
    stats.push_back(std::move(s));
  }
  return stats;
}

std::string uncounted_flops_note(const std::vector<LayerStats>& stats) {
  std::string parts;
  std::size_t count = 0;
  for (const LayerStats& s : stats) {
    for (const std::string& part : s.uncounted_flops) {
      parts += (parts.empty() ? "" : ", ") + part;
      ++count;
    }
  }
  if (count == 0) return "";
  return "FLOPs of " + std::to_string(count) + " layer(s) of unknown type not counted: " + parts +
         " (docs/how-to/own-model.md lists the types counted)";
}

std::int64_t min_training_batch(const std::vector<LayerStats>& stats) {
  std::int64_t least = 1;
  for (const LayerStats& s : stats) least = std::max(least, s.min_training_batch);
  return least;
}

std::size_t layer_count(const ModelOptions& options) { return build_layers(options, 0).size(); }

void set_intra_op_threads(int threads) { torch::set_num_threads(threads); }

}  // namespace cmlbed::model
