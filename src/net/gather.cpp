#include "cmlbed/net/gather.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cmlbed/net/mpi_error.hpp"
#include "cmlbed/net/wait_politely.hpp"

namespace cmlbed::net {
namespace {

// Gathers each rank's bytes at rank 0, one vector per rank.
std::vector<std::vector<char>> gather_bytes(const char* data, int bytes, MPI_Comm comm) {
  const int rank = comm_rank(comm), size = comm_size(comm);
  std::vector<int> counts(rank == 0 ? size : 0), displacements(counts.size());
  CMLBED_MPI_CHECK(MPI_Gather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm));
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = total;
    total += counts[r];
  }
  std::vector<char> all(static_cast<std::size_t>(total));
  CMLBED_MPI_CHECK(MPI_Gatherv(data, bytes, MPI_BYTE, all.data(), counts.data(),
                               displacements.data(), MPI_BYTE, 0, comm));
  std::vector<std::vector<char>> per_rank;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    per_rank.emplace_back(all.begin() + displacements[r],
                          all.begin() + displacements[r] + counts[r]);
  }
  return per_rank;
}

// Each rank's plain values at rank 0, one vector per rank. Every rank runs the same
// binary, so plain data travels as bytes.
template <typename T>
std::vector<std::vector<T>> gather_plain(const std::vector<T>& mine, MPI_Comm comm) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto per_rank = gather_bytes(reinterpret_cast<const char*>(mine.data()),
                                     static_cast<int>(mine.size() * sizeof(T)), comm);
  std::vector<std::vector<T>> values;
  for (const auto& bytes : per_rank) {
    std::vector<T> rank_values(bytes.size() / sizeof(T));
    // memcpy from an empty vector's data() (null) is undefined even for 0 bytes (UBSan).
    if (!rank_values.empty()) std::memcpy(rank_values.data(), bytes.data(), rank_values.size() * sizeof(T));
    values.push_back(std::move(rank_values));
  }
  return values;
}

// Byte strings travel as their size, then pieces of at most 1 GiB (MPI counts are int).
constexpr int kBlobSizeTag = 7101;
constexpr int kBlobPieceTag = 7102;
constexpr std::size_t kBlobPiece = std::size_t{1} << 30;

int piece_count(std::size_t bytes, std::size_t offset) {
  return static_cast<int>(std::min(kBlobPiece, bytes - offset));
}

// Sends `bytes` to `peer`: blocking (rank 0) or waited for politely (the others).
void send_blob(const std::string& bytes, int peer, MPI_Comm comm, bool politely) {
  std::uint64_t size = bytes.size();
  std::vector<MPI_Request> requests(1);
  CMLBED_MPI_CHECK(MPI_Isend(&size, 1, MPI_UINT64_T, peer, kBlobSizeTag, comm, &requests[0]));
  for (std::size_t offset = 0; offset < bytes.size(); offset += kBlobPiece) {
    requests.emplace_back();
    CMLBED_MPI_CHECK(MPI_Isend(bytes.data() + offset, piece_count(bytes.size(), offset), MPI_BYTE, peer,
                               kBlobPieceTag, comm, &requests.back()));
  }
  for (MPI_Request& request : requests) {
    if (politely) {
      wait_politely(request);
    } else {
      CMLBED_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
  }
}

std::string receive_blob(int peer, MPI_Comm comm, bool politely) {
  const auto wait = [&](MPI_Request& request) {
    if (politely) {
      wait_politely(request);
    } else {
      CMLBED_MPI_CHECK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    }
  };
  std::uint64_t size = 0;
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Irecv(&size, 1, MPI_UINT64_T, peer, kBlobSizeTag, comm, &request));
  wait(request);
  std::string bytes(static_cast<std::size_t>(size), '\0');
  for (std::size_t offset = 0; offset < bytes.size(); offset += kBlobPiece) {
    CMLBED_MPI_CHECK(MPI_Irecv(bytes.data() + offset, piece_count(bytes.size(), offset), MPI_BYTE, peer,
                               kBlobPieceTag, comm, &request));
    wait(request);
  }
  return bytes;
}

}  // namespace

std::vector<std::vector<trace::Event>> gather_events(const std::vector<trace::Event>& mine,
                                                     MPI_Comm comm) {
  return gather_plain(mine, comm);
}

std::vector<std::vector<double>> gather_doubles(const std::vector<double>& mine, MPI_Comm comm) {
  return gather_plain(mine, comm);
}

std::vector<std::int64_t> gather_int64(std::int64_t mine, MPI_Comm comm) {
  std::vector<std::int64_t> all(comm_rank(comm) == 0 ? comm_size(comm) : 0);
  CMLBED_MPI_CHECK(MPI_Gather(&mine, 1, MPI_INT64_T, all.data(), 1, MPI_INT64_T, 0, comm));
  return all;
}

int max_over_ranks(int mine, MPI_Comm comm) {
  int largest = 0;
  MPI_Request request;
  CMLBED_MPI_CHECK(MPI_Iallreduce(&mine, &largest, 1, MPI_INT, MPI_MAX, comm, &request));
  wait_politely(request);
  return largest;
}

std::vector<std::string> gather_host_names(MPI_Comm comm) {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  CMLBED_MPI_CHECK(MPI_Get_processor_name(name, &length));
  return gather_strings(std::string(name, static_cast<std::size_t>(length)), comm);
}

std::vector<std::string> gather_strings(const std::string& mine, MPI_Comm comm) {
  std::vector<std::string> strings;
  for (const auto& bytes : gather_bytes(mine.data(), static_cast<int>(mine.size()), comm)) {
    strings.emplace_back(bytes.begin(), bytes.end());
  }
  return strings;
}

void gather_blobs(const std::string& mine, MPI_Comm comm,
                  const std::function<void(int rank, const std::string& bytes)>& take) {
  if (comm_rank(comm) != 0) {
    send_blob(mine, 0, comm, /*politely=*/true);
    return;
  }
  take(0, mine);
  for (int rank = 1; rank < comm_size(comm); ++rank) take(rank, receive_blob(rank, comm, /*politely=*/false));
}

std::string scatter_blobs(MPI_Comm comm, const std::function<std::string(int rank)>& make) {
  if (comm_rank(comm) != 0) return receive_blob(0, comm, /*politely=*/true);
  std::string mine = make(0);
  for (int rank = 1; rank < comm_size(comm); ++rank) send_blob(make(rank), rank, comm, /*politely=*/false);
  return mine;
}

}  // namespace cmlbed::net
