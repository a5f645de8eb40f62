#pragma once
// Helpers for Method::save_state / load_state: a module's parameters and buffers, an
// optimizer's state (momentum buffers, Adam's moments and step counts) and LibTorch's
// default generator, each under a key of a checkpoint archive. Loading restores the
// exact bits saved, into the tensors the module and optimizer already hold, so the
// optimizer's parameter references stay valid.
#include <torch/torch.h>

#include <string>

namespace cmlbed::train {

void save_module(torch::serialize::OutputArchive& archive, const std::string& key, torch::nn::Module& module);
void load_module(torch::serialize::InputArchive& archive, const std::string& key, torch::nn::Module& module);

// Nothing is saved for a null optimizer (a part without parameters), and nothing loaded.
void save_optimizer(torch::serialize::OutputArchive& archive, const std::string& key,
                    torch::optim::Optimizer* optimizer);
void load_optimizer(torch::serialize::InputArchive& archive, const std::string& key,
                    torch::optim::Optimizer* optimizer);

// LibTorch's default CPU generator (dropout masks, random initialisation).
void save_default_generator(torch::serialize::OutputArchive& archive, const std::string& key);
void load_default_generator(torch::serialize::InputArchive& archive, const std::string& key);

// An archive as bytes and back (the driver ships them between ranks).
std::string archive_bytes(torch::serialize::OutputArchive& archive);
void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes);

}  // namespace cmlbed::train
