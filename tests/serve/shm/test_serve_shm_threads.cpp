// The system shared-memory registry used from several threads at once, as the HTTP and gRPC
// front ends use it: requests look regions up and read them while clients register and
// unregister. A request's pin must keep its region mapped however the registry changes. Under
// TSan (scripts/test_sanitized.sh tsan) this is also the registry's race test.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "serve/shm/shm_registry.hpp"
#include "serve/vocabulary/request_error.hpp"

namespace {

using namespace ferry::serve;

constexpr std::size_t region_bytes = 4096;

// A POSIX shared-memory object filled with a known pattern, unlinked at the end of the test.
class patterned_object {
 public:
  patterned_object() : key_("/ferry_test_threads_" + std::to_string(getpid())) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, static_cast<off_t>(region_bytes)), 0);
    void* data = mmap(nullptr, region_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    EXPECT_NE(data, MAP_FAILED);
    auto* bytes = static_cast<unsigned char*>(data);
    for (std::size_t i = 0; i < region_bytes; ++i) bytes[i] = pattern(i);
    munmap(data, region_bytes);
    close(fd);
  }
  ~patterned_object() { shm_unlink(key_.c_str()); }
  patterned_object(const patterned_object&) = delete;
  patterned_object& operator=(const patterned_object&) = delete;

  [[nodiscard]] const std::string& key() const { return key_; }
  static unsigned char pattern(std::size_t i) { return static_cast<unsigned char>(i * 7 + 3); }

 private:
  std::string key_;
};

TEST(ServeShmThreads, LookupsRacingRegistrationReadTheirPinnedRegion) {
  const patterned_object object;
  shm_registry registry(cuda_registration::off);
  registry.register_region("shared", object.key(), 0, region_bytes);

  constexpr int readers = 3;
  constexpr int reads_each = 400;
  std::atomic<bool> stop{false};
  std::atomic<int> found{0};
  std::atomic<int> not_registered{0};
  std::atomic<int> wrong_bytes{0};
  std::atomic<int> other_errors{0};

  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < reads_each; ++i) {
        std::vector<std::shared_ptr<const void>> pins;
        try {
          const auto bytes = registry.lookup(shm_ref{"shared", 0, region_bytes}, "input", pins);
          // Read every byte after lookup returned: the region may be unregistered meanwhile, and
          // the pin alone keeps it mapped.
          std::this_thread::yield();
          for (std::size_t k = 0; k < bytes.size(); ++k)
            if (static_cast<unsigned char>(bytes[k]) != patterned_object::pattern(k)) {
              ++wrong_bytes;
              break;
            }
          ++found;
        } catch (const request_error& e) {
          (e.status() == error_status::not_found ? not_registered : other_errors)++;
        }
      }
    });
  }
  // A client unregistering and registering the region again, and asking for the status.
  threads.emplace_back([&] {
    while (!stop) {
      try {
        registry.unregister_region("shared");
        (void)registry.status();
        registry.register_region("shared", object.key(), 0, region_bytes);
      } catch (const request_error&) {
        ++other_errors;
      }
    }
  });
  // Another client with regions of its own, which must not disturb the first one's.
  threads.emplace_back([&] {
    for (int i = 0; !stop; ++i) {
      const std::string name = "own" + std::to_string(i % 4);
      try {
        registry.register_region(name, object.key(), 0, 64);
        EXPECT_TRUE(registry.contains(name));
        registry.unregister_region(name);
      } catch (const request_error&) {
        ++other_errors;
      }
    }
  });
  for (int t = 0; t < readers; ++t) threads[static_cast<std::size_t>(t)].join();
  stop = true;
  for (std::size_t t = readers; t < threads.size(); ++t) threads[t].join();

  EXPECT_EQ(found + not_registered, readers * reads_each);
  EXPECT_GT(found, 0);
  EXPECT_EQ(wrong_bytes, 0);
  EXPECT_EQ(other_errors, 0);
  // Only the first client's region is left, registered once.
  const auto regions = registry.status();
  ASSERT_EQ(regions.size(), 1U);
  EXPECT_EQ(regions[0].name, "shared");
}

}  // namespace
