// Checkpoint archives of LibTorch state (state_archive.hpp): a model and its optimizer
// saved mid-training and loaded into fresh ones go on exactly as if never stopped, for
// SGD with momentum and for Adam; the default generator (dropout) resumes its sequence.
#include <gtest/gtest.h>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/train/local_training.hpp"
#include "cmlbed/train/state_archive.hpp"
#include "cmlbed/train/tensor_codec.hpp"

namespace cmlbed::train {
namespace {

model::ModelOptions lenet() {
  model::ModelOptions options;
  options.name = "lenet";
  options.input = {1, 32, 32};
  options.classes = 10;
  return options;
}

// `steps` optimizer steps on fixed random batches drawn from `seed`.
void train(model::ModelPart& model, torch::optim::Optimizer& optimizer, int steps, int seed) {
  torch::manual_seed(static_cast<std::uint64_t>(seed));
  for (int step = 0; step < steps; ++step) {
    const torch::Tensor images = torch::rand({8, 1, 32, 32});
    const torch::Tensor labels = torch::randint(10, {8}, torch::kInt64);
    batch_loss(model.forward(images), labels, 8).backward();
    optimizer.step();
    optimizer.zero_grad();
  }
}

class StateArchive : public ::testing::TestWithParam<const char*> {};

TEST_P(StateArchive, ModelAndOptimizerGoOnExactly) {
  TrainingSettings settings;
  settings.model = lenet();
  settings.optimizer = GetParam();
  settings.lr = 0.01;
  settings.weight_decay = 1e-4;
  const std::size_t layers = model::layer_count(settings.model);
  model::ModelPart trained(settings.model, 0, layers, 5);
  auto optimizer = make_optimizer(trained, settings);
  train(trained, *optimizer, 3, 11);

  torch::serialize::OutputArchive out;
  save_module(out, "model", trained);
  save_optimizer(out, "optimizer", optimizer.get());
  const std::string bytes = archive_bytes(out);

  train(trained, *optimizer, 4, 12);  // the uninterrupted run

  model::ModelPart resumed(settings.model, 0, layers, 99);  // other weights until loaded
  auto resumed_optimizer = make_optimizer(resumed, settings);
  torch::serialize::InputArchive in;
  load_archive_bytes(in, bytes);
  load_module(in, "model", resumed);
  load_optimizer(in, "optimizer", resumed_optimizer.get());
  train(resumed, *resumed_optimizer, 4, 12);

  // Bit for bit: the optimizer state (momentum, Adam's moments and step) came back.
  EXPECT_TRUE(torch::equal(flat_state(trained), flat_state(resumed)));
  // Without the optimizer state the weights differ: the comparison can fail.
  model::ModelPart weights_only(settings.model, 0, layers, 99);
  auto fresh_optimizer = make_optimizer(weights_only, settings);
  torch::serialize::InputArchive again;
  load_archive_bytes(again, bytes);
  load_module(again, "model", weights_only);
  train(weights_only, *fresh_optimizer, 4, 12);
  EXPECT_FALSE(torch::equal(flat_state(trained), flat_state(weights_only)));
}

INSTANTIATE_TEST_SUITE_P(Optimizers, StateArchive, ::testing::Values("sgd", "adam"));

TEST(StateArchiveGenerator, DropoutMasksContinueTheirSequence) {
  torch::manual_seed(3);
  torch::rand({100});
  torch::serialize::OutputArchive out;
  save_default_generator(out, "generator");
  const std::string bytes = archive_bytes(out);
  const torch::Tensor expected = torch::dropout(torch::ones({1000}), 0.5, true);
  torch::manual_seed(4);  // as a freshly made model would leave it
  torch::serialize::InputArchive in;
  load_archive_bytes(in, bytes);
  load_default_generator(in, "generator");
  EXPECT_TRUE(torch::equal(torch::dropout(torch::ones({1000}), 0.5, true), expected));
}

TEST(StateArchiveGenerator, NoOptimizerSavesNothing) {
  torch::serialize::OutputArchive out;
  save_optimizer(out, "optimizer", nullptr);
  torch::serialize::InputArchive in;
  load_archive_bytes(in, archive_bytes(out));
  EXPECT_NO_THROW(load_optimizer(in, "optimizer", nullptr));
  EXPECT_TRUE(in.keys().empty());
}

}  // namespace
}  // namespace cmlbed::train
