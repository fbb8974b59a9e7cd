// Makes a CUDA device current for a scope and restores the previous one when the scope ends.
#pragma once

namespace ferry::core {

// Calls into the runtime only when the current device differs, so it costs almost nothing on the
// hot path and is safe inside stream capture. The destructor restores the device that was current
// at construction even when code inside the scope switched devices on its own.
class scoped_device {
 public:
  explicit scoped_device(int ordinal);
  ~scoped_device();
  scoped_device(const scoped_device&) = delete;
  scoped_device& operator=(const scoped_device&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace ferry::core
