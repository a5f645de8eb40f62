#include "cmlbed/train/state_archive.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <mutex>
#include <sstream>

namespace cmlbed::train {

void save_module(torch::serialize::OutputArchive& archive, const std::string& key, torch::nn::Module& module) {
  torch::serialize::OutputArchive nested(archive.compilation_unit());
  module.save(nested);
  archive.write(key, nested);
}

void load_module(torch::serialize::InputArchive& archive, const std::string& key, torch::nn::Module& module) {
  torch::serialize::InputArchive nested;
  archive.read(key, nested);
  module.load(nested);
}

void save_optimizer(torch::serialize::OutputArchive& archive, const std::string& key,
                    torch::optim::Optimizer* optimizer) {
  if (optimizer == nullptr) return;
  torch::serialize::OutputArchive nested(archive.compilation_unit());
  // LibTorch keys the state by parameter position, so it loads into an optimizer made
  // over the same parameters in the same order (the same model part).
  optimizer->save(nested);
  archive.write(key, nested);
}

void load_optimizer(torch::serialize::InputArchive& archive, const std::string& key,
                    torch::optim::Optimizer* optimizer) {
  if (optimizer == nullptr) return;
  torch::serialize::InputArchive nested;
  archive.read(key, nested);
  optimizer->load(nested);
}

void save_default_generator(torch::serialize::OutputArchive& archive, const std::string& key) {
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  archive.write(key, generator.get_state());
}

void load_default_generator(torch::serialize::InputArchive& archive, const std::string& key) {
  torch::Tensor state;
  archive.read(key, state);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_state(state);
}

StateDescription& StateDescription::module(std::string key, torch::nn::Module& module) {
  entries_.push_back({[key, &module](torch::serialize::OutputArchive& a) { save_module(a, key, module); },
                      [key, &module](torch::serialize::InputArchive& a) { load_module(a, key, module); }});
  return *this;
}

StateDescription& StateDescription::optimizer(std::string key, torch::optim::Optimizer* optimizer) {
  entries_.push_back({[key, optimizer](torch::serialize::OutputArchive& a) { save_optimizer(a, key, optimizer); },
                      [key, optimizer](torch::serialize::InputArchive& a) { load_optimizer(a, key, optimizer); }});
  return *this;
}

StateDescription& StateDescription::tensor(std::string key, const torch::Tensor& tensor) {
  entries_.push_back({[key, tensor](torch::serialize::OutputArchive& a) { a.write(key, tensor.detach()); },
                      [key, tensor](torch::serialize::InputArchive& a) {
                        torch::Tensor saved;
                        a.read(key, saved);
                        torch::NoGradGuard no_grad;
                        torch::Tensor target = tensor;  // shares the tensor: copy_ writes into it
                        target.copy_(saved);
                      }});
  return *this;
}

StateDescription& StateDescription::text(std::string key, std::function<std::string()> save,
                                         std::function<void(const std::string&)> restore) {
  entries_.push_back({[key, save](torch::serialize::OutputArchive& a) { a.write(key, c10::IValue(save())); },
                      [key, restore](torch::serialize::InputArchive& a) {
                        c10::IValue value;
                        a.read(key, value);
                        restore(value.toStringRef());
                      }});
  return *this;
}

void StateDescription::save(torch::serialize::OutputArchive& archive) const {
  for (const Entry& entry : entries_) entry.save(archive);
}

void StateDescription::load(torch::serialize::InputArchive& archive) const {
  for (const Entry& entry : entries_) entry.load(archive);
}

std::string archive_bytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream stream;
  archive.save_to(stream);
  return std::move(stream).str();
}

void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes) {
  archive.load_from(bytes.data(), bytes.size());
}

}  // namespace cmlbed::train
