#pragma once
// The readers take paths: a fuzz input goes to a file in /dev/shm (memory, not disk) that
// lives for one execution.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

namespace cmlbed::fuzz {

class InputFile {
 public:
  InputFile(const std::string& name, const std::uint8_t* data, std::size_t size)
      : path_("/dev/shm/cmlbed-fuzz-" + std::to_string(::getpid()) + "-" + name) {
    std::ofstream out(path_, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  ~InputFile() { ::unlink(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace cmlbed::fuzz
