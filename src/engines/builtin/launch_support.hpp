// The little device bookkeeping built-in contexts need: which device they were made on and how
// many blocks a grid-stride kernel should launch there.
#pragma once

namespace ferry::builtin {

// The calling thread's current CUDA device.
[[nodiscard]] int current_device();

// Grid-stride kernels launch at most this many blocks of 256 threads on `device`: enough to
// fill every SM several times over, few enough that launch overhead stays flat for large inputs.
[[nodiscard]] int grid_limit(int device);

}  // namespace ferry::builtin
