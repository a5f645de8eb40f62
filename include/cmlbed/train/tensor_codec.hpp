#pragma once
// Tensors to and from messages. Activations travel with their labels in one message
// (payload = activation bytes, then int64 labels); model state travels as one flat
// float32 vector of every parameter and buffer, in a fixed order.
#include <torch/torch.h>

#include <map>

#include "cmlbed/net/message.hpp"

namespace cmlbed::train {

// Sets dtype/dims/shape of `header` from `tensor` and returns its bytes.
net::Payload tensor_payload(const torch::Tensor& tensor, net::MessageHeader& header);
torch::Tensor tensor_from(const net::Message& message);

net::Payload activation_payload(const torch::Tensor& activation, const torch::Tensor& labels,
                                net::MessageHeader& header);
std::pair<torch::Tensor, torch::Tensor> activation_from(const net::Message& message);

// Parameters then buffers, in registration order (identical across ranks for the same
// model part); integer buffers (batch-norm counters) are carried as float.
std::vector<torch::Tensor> state_tensors(torch::nn::Module& module);
torch::Tensor flat_state(torch::nn::Module& module);
// How many of flat_state's leading entries are parameters (the rest are buffers).
std::int64_t parameter_entries(torch::nn::Module& module);
void load_flat_state(torch::nn::Module& module, const torch::Tensor& flat);
// flat_state as plain floats, for the results file.
std::vector<float> flat_state_values(torch::nn::Module& module);

// Parameters and buffers by name ("3.conv.weight": global layer index first, so names
// agree between a whole model and its parts). Loading takes the names the module has
// and ignores the others.
std::vector<std::pair<std::string, torch::Tensor>> named_state(torch::nn::Module& module);
void load_named_state(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& state);

}  // namespace cmlbed::train
