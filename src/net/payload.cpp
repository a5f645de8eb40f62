#include "cmlbed/net/payload.hpp"

#include <sys/mman.h>

#include <cstdlib>

namespace cmlbed::net {

void* allocate_payload_bytes(std::size_t bytes) {
  constexpr std::size_t huge = PayloadAllocator<std::byte>::kHugePage;
  if (bytes < huge) return ::operator new(bytes);
  const std::size_t rounded = (bytes + huge - 1) / huge * huge;
  void* p = std::aligned_alloc(huge, rounded);
  if (p == nullptr) throw std::bad_alloc();
  // Advice only: where transparent huge pages are off this fails harmlessly.
  madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

void free_payload_bytes(void* p, std::size_t bytes) noexcept {
  if (bytes < PayloadAllocator<std::byte>::kHugePage) {
    ::operator delete(p);
  } else {
    std::free(p);
  }
}

}  // namespace cmlbed::net
