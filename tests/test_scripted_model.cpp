// model.name = torchscript: modules written here with LibTorch's own TorchScript
// compiler (no Python needed), split between their children, trained through the
// parts, and refused with one line each; and the zoo's networks exported by
// scripts/tools/export-model.py computing exactly what the zoo's do (needs python3-torch).
#include <gtest/gtest.h>
#include <torch/script.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cmlbed/model/split_model.hpp"
#include "cmlbed/model/weight_masks.hpp"
#include "cmlbed/model/zoo.hpp"

namespace cmlbed::model {
namespace {

namespace fs = std::filesystem;

class ScriptedModel : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cmlbed-scripted-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A module of type `type` with one parameter, `weight`, and the given forward.
  static torch::jit::Module leaf(const std::string& type, const torch::Tensor& weight, const std::string& forward) {
    torch::jit::Module module(type);
    module.register_attribute("training", c10::BoolType::get(), true);  // as every nn.Module has
    module.register_parameter("weight", weight, false);
    module.define("def forward(self, x):\n" + forward);
    return module;
  }

  // Root(flat, scale): N x 1 x 2 x 2 -> N x 4, forward given.
  std::string write_root(const std::string& name, const std::string& forward) const {
    torch::jit::Module root("Root");
    root.register_attribute("training", c10::BoolType::get(), true);
    root.register_module("flat", leaf("Flat", torch::zeros({1}), "    return torch.flatten(x, 1)\n"));
    root.register_module("scale", leaf("Scale", torch::full({4}, 2.0), "    return x * self.weight\n"));
    root.define("def forward(self, x):\n" + forward);
    root.save(path(name));
    return path(name);
  }

  std::string write_sequence(const std::string& name) const {
    return write_root(name, "    x = self.flat.forward(x)\n    return self.scale.forward(x)\n");
  }

  static ModelOptions options(const std::string& file, std::int64_t classes = 4) {
    return {kTorchScript, ImageShape{1, 2, 2}, classes, file};
  }

  fs::path dir_;
};

TEST_F(ScriptedModel, SplitsBetweenChildrenAndPartsComputeTheWhole) {
  const ModelOptions o = options(write_sequence("sequence.pt"));
  const std::vector<LayerStats> stats = layer_stats(o);
  ASSERT_EQ(stats.size(), 2u);
  EXPECT_EQ(stats[0].name, "flat");
  EXPECT_EQ(stats[1].name, "scale");
  EXPECT_EQ(stats[1].output_shape, (std::vector<std::int64_t>{4}));
  EXPECT_EQ(stats[1].parameters, 4);
  EXPECT_EQ(stats[1].activation_bytes_per_sample, 16);
  // Neither type is one the zoo counts: 0 FLOPs, and said so.
  EXPECT_EQ(stats[1].flops_per_sample, 0);
  EXPECT_EQ(stats[0].uncounted_flops, (std::vector<std::string>{"flat (Flat)"}));
  EXPECT_NE(uncounted_flops_note(stats).find("FLOPs of 2 layer(s) of unknown type not counted: flat (Flat), scale (Scale)"),
            std::string::npos);

  ModelPart whole(o, 0, 2, 1), device(o, 0, 1, 1), server(o, 1, 2, 1);
  const torch::Tensor input = torch::randn({3, 1, 2, 2});
  EXPECT_TRUE(torch::equal(whole.forward(input), input.flatten(1) * 2.0));
  EXPECT_TRUE(torch::equal(server.forward(device.forward(input)), whole.forward(input)));
  // Named as in the whole model's state_dict, under the layer's global index.
  const auto named = server.named_parameters();
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named.begin()->key(), "1.weight");
}

TEST_F(ScriptedModel, TrainingChangesTheModulesOwnWeights) {
  ModelPart part(options(write_sequence("train.pt")), 0, 2, 1);
  for (torch::Tensor& p : part.parameters()) p.set_requires_grad(true);
  torch::optim::SGD sgd(part.parameters(), torch::optim::SGDOptions(0.1));
  const torch::Tensor input = torch::ones({2, 1, 2, 2});
  const torch::Tensor before = part.forward(input).detach().clone();
  sgd.zero_grad();
  part.forward(input).sum().backward();
  sgd.step();
  // d(sum)/d(weight) = 2 per value, so every weight drops from 2.0 to 1.8, and the
  // module's forward (which reads its own weight) sees it.
  EXPECT_TRUE(torch::allclose(part.forward(input), before * 0.9));
}

TEST_F(ScriptedModel, TrainAndEvalReachTheModule) {
  torch::jit::Module root("Root");
  root.register_attribute("training", c10::BoolType::get(), true);
  root.register_module("flat", leaf("Flat", torch::zeros({1}), "    return torch.flatten(x, 1)\n"));
  root.register_module("mode", leaf("Mode", torch::zeros({1}),
                                    "    if self.training:\n        return x * 2.0\n    return x\n"));
  root.define("def forward(self, x):\n    return self.mode.forward(self.flat.forward(x))\n");
  root.save(path("mode.pt"));
  ModelPart part(options(path("mode.pt")), 0, 2, 1);
  const torch::Tensor input = torch::ones({1, 1, 2, 2});
  part.train();
  EXPECT_TRUE(torch::equal(part.forward(input), torch::full({1, 4}, 2.0)));
  part.eval();
  EXPECT_TRUE(torch::equal(part.forward(input), torch::ones({1, 4})));
}

// AdaSplit's masks act on a TorchScript linear layer's weight and bias as on the zoo's,
// whose FLOPs count as the zoo's: 2 per multiply-add plus the bias.
TEST_F(ScriptedModel, MasksAndFlopsOfAKnownLayerType) {
  torch::jit::Module linear("torch.nn.modules.linear.Linear");
  linear.register_attribute("training", c10::BoolType::get(), true);
  linear.register_parameter("weight", torch::ones({4, 4}), false);
  linear.register_parameter("bias", torch::zeros({4}), false);
  linear.define("def forward(self, x):\n    return torch.matmul(x, self.weight.t()) + self.bias\n");
  torch::jit::Module root("Root");
  root.register_attribute("training", c10::BoolType::get(), true);
  root.register_module("flat", leaf("Flat", torch::zeros({1}), "    return torch.flatten(x, 1)\n"));
  root.register_module("fc", linear);
  root.define("def forward(self, x):\n    return self.fc.forward(self.flat.forward(x))\n");
  root.save(path("linear.pt"));
  const ModelOptions o = options(path("linear.pt"));
  const std::vector<LayerStats> stats = layer_stats(o);
  EXPECT_EQ(stats[1].flops_per_sample, 2 * 4 * 4 + 4);
  EXPECT_TRUE(stats[1].uncounted_flops.empty());

  ModelPart part(o, 0, 2, 1);
  WeightMasks masks(part, 1, /*mean=*/-30.0, /*stddev=*/0.0);  // sigmoid(-30): every weight off
  EXPECT_EQ(masks.entries(), 4 * 4 + 4);
  const torch::Tensor input = torch::ones({1, 1, 2, 2});
  EXPECT_TRUE(torch::equal(part.forward(input), torch::full({1, 4}, 4.0)));
  {
    const auto applied = masks.apply(part);
    EXPECT_LT(part.forward(input).abs().max().item<float>(), 1e-9);
  }
  EXPECT_TRUE(torch::equal(part.forward(input), torch::full({1, 4}, 4.0)));
}

void expect_refusal(const ModelOptions& o, std::initializer_list<std::string> parts) {
  try {
    layer_stats(o);
    ADD_FAILURE() << "expected std::invalid_argument for " << o.file;
  } catch (const std::invalid_argument& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
    for (const std::string& part : parts) {
      EXPECT_NE(message.find(part), std::string::npos) << "\"" << message << "\" lacks \"" << part << "\"";
    }
  }
}

TEST_F(ScriptedModel, RefusesWhatItCannotSplit) {
  expect_refusal(options(path("missing.pt")), {"model.file", "missing.pt", "No such file"});
  std::ofstream(path("garbage.pt")) << "not a zip archive";
  expect_refusal(options(path("garbage.pt")), {"garbage.pt", "not a TorchScript module saved by torch.jit.save"});
  expect_refusal(options(write_root("outside.pt", "    return self.scale.forward(self.flat.forward(x)) + 1.0\n")),
                 {"outside.pt", "not a sequence of its children", "aten::add", "nn.Sequential"});
  expect_refusal(options(write_root("twice.pt", "    x = self.flat.forward(x)\n    x = self.scale.forward(x)\n    return self.scale.forward(x)\n")),
                 {"calls scale more than once"});
  expect_refusal(options(write_root("skip.pt", "    y = self.flat.forward(x)\n    return self.scale.forward(x)\n")),
                 {"calls scale on something other than the previous child's output"});
  expect_refusal(options(write_root("last.pt", "    y = self.flat.forward(x)\n    z = self.scale.forward(y)\n    return y\n")),
                 {"does not return the last child's output"});
  expect_refusal(options(write_sequence("classes.pt"), 3), {"classes.pt", "outputs 4 per sample", "one value per class (3)"});
  ModelOptions colour = options(write_sequence("input.pt"));
  colour.input = ImageShape{3, 2, 2};
  expect_refusal(colour, {"input.pt", "layer scale cannot take an input of 12 per sample", "must match"});
  ModelOptions no_file = options("");
  expect_refusal(no_file, {"model.name = torchscript needs model.file"});
}

TEST_F(ScriptedModel, RefusesAChildThatCannotTakeTheInput) {
  torch::jit::Module root("Root");
  root.register_attribute("training", c10::BoolType::get(), true);
  root.register_module("conv", leaf("Conv", torch::ones({2, 3, 1, 1}), "    return torch.conv2d(x, self.weight)\n"));
  root.register_module("flat", leaf("Flat", torch::zeros({1}), "    return torch.flatten(x, 1)\n"));
  root.define("def forward(self, x):\n    return self.flat.forward(self.conv.forward(x))\n");
  root.save(path("conv.pt"));
  expect_refusal(options(path("conv.pt"), 8), {"conv.pt", "layer conv cannot take an input of 1x2x2 per sample"});
}

// scripts/tools/export-model.py's zoo networks: the same layers, counts and initial weights as
// the zoo's for the same seed, and the same outputs in training and evaluation.
bool python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }

TEST_F(ScriptedModel, ZooExportsComputeWhatTheZooComputes) {
  if (!python_has_torch()) GTEST_SKIP() << "python3-torch is not installed (apt-get install python3-torch)";
  const char* source = std::getenv("CMLBED_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  for (const std::string name : {"vgg5", "lenet"}) {
    SCOPED_TRACE(name);
    const std::string file = path(name + ".pt");
    const std::string command = "/usr/bin/python3 " + std::string(source) + "/scripts/tools/export-model.py --zoo " + name +
                                " --input 1x28x28 --classes 10 --seed 7 " + file + " >/dev/null";
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
    const ModelOptions zoo{name, ImageShape{1, 28, 28}, 10, ""};
    const ModelOptions scripted{kTorchScript, ImageShape{1, 28, 28}, 10, file};
    const std::vector<LayerStats> a = layer_stats(zoo), b = layer_stats(scripted);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t l = 0; l < a.size(); ++l) {
      EXPECT_EQ(a[l].name, b[l].name);
      EXPECT_EQ(a[l].output_shape, b[l].output_shape);
      EXPECT_EQ(a[l].parameters, b[l].parameters);
      EXPECT_EQ(a[l].buffer_values, b[l].buffer_values);
      EXPECT_EQ(a[l].flops_per_sample, b[l].flops_per_sample) << "layer " << a[l].name;
      EXPECT_EQ(a[l].activation_bytes_per_sample, b[l].activation_bytes_per_sample);
      EXPECT_TRUE(b[l].uncounted_flops.empty());
    }
    ModelPart zoo_model(zoo, 0, a.size(), 7), scripted_model(scripted, 0, b.size(), 7);
    const auto zoo_weights = zoo_model.parameters(), scripted_weights = scripted_model.parameters();
    ASSERT_EQ(zoo_weights.size(), scripted_weights.size());
    for (std::size_t i = 0; i < zoo_weights.size(); ++i) {
      EXPECT_TRUE(torch::equal(zoo_weights[i], scripted_weights[i])) << "parameter " << i;
    }
    const torch::Tensor input = torch::randn({8, 1, 28, 28});
    for (const bool training : {true, false}) {
      zoo_model.train(training);
      scripted_model.train(training);
      const float difference = (zoo_model.forward(input) - scripted_model.forward(input)).abs().max().item<float>();
      EXPECT_LE(difference, 1e-6) << (training ? "training" : "evaluation");
    }
  }
}

}  // namespace
}  // namespace cmlbed::model
