// Shared-memory registries without a GPU: POSIX regions map and every range is checked, also
// against an object the client shrank after registering it, and copies racing such a truncation
// fail instead of crashing; CUDA regions are refused, saying why; base64 raw handles decode.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <csignal>

#include <cstring>
#include <functional>
#include <string>

#include "ferry/core/error.hpp"
#include "serve/execution/batch_io.hpp"
#include "serve/shm/cuda_shm_registry.hpp"
#include "serve/shm/shm_guarded_copy.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;

using ferry::serve::testing::error_of;

// A POSIX shared-memory object of `bytes` bytes, unlinked at the end of the test.
class posix_object {
 public:
  explicit posix_object(std::size_t bytes) : key_("/ferry_test_" + std::to_string(getpid())) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    data_ = static_cast<std::byte*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    bytes_ = bytes;
    close(fd);
  }
  ~posix_object() {
    munmap(data_, bytes_);
    shm_unlink(key_.c_str());
  }
  [[nodiscard]] const std::string& key() const { return key_; }
  [[nodiscard]] std::byte* data() const { return data_; }

  // What a client may do at any time: shrink (or grow back) its object under the server.
  void resize(std::size_t bytes) const {
    const int fd = shm_open(key_.c_str(), O_RDWR, 0);
    ASSERT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(bytes)), 0);
    close(fd);
  }

 private:
  std::string key_;
  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
};

TEST(ServeSystemShm, RegistersResolvesAndChecksRanges) {
  const posix_object object(8192);
  shm_registry registry(cuda_registration::off);
  registry.register_region("r", object.key(), 4096, 4096);  // the second page only
  ASSERT_EQ(registry.status().size(), 1U);
  EXPECT_EQ(registry.status("r")[0].offset, 4096U);

  std::memcpy(object.data() + 4096 + 16, "ferry", 5);
  infer_request request;
  request.inputs.push_back({"x", ferry::dtype::u8, {5}, {}, shm_ref{"r", 16, 5}});
  request.outputs.push_back({"y", shm_ref{"r", 100, 8}});
  request.outputs.push_back({"z", std::nullopt});
  std::vector<output_destination> outputs;
  std::vector<std::shared_ptr<const void>> pins;
  resolve_shared_memory(request, registry, nullptr, outputs, pins);
  EXPECT_EQ(std::memcmp(request.inputs[0].data.data(), "ferry", 5), 0);
  EXPECT_FALSE(request.inputs[0].cuda_device.has_value());
  ASSERT_EQ(outputs.size(), 2U);
  ASSERT_EQ(outputs[0].bytes.size(), 8U);
  EXPECT_FALSE(outputs[0].cuda_device.has_value());
  std::memcpy(outputs[0].bytes.data(), "outputs!", 8);  // the registry's mapping is the client's memory
  EXPECT_EQ(std::memcmp(object.data() + 4096 + 100, "outputs!", 8), 0);
  EXPECT_TRUE(outputs[1].empty());
  EXPECT_EQ(pins.size(), 2U);

  const auto resolve = [&](shm_ref ref) {
    return [&registry, ref] {
      infer_request q;
      q.inputs.push_back({"x", ferry::dtype::u8, {1}, {}, ref});
      std::vector<output_destination> o;
      std::vector<std::shared_ptr<const void>> p;
      resolve_shared_memory(q, registry, nullptr, o, p);
    };
  };
  const auto bad = error_status::bad_request;
  EXPECT_NE(error_of(resolve({"r", 4000, 97}), bad).find("outside region 'r' of 4096 bytes"), std::string::npos);
  EXPECT_NE(error_of(resolve({"r", SIZE_MAX, 2}), bad).find("outside"), std::string::npos);
  EXPECT_NE(error_of(resolve({"r", 1, SIZE_MAX}), bad).find("outside"), std::string::npos);
  EXPECT_NE(error_of(resolve({"q", 0, 1}), error_status::not_found).find("'q' is not registered"), std::string::npos);

  EXPECT_NE(error_of([&] { registry.register_region("r", object.key(), 0, 16); }, bad).find("already registered"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { registry.register_region("s", object.key(), 8000, 512); }, bad).find("exceeds the 8192 bytes"),
      std::string::npos);
  EXPECT_NE(error_of([&] { registry.register_region("s", "/ferry_no_such_key", 0, 16); }, bad).find("cannot open key"),
            std::string::npos);
  EXPECT_NE(error_of([&] { registry.register_region("s", object.key(), 0, 0); }, bad).find("byte_size is 0"),
            std::string::npos);

  registry.unregister_region("r");
  EXPECT_TRUE(registry.status().empty());
  // The pinned request still reads its (still mapped) bytes after the unregister.
  EXPECT_EQ(std::memcmp(request.inputs[0].data.data(), "ferry", 5), 0);
  EXPECT_NE(
      error_of([&] { registry.unregister_region("r"); }, error_status::not_found).find("no shared-memory region 'r'"),
      std::string::npos);
}

TEST(ServeSystemShm, RefusesAKeyWithANulByte) {
  // shm_open() reads the key up to the NUL: this one would open `object` itself, unnamed.
  const posix_object object(4096);
  shm_registry registry(cuda_registration::off);
  const std::string key = object.key() + std::string("\0other", 6);
  EXPECT_NE(error_of([&] { registry.register_region("r", key, 0, 16); }).find("holds U+0000, a control character"),
            std::string::npos);
  EXPECT_TRUE(registry.status().empty());
  registry.register_region("r", object.key(), 0, 16);
  EXPECT_EQ(registry.status().size(), 1U);
}

// One u8 input in region `region`, resolved against `registry` as a request would be.
struct shm_input_request {
  infer_request request;
  std::vector<output_destination> outputs;
  std::vector<std::shared_ptr<const void>> pins;

  shm_input_request(const shm_registry& registry, shm_ref ref) {
    const auto bytes = static_cast<std::int64_t>(ref.byte_size);
    request.inputs.push_back({"x", ferry::dtype::u8, {bytes}, {}, ref});
    request.outputs.push_back({"y", ref});
    resolve_shared_memory(request, registry, nullptr, outputs, pins);
  }
};

TEST(ServeSystemShm, RefusesARangeOfAnObjectShrunkSinceRegistration) {
  const posix_object object(8192);
  shm_registry registry(cuda_registration::off);
  registry.register_region("r", object.key(), 4096, 4096);
  const auto resolve = [&](shm_ref ref) { return [&registry, ref] { shm_input_request q(registry, ref); }; };

  object.resize(4096 + 100);  // the range [0, 100) of the region still exists; [16, 116) does not
  EXPECT_NO_THROW(resolve({"r", 0, 100})());
  EXPECT_EQ(error_of(resolve({"r", 16, 100})),
            "input 'x': shared-memory region 'r' has shrunk: its object '" + object.key() +
                "' is now 4196 bytes, smaller than the region's offset + the range's offset + byte_size = 4096 + 16 "
                "+ 100 = 4212");
  object.resize(0);
  EXPECT_NE(error_of(resolve({"r", 0, 1})).find("is now 0 bytes"), std::string::npos);

  // Grown back, the region serves again, with what the client writes now.
  object.resize(8192);
  std::memcpy(object.data() + 4096 + 8, "again", 5);
  shm_input_request good(registry, {"r", 8, 5});
  EXPECT_EQ(std::memcmp(good.request.inputs[0].data.data(), "again", 5), 0);
}

TEST(ServeSystemShm, CopiesRacingATruncationFailInsteadOfCrashing) {
  const posix_object object(8192);
  shm_registry registry(cuda_registration::off);
  registry.register_region("r", object.key(), 0, 8192);
  std::memcpy(object.data() + 5000, "bytes", 5);
  shm_input_request q(registry, {"r", 5000, 5});  // checked: the object is whole
  request_plan plan;
  infer_response response;
  std::vector<batch_item> batch{{&q.request, &plan, &response, q.outputs}};
  std::vector<std::byte> engine_input(5);
  gather_input(batch, 0, engine_input, gathered_for::host);
  EXPECT_EQ(std::memcmp(engine_input.data(), "bytes", 5), 0);

  object.resize(4096);  // after the check, before the copy: the range's page is gone
  try {
    gather_input(batch, 0, engine_input, gathered_for::device);
    ADD_FAILURE() << "a read of a truncated region succeeded";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("input 'x': its shared-memory region 'r' shrank"), std::string::npos)
        << e.what();
  }
  const std::vector<ferry::tensor_spec> outputs{{"y", ferry::dtype::u8, {5}, ferry::tensor_role::output, std::nullopt}};
  const std::vector<std::span<const std::byte>> sources{std::as_bytes(std::span("12345", 5))};
  const auto signature =
      make_signature({{"x", ferry::dtype::u8, {5}, ferry::tensor_role::input, std::nullopt}, outputs[0]}, 0, "m");
  plan.outputs = {0};
  EXPECT_THROW(scatter_outputs(batch, signature, outputs, sources), ferry::invalid_argument);
  std::vector<std::byte> into(5);
  EXPECT_FALSE(copy_from_client_memory(into, std::span(q.request.inputs[0].data)));

  // The thread that caught the faults copies as before once the object is whole again.
  object.resize(8192);
  std::memcpy(object.data() + 5000, "fresh", 5);
  gather_input(batch, 0, engine_input, gathered_for::host);
  EXPECT_EQ(std::memcmp(engine_input.data(), "fresh", 5), 0);
  response.outputs.clear();
  scatter_outputs(batch, signature, outputs, sources);
  EXPECT_EQ(std::memcmp(object.data() + 5000, "12345", 5), 0);
}

// The handler catches faults of guarded copies only: any other SIGBUS still ends the process.
TEST(ServeSystemShmDeathTest, ASigbusOutsideAGuardedCopyStillKillsTheProcess) {
  const posix_object object(8192);
  std::vector<std::byte> into(1);
  EXPECT_TRUE(copy_from_client_memory(into, std::span(object.data(), 1)));  // the handler is installed
  object.resize(0);
  EXPECT_FALSE(copy_from_client_memory(into, std::span(object.data(), 1)));
  EXPECT_EXIT(
      {
        volatile const std::byte* gone = object.data();
        (void)*gone;
      },
      ::testing::KilledBySignal(SIGBUS), "");
}

// Registering the same small object again and again once exhausted the server's mappings; now
// the registry stops at its limit, says so, and serves the regions it has.
TEST(ServeSystemShm, RefusesRegistrationsPastItsLimitAndKeepsServing) {
  const posix_object object(4096);
  shm_registry registry(cuda_registration::off, 3);
  for (const char* name : {"a", "b", "c"}) registry.register_region(name, object.key(), 0, 64);
  EXPECT_EQ(registry.usage().registered, 3U);
  EXPECT_EQ(registry.usage().limit, 3U);
  EXPECT_EQ(error_of([&] { registry.register_region("d", object.key(), 0, 64); }, error_status::quota_exceeded),
            "cannot register shared-memory region 'd': 3 shared-memory regions are registered, this server's "
            "limit (--max-shm-regions); unregister one first");
  // A name already taken is still answered as such, full or not.
  EXPECT_NE(error_of([&] { registry.register_region("a", object.key(), 0, 64); }).find("already registered"),
            std::string::npos);
  EXPECT_EQ(registry.usage().registered, 3U);

  std::memcpy(object.data() + 8, "still", 5);
  shm_input_request q(registry, {"c", 8, 5});
  EXPECT_EQ(std::memcmp(q.request.inputs[0].data.data(), "still", 5), 0);
  registry.unregister_region("a");
  registry.register_region("d", object.key(), 0, 64);
  EXPECT_EQ(registry.usage().registered, 3U);
  registry.unregister_all();
  EXPECT_EQ(registry.usage().registered, 0U);
}

// The CUDA registry shares the table; without a GPU it is tested with stand-in regions.
TEST(ServeRegionTable, NamesTheKindAndTheSettingOfItsLimit) {
  struct stand_in {
    cuda_shm_region_status status;
  };
  region_table<stand_in, cuda_shm_region_status> table("CUDA shared-memory region", 1, "--max-cuda-shm-regions");
  table.insert("uid 1", "g", std::make_shared<stand_in>());
  EXPECT_EQ(error_of([&] { table.check_free("uid 1", "h"); }, error_status::quota_exceeded),
            "cannot register CUDA shared-memory region 'h': 1 CUDA shared-memory regions are registered, this "
            "server's limit (--max-cuda-shm-regions); unregister one first");
  // The limit is the server's, whoever holds the regions.
  EXPECT_EQ(error_of([&] { table.insert("uid 2", "h", std::make_shared<stand_in>()); }, error_status::quota_exceeded)
                .find("cannot register"),
            0U);
  table.erase("uid 1", "g");
  table.insert("uid 1", "h", std::make_shared<stand_in>());
  EXPECT_EQ(table.status("uid 1", "")[0].name, "");  // stand-ins carry an empty status
  EXPECT_EQ(table.usage().registered, 1U);
}

TEST(ServeCudaShm, RefusesRegistrationWithoutAGpuSayingWhy) {
  cuda_shm_registry registry(0, "no CUDA device: test");
  const std::string handle(64, '\0');
  EXPECT_NE(error_of([&] { registry.register_region("c", handle, 0, 64); }, error_status::unavailable)
                .find("needs a GPU and this server runs on the CPU (no CUDA device: test)"),
            std::string::npos);
  EXPECT_TRUE(registry.status().empty());
  EXPECT_FALSE(registry.contains("c"));
  EXPECT_EQ(error_of([&] { registry.unregister_region("c"); }, error_status::not_found).find("no CUDA"), 0U);
}

TEST(ServeCudaShm, ChecksHandleAndDeviceBeforeCallingCuda) {
  cuda_shm_registry registry(1, "");
  EXPECT_NE(error_of([&] { registry.register_region("c", std::string(10, 'x'), 0, 64); }, error_status::bad_request)
                .find("raw_handle has 10 bytes"),
            std::string::npos);
  EXPECT_NE(error_of([&] { registry.register_region("c", std::string(64, 'x'), 3, 64); }, error_status::bad_request)
                .find("device_id 3"),
            std::string::npos);
}

TEST(ServeBase64, DecodesAndRefusesMalformedText) {
  EXPECT_EQ(decode_base64(""), "");
  EXPECT_EQ(decode_base64("Zg=="), "f");
  EXPECT_EQ(decode_base64("Zm8="), "fo");
  EXPECT_EQ(decode_base64("Zm9v"), "foo");
  EXPECT_EQ(decode_base64("AP8A/w=="), std::string("\x00\xff\x00\xff", 4));
  // libb64's layout (perf_analyzer's CUDA IPC handles): a line break every 72 characters, one at the end
  EXPECT_EQ(decode_base64("Zm9v\nYmFy\r\n"), "foobar");
  EXPECT_EQ(decode_base64(std::string(72, 'A') + "\n" + std::string(16, 'A') + "\n"), std::string(66, '\0'));
  EXPECT_THROW((void)decode_base64("Zm9"), request_error);
  EXPECT_THROW((void)decode_base64("Zm=v"), request_error);
  EXPECT_THROW((void)decode_base64("Z!9v"), request_error);
}

}  // namespace
