#pragma once
// The model zoo, as seen by code that does not include LibTorch (config validation,
// `cmlbed info`). Each network is an ordered list of splittable layers; see
// split_model.hpp for the modules themselves. Besides the zoo's networks, a model may
// be a TorchScript module from a file (model.name = torchscript, model.file = PATH;
// docs/how-to/own-model.md), split between its top-level children.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cmlbed/base/image_shape.hpp"

namespace cmlbed::model {

// The name that selects a TorchScript module from a file instead of a zoo network.
inline constexpr const char* kTorchScript = "torchscript";

struct ModelOptions {
  ModelOptions() = default;
  ModelOptions(std::string model_name, ImageShape model_input, std::int64_t model_classes, std::string model_file = "")
      : name(std::move(model_name)), input(model_input), classes(model_classes), file(std::move(model_file)) {}

  std::string name = "vgg5";
  ImageShape input;
  // The data's classes. A TorchScript module's last layer must output this many values
  // per sample; 0 takes whatever it outputs (`cmlbed info --model-file`).
  std::int64_t classes = 10;
  std::string file;  // the TorchScript module (name == kTorchScript)
};

// vgg5 vgg11 vgg16 resnet18 mobilenetv3-small mobilenetv3-large lenet
const std::vector<std::string>& model_names();

// What a split point costs, per layer. FLOPs follow the convention documented in
// docs/reference/model-zoo.md: a multiply-add is 2 FLOPs.
struct LayerStats {
  std::string name;
  std::vector<std::int64_t> output_shape;  // per sample, without the batch dimension
  std::int64_t parameters = 0;
  std::int64_t buffer_values = 0;  // its buffers' (batch norm's running statistics), sent with a model
  // Its Conv2d and Linear weights and biases (model/weight_masks.hpp): what AdaSplit's
  // per-device masks can mask. A part without them has nothing to mask.
  std::int64_t maskable_values = 0;
  std::int64_t flops_per_sample = 0;
  std::int64_t activation_bytes_per_sample = 0;  // float32 output: what a split after it sends
  // Samples a training batch through this layer needs: 2 where batch norm normalises a
  // 1x1 feature map (MobileNetV3's squeeze-and-excitation and head), since LibTorch
  // cannot train batch norm on one value per channel; else 1.
  std::int64_t min_training_batch = 1;
  // The parts of a TorchScript layer whose FLOPs were not counted (of a type the zoo
  // does not count, or a module whose forward is not a sequence of its children), as
  // "fc1.2 (Softplus)"; never guessed, so flops_per_sample leaves them out.
  std::vector<std::string> uncounted_flops;
};

// "" when every layer's FLOPs were counted, else one line naming the parts that were not.
std::string uncounted_flops_note(const std::vector<LayerStats>& stats);

// The largest min_training_batch of `stats` (whole model): what every mini-batch and
// micro-batch must hold at least.
std::int64_t min_training_batch(const std::vector<LayerStats>& stats);

// Builds the network and runs one sample through it. Throws std::invalid_argument when
// the name is unknown, the network cannot take the input (e.g. an image too small) or
// would be too large: the zoo takes at most 2^20 values per sample (3x512x512,
// 1x1024x1024) and at most 2^27 parameters in one layer (512 MiB of float32; a dense
// layer grows with the input), so that no configuration makes a check (which builds
// the model to count its layers) or a run allocate without bound. For a TorchScript
// module it also throws when the file cannot be read or loaded, its forward is not a
// sequence of its children, or its output is not one value per class.
std::vector<LayerStats> layer_stats(const ModelOptions& options);

// SHA-256 of model.file's bytes as this process loaded them; "" for a zoo network.
std::string model_file_sha256(const ModelOptions& options);

// Number of splittable layers L (split points are 0..L).
std::size_t layer_count(const ModelOptions& options);

// LibTorch's intra-op thread count for this process (train.server_threads on the
// server, train.device_threads on devices).
void set_intra_op_threads(int threads);

}  // namespace cmlbed::model
