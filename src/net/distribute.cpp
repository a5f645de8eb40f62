#include "cmlbed/net/distribute.hpp"

#include <algorithm>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"

namespace cmlbed::net {
namespace {

constexpr int kSizeTag = 7401;
constexpr int kPieceTag = 7402;
constexpr std::uint64_t kPieceBytes = std::uint64_t{1} << 30;

}  // namespace

std::vector<std::uint8_t> distribute_from_root(MPI_Comm comm, const BytesForRank& bytes_for) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  if (rank == 0) {
    for (int peer = 1; peer < size; ++peer) {
      const std::vector<std::uint8_t> bytes = bytes_for(peer);
      const std::uint64_t length = bytes.size();
      CMLBED_MPI_CHECK(MPI_Send(&length, 1, MPI_UINT64_T, peer, kSizeTag, comm));
      for (std::uint64_t offset = 0; offset < length; offset += kPieceBytes) {
        const auto piece = static_cast<int>(std::min(kPieceBytes, length - offset));
        CMLBED_MPI_CHECK(MPI_Send(bytes.data() + offset, piece, MPI_BYTE, peer, kPieceTag, comm));
      }
    }
    return {};
  }
  std::uint64_t length = 0;
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Irecv(&length, 1, MPI_UINT64_T, 0, kSizeTag, comm, &request));
  wait_politely(request);
  std::vector<std::uint8_t> bytes(length);
  for (std::uint64_t offset = 0; offset < length; offset += kPieceBytes) {
    const auto piece = static_cast<int>(std::min(kPieceBytes, length - offset));
    CMLBED_MPI_CHECK(MPI_Irecv(bytes.data() + offset, piece, MPI_BYTE, 0, kPieceTag, comm, &request));
    wait_politely(request);
  }
  return bytes;
}

}  // namespace cmlbed::net
