#include "cmlbed/train/tensor_codec.hpp"

#include <cstring>
#include <stdexcept>

namespace cmlbed::train {
namespace {

net::DType dtype_of(const torch::Tensor& t) {
  switch (t.scalar_type()) {
    case torch::kFloat32: return net::DType::float32;
    case torch::kInt64: return net::DType::int64;
    case torch::kUInt8: return net::DType::uint8;
    case torch::kFloat64: return net::DType::float64;
    default: throw std::invalid_argument("tensor_codec: unsupported dtype");
  }
}

// memcpy with a null pointer is undefined even for 0 bytes, and an empty tensor's
// data_ptr() (a device part without parameters: split 0) and an empty payload's data()
// are null (found by UBSan).
void copy_bytes(void* to, const void* from, std::size_t bytes) {
  if (bytes > 0) std::memcpy(to, from, bytes);
}

torch::ScalarType scalar_type_of(net::DType d) {
  switch (d) {
    case net::DType::float32: return torch::kFloat32;
    case net::DType::int64: return torch::kInt64;
    case net::DType::uint8: return torch::kUInt8;
    case net::DType::float64: return torch::kFloat64;
  }
  throw std::invalid_argument("tensor_codec: unknown dtype");
}

void describe(const torch::Tensor& t, net::MessageHeader& header) {
  if (t.dim() > net::MessageHeader::kMaxDims) throw std::invalid_argument("tensor_codec: too many dims");
  header.dtype = dtype_of(t);
  header.dims = static_cast<std::uint8_t>(t.dim());
  for (int i = 0; i < t.dim(); ++i) header.shape[static_cast<std::size_t>(i)] = t.size(i);
}

std::vector<std::int64_t> shape_of(const net::MessageHeader& header) {
  return std::vector<std::int64_t>(header.shape.begin(), header.shape.begin() + header.dims);
}

std::size_t tensor_bytes(const net::MessageHeader& header) {
  std::size_t n = net::dtype_size(header.dtype);
  for (std::int64_t d : shape_of(header)) n *= static_cast<std::size_t>(d);
  return n;
}

}  // namespace

net::Payload tensor_payload(const torch::Tensor& tensor, net::MessageHeader& header) {
  const torch::Tensor t = tensor.contiguous();
  describe(t, header);
  net::Payload payload(static_cast<std::size_t>(t.nbytes()));
  copy_bytes(payload.data(), t.data_ptr(), payload.size());
  return payload;
}

torch::Tensor tensor_from(const net::Message& message) {
  const net::MessageHeader& h = message.header;
  if (tensor_bytes(h) > message.payload.size()) {
    throw std::runtime_error("tensor_codec: payload shorter than its shape in " + h.describe());
  }
  torch::Tensor t = torch::empty(shape_of(h), torch::TensorOptions().dtype(scalar_type_of(h.dtype)));
  copy_bytes(t.data_ptr(), message.payload.data(), tensor_bytes(h));
  return t;
}

net::Payload activation_payload(const torch::Tensor& activation, const torch::Tensor& labels,
                                net::MessageHeader& header) {
  const torch::Tensor a = activation.contiguous().to(torch::kFloat32);
  const torch::Tensor y = labels.contiguous().to(torch::kInt64);
  describe(a, header);
  net::Payload payload(static_cast<std::size_t>(a.nbytes() + y.nbytes()));
  copy_bytes(payload.data(), a.data_ptr(), static_cast<std::size_t>(a.nbytes()));
  copy_bytes(payload.data() + a.nbytes(), y.data_ptr(), static_cast<std::size_t>(y.nbytes()));
  return payload;
}

std::pair<torch::Tensor, torch::Tensor> activation_from(const net::Message& message) {
  torch::Tensor activation = tensor_from(message);
  const std::size_t offset = static_cast<std::size_t>(activation.nbytes());
  const std::int64_t n = activation.size(0);
  if (message.payload.size() != offset + static_cast<std::size_t>(n) * sizeof(std::int64_t)) {
    throw std::runtime_error("tensor_codec: activation message without its labels: " +
                             message.header.describe());
  }
  torch::Tensor labels = torch::empty({n}, torch::kInt64);
  copy_bytes(labels.data_ptr(), message.payload.data() + offset, static_cast<std::size_t>(labels.nbytes()));
  return {activation, labels};
}

std::vector<torch::Tensor> state_tensors(torch::nn::Module& module) {
  std::vector<torch::Tensor> tensors = module.parameters();
  for (const torch::Tensor& b : module.buffers()) tensors.push_back(b);
  return tensors;
}

torch::Tensor flat_state(torch::nn::Module& module) {
  std::vector<torch::Tensor> pieces;
  for (const torch::Tensor& t : state_tensors(module)) {
    pieces.push_back(t.detach().reshape({-1}).to(torch::kFloat32));
  }
  if (pieces.empty()) return torch::zeros({0});
  return torch::cat(pieces);
}

std::int64_t parameter_entries(torch::nn::Module& module) {
  std::int64_t entries = 0;
  for (const torch::Tensor& p : module.parameters()) entries += p.numel();
  return entries;
}

std::vector<float> flat_state_values(torch::nn::Module& module) {
  const torch::Tensor flat = flat_state(module).contiguous();
  return {flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel()};
}

void load_flat_state(torch::nn::Module& module, const torch::Tensor& flat) {
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (torch::Tensor& t : state_tensors(module)) {
    const std::int64_t n = t.numel();
    if (offset + n > flat.numel()) throw std::runtime_error("load_flat_state: state too short");
    t.copy_(flat.slice(0, offset, offset + n).reshape(t.sizes()).to(t.scalar_type()));
    offset += n;
  }
  if (offset != flat.numel()) throw std::runtime_error("load_flat_state: state too long");
}

std::vector<std::pair<std::string, torch::Tensor>> named_state(torch::nn::Module& module) {
  std::vector<std::pair<std::string, torch::Tensor>> state;
  for (const auto& p : module.named_parameters()) state.emplace_back(p.key(), p.value());
  for (const auto& b : module.named_buffers()) state.emplace_back(b.key(), b.value());
  return state;
}

void load_named_state(torch::nn::Module& module, const std::map<std::string, torch::Tensor>& state) {
  torch::NoGradGuard no_grad;
  for (auto& [name, tensor] : named_state(module)) {
    const auto found = state.find(name);
    if (found == state.end()) throw std::runtime_error("load_named_state: no tensor named " + name);
    tensor.copy_(found->second.reshape(tensor.sizes()).to(tensor.scalar_type()));
  }
}

}  // namespace cmlbed::train
