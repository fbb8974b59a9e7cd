// The device addresses a built-in context has been given, one per tensor of its concrete I/O.
// Checks what engine_context::bind promises to check (known name, 256-byte alignment) and what
// enqueue needs (everything bound), with messages that name the engine and the tensor.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::builtin {

class tensor_bindings {
 public:
  tensor_bindings(std::string engine_name, std::vector<std::string> tensor_names);

  // Throws invalid_argument for an unknown name (listing the valid ones), a null address or an
  // address that is not 256-byte aligned. Binding again replaces the address.
  void bind(std::string_view tensor, void* device_address);
  // Throws invalid_argument naming every tensor that has no address yet.
  void require_all_bound() const;

  // Addresses in the order of the names given at construction (null where unbound).
  [[nodiscard]] std::span<void* const> addresses() const noexcept { return addresses_; }
  template <typename T>
  [[nodiscard]] T* at(std::size_t index) const noexcept {
    return static_cast<T*>(addresses_[index]);
  }

 private:
  std::string engine_name_;
  std::vector<std::string> names_;
  std::vector<void*> addresses_;
};

}  // namespace ferry::builtin
