// The TensorRT 10+ backend: `ferry bench --engine trt:PATH.plan`.
//
// Compiled only where CMake finds TensorRT 10 or newer (backend.cmake); this header names no
// TensorRT type, so model_engine.cpp includes it without TensorRT's headers.
//
// What the engine is:
// - io(): the plan's device-resident I/O tensors, in TensorRT's order, -1 dims as dynamic_dim.
//   A data type ferry lacks (kFP8, kINT4, kFP4, kE8M0) or a vectorized layout is refused at load
//   with `unsupported`, naming the tensor.
// - resolve(): takes one shape per dynamic input (static inputs may be left out), checks the rank
//   and that every dim lies in optimization profile 0's [min, max], and asks TensorRT for the
//   output shapes on a scratch context that has no activation memory.
// - make_context(): one IExecutionContext per slot with its own activation memory (TensorRT's
//   default, kSTATIC), all on profile 0: since TensorRT 10 contexts may share a profile (profile
//   sharing, a preview feature in 8.6, is always on), so slots need no profile each. bind() is
//   setTensorAddress (256-byte aligned addresses only), enqueue() is enqueueV3, and
//   signal_inputs_consumed() is setInputConsumedEvent, so zero-copy inputs are released as soon
//   as TensorRT has read them.
//
// Host-resident shape tensors (TensorLocation::kHOST, e.g. the target of a dynamic Reshape) are
// not ferry I/O buffers: they are absent from io() and are never bound. Their *values* come from
// a shape_binding with the tensor's name whose dims are the values (on the command line:
// `--shape NAME:V1xV2...`); resolve() throws invalid_argument naming the tensor when one is
// missing or has the wrong count. Each context keeps the values in its own host memory, which
// TensorRT reads at every enqueue. make_context() takes them from the resolve() call that
// returned the same concrete I/O, so pass resolve()'s result to it unchanged. Host shape outputs
// get host memory of their own in each context and are not reported.
//
// Errors: the plan file is read before anything else; a missing, unreadable, empty or corrupt
// file, a plan built by another TensorRT version and a plan built for another GPU architecture
// each give one invalid_argument message naming the file and ending with TensorRT's own line.
// TensorRT's log reaches stderr as "ferry: TensorRT: ..." for warnings; FERRY_TRT_VERBOSE=1
// adds info, verbose and error messages.
#pragma once

#include <memory>
#include <string>

#include "ferry/engines/engine.hpp"
#include "ferry/engines/model_engine.hpp"

namespace ferry {

// Loads the plan at `path` on `options.device`. Its name() is "trt:PATH".
[[nodiscard]] std::unique_ptr<engine> load_tensorrt_engine(const std::string& path,
                                                           const model_engine_options& options);

}  // namespace ferry
