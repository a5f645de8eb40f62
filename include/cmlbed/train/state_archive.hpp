#pragma once
// Helpers for Method::save_state / load_state: a module's parameters and buffers, an
// optimizer's state (momentum buffers, Adam's moments and step counts) and LibTorch's
// default generator, each under a key of a checkpoint archive. Loading restores the
// exact bits saved, into the tensors the module and optimizer already hold, so the
// optimizer's parameter references stay valid.
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

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

// What a method's rank keeps from round to round, described once: save() writes and
// load() reads the same entries in the same order under the same keys, so a method's
// save_state and load_state cannot disagree.
class StateDescription {
 public:
  StateDescription& module(std::string key, torch::nn::Module& module);
  // Nothing saved or loaded for a null optimizer (a part without parameters).
  StateDescription& optimizer(std::string key, torch::optim::Optimizer* optimizer);
  // Loaded in place: whoever holds the tensor (an optimizer) keeps holding it.
  StateDescription& tensor(std::string key, const torch::Tensor& tensor);
  // A value kept as text (an orchestrator's state).
  StateDescription& text(std::string key, std::function<std::string()> save,
                         std::function<void(const std::string&)> restore);

  void save(torch::serialize::OutputArchive& archive) const;
  void load(torch::serialize::InputArchive& archive) const;

 private:
  struct Entry {
    std::function<void(torch::serialize::OutputArchive&)> save;
    std::function<void(torch::serialize::InputArchive&)> load;
  };
  std::vector<Entry> entries_;
};

// An archive as bytes and back (the driver ships them between ranks).
std::string archive_bytes(torch::serialize::OutputArchive& archive);
void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes);

}  // namespace cmlbed::train
