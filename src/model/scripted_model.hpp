#pragma once
// TorchScript modules as a network of splittable layers (model.name = torchscript): a
// module saved by torch.jit.save whose forward calls its top-level children one after
// another, each on the previous child's output and each once (what an nn.Sequential
// compiles to). Each child is one layer; the split points are the boundaries between
// them. docs/how-to/own-model.md says what is accepted and which layer types' FLOPs count.
#include "cmlbed/model/split_model.hpp"

namespace cmlbed::model {

// The layers of options.file, loaded afresh (so each part owns its weights: the file's,
// whatever the seed), after running `probe` (one sample of the input) through them.
// Throws std::invalid_argument, naming the file, when it cannot be read or loaded, its
// forward is not such a sequence, a layer cannot take the input, or the last layer's
// output is not one value per class.
std::vector<NamedLayer> scripted_layers(const ModelOptions& options, torch::Tensor probe);

// The one-line cause of a LibTorch error: an operator's message, or the last
// "SomeError: cause" line of the TorchScript interpreter's traceback.
std::string error_cause(const std::exception& error);

}  // namespace cmlbed::model
