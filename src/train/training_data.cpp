#include "training_data.hpp"

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "cmlbed/data/image_set_codec.hpp"
#include "cmlbed/data/partition.hpp"
#include "cmlbed/net/distribute.hpp"
#include "cmlbed/net/mpi_session.hpp"
#include "cmlbed/setup/derived.hpp"
#include "cmlbed/trace/startup_clock.hpp"

namespace cmlbed::train {
namespace {

// What rank 0 sends a device: a status byte, then its samples (ok) or rank 0's message.
enum class Status : std::uint8_t { ok = 0, bad_split = 1, failed = 2 };

std::vector<std::uint8_t> error_message(Status status, const std::string& text) {
  std::vector<std::uint8_t> bytes(1 + text.size());
  bytes[0] = static_cast<std::uint8_t>(status);
  std::copy(text.begin(), text.end(), bytes.begin() + 1);
  return bytes;
}

[[noreturn]] void throw_error(Status status, const std::string& text) {
  if (status == Status::bad_split) throw std::invalid_argument(text);
  throw std::runtime_error(text);
}

}  // namespace

std::vector<std::size_t> TrainingData::own_positions() const {
  std::vector<std::size_t> positions(own.size());
  std::iota(positions.begin(), positions.end(), std::size_t{0});
  return positions;
}

TrainingData load_training_data(const Settings& settings, int rank, int devices, MPI_Comm run_comm) {
  const net::DuplicatedComm comm(run_comm);  // no other layer's message can match
  TrainingData data;
  if (rank == 0) {
    // The whole training set lives only in this scope: after each device has its share,
    // the server keeps the labels alone.
    std::optional<data::ImageSet> train;
    std::optional<std::pair<Status, std::string>> error;
    try {
      data::Dataset dataset = load_dataset(settings);
      data.partitions = data::partition_indices(dataset.train.labels, dataset.train.num_classes,
                                                partition_spec(settings, devices));
      data.test = std::move(dataset.test);
      train = std::move(dataset.train);
    } catch (const std::invalid_argument& e) {
      error.emplace(Status::bad_split, e.what());
    } catch (const std::exception& e) {
      error.emplace(Status::failed, e.what());
    }
    net::distribute_from_root(comm.get(), [&](int device) {
      if (error) return error_message(error->first, error->second);
      const std::vector<std::uint8_t> share =
          data::encode_image_set(train->subset(data.partitions[static_cast<std::size_t>(device - 1)]));
      std::vector<std::uint8_t> bytes(1 + share.size());
      bytes[0] = static_cast<std::uint8_t>(Status::ok);
      std::copy(share.begin(), share.end(), bytes.begin() + 1);
      return bytes;
    });
    if (error) throw_error(error->first, error->second);
    data.train_labels = std::move(train->labels);
  } else {
    std::vector<std::uint8_t> bytes = net::distribute_from_root(comm.get(), nullptr);
    if (bytes.empty()) throw std::runtime_error("training data: rank 0 sent nothing");
    const auto status = static_cast<Status>(bytes.front());
    if (status != Status::ok) throw_error(status, std::string(bytes.begin() + 1, bytes.end()));
    bytes.erase(bytes.begin());
    data.own = data::decode_image_set(bytes);
  }
  trace::startup_clock().end(trace::StartupPhase::data);
  return data;
}

std::optional<double> trivial_accuracy(const TrainingData& data, EvaluationScope scope) {
  if (data.test.size() == 0) return std::nullopt;
  return trivial_accuracy(data.test.labels, static_cast<std::size_t>(data.test.num_classes), data.train_labels,
                          data.partitions, scope);
}

}  // namespace cmlbed::train
