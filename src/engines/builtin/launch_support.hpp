// The little device bookkeeping built-in contexts need: which device they were made on, making
// it current around an enqueue, and how many blocks a grid-stride kernel should launch there.
#pragma once

namespace ferry::builtin {

// The calling thread's current CUDA device.
[[nodiscard]] int current_device();

// Grid-stride kernels launch at most this many blocks of 256 threads on `device`: enough to
// fill every SM several times over, few enough that launch overhead stays flat for large inputs.
[[nodiscard]] int grid_limit(int device);

// Makes `device` current for the scope. Calls into the runtime only when the current device
// differs, so it costs almost nothing on the hot path and is safe inside stream capture.
class device_scope {
 public:
  explicit device_scope(int device);
  ~device_scope();
  device_scope(const device_scope&) = delete;
  device_scope& operator=(const device_scope&) = delete;

 private:
  int previous_;
  int device_;
};

}  // namespace ferry::builtin
