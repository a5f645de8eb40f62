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

std::string archive_bytes(torch::serialize::OutputArchive& archive) {
  std::ostringstream stream;
  archive.save_to(stream);
  return std::move(stream).str();
}

void load_archive_bytes(torch::serialize::InputArchive& archive, const std::string& bytes) {
  archive.load_from(bytes.data(), bytes.size());
}

}  // namespace cmlbed::train
