#pragma once
// Message payload buffers. Two things make a plain std::vector<std::byte> slow for
// large messages: it zero-fills memory that is about to be overwritten, and every fresh
// 4 KiB page costs a page fault on first touch, where a huge page costs one fault per
// 2 MiB (docs/explanation/architecture.md, "Memory"). So payloads skip the zero-fill
// and ask for transparent huge pages when they are at least one huge page long.
#include <cstddef>
#include <new>
#include <vector>

namespace cmlbed::net {

template <typename T>
class PayloadAllocator {
 public:
  using value_type = T;
  static constexpr std::size_t kHugePage = std::size_t{2} << 20;

  PayloadAllocator() = default;
  template <typename U>
  PayloadAllocator(const PayloadAllocator<U>&) noexcept {}

  T* allocate(std::size_t n);
  void deallocate(T* p, std::size_t n) noexcept;

  // Default-initialise (no zero-fill) when a vector grows without a value.
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <typename U>
  bool operator==(const PayloadAllocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const PayloadAllocator<U>&) const noexcept { return false; }
};

// Large blocks: huge-page aligned and advised; small ones: plain operator new.
void* allocate_payload_bytes(std::size_t bytes);
void free_payload_bytes(void* p, std::size_t bytes) noexcept;

template <typename T>
T* PayloadAllocator<T>::allocate(std::size_t n) {
  return static_cast<T*>(allocate_payload_bytes(n * sizeof(T)));
}

template <typename T>
void PayloadAllocator<T>::deallocate(T* p, std::size_t n) noexcept {
  free_payload_bytes(p, n * sizeof(T));
}

using Payload = std::vector<std::byte, PayloadAllocator<std::byte>>;

}  // namespace cmlbed::net
