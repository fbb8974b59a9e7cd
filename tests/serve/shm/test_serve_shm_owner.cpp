// A shared-memory region belongs to the client that registered it: another user's client does not
// find it for a request, see it in the status, or unregister it (not_found, as for a region that
// does not exist), and may use the same name for a region of its own; a client elsewhere has no
// system regions at all. The user behind a loopback client comes from the socket tables, where rows
// that name no user, or disagree, give none.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "serve/shm/region_table.hpp"
#include "serve/shm/shm_registry.hpp"
#include "serve/shm/shm_resolution.hpp"
#include "serve/vocabulary/peer_identity.hpp"
#include "serve/vocabulary/request_error.hpp"
#include "serve/vocabulary/shm_client.hpp"
#include "support/serve_errors.hpp"

namespace {

using namespace ferry::serve;

using ferry::serve::testing::error_of;

// A POSIX shared-memory object of one page owned by `uid` (chown needs root), unlinked at the end.
class owned_object {
 public:
  owned_object(const std::string& tag, uid_t uid) : key_("/ferry_owner_" + tag + "_" + std::to_string(getpid())) {
    const int fd = shm_open(key_.c_str(), O_CREAT | O_RDWR, 0600);
    EXPECT_GE(fd, 0);
    EXPECT_EQ(ftruncate(fd, 4096), 0);
    chowned_ = fchown(fd, uid, static_cast<gid_t>(-1)) == 0;
    close(fd);
  }
  ~owned_object() { shm_unlink(key_.c_str()); }
  owned_object(const owned_object&) = delete;
  owned_object& operator=(const owned_object&) = delete;
  [[nodiscard]] const std::string& key() const { return key_; }
  [[nodiscard]] bool chowned() const { return chowned_; }

 private:
  std::string key_;
  bool chowned_ = false;
};

constexpr unsigned nobody = 65534;

// A request of `client` reading input "x" from region `name`.
infer_request reading(const std::string& name, const std::optional<shm_client>& client) {
  infer_request request;
  request.inputs.push_back({"x", ferry::dtype::u8, {4}, {}, shm_ref{name, 0, 4}});
  request.client = client;
  return request;
}

void resolve(infer_request& request, const shm_registry& registry) {
  std::vector<output_destination> outputs;
  std::vector<std::shared_ptr<const void>> pins;
  resolve_shared_memory(request, registry, nullptr, outputs, pins);
}

TEST(ServeShmOwner, AnotherUsersRegionIsNotFoundAnywhere) {
  const owned_object theirs("root", getuid());
  const owned_object mine("nobody", nobody);
  if (!mine.chowned()) GTEST_SKIP() << "giving an object to uid 65534 needs root (this runs as uid " << getuid() << ")";
  const shm_client owner{"127.0.0.1", getuid()};
  const shm_client other{"127.0.0.1", nobody};
  shm_registry registry(cuda_registration::off);
  registry.register_region("data", theirs.key(), 0, 4096, owner);

  EXPECT_TRUE(registry.status({}, other).empty());  // neither its name nor its key
  const auto missing = error_status::not_found;
  EXPECT_EQ(error_of([&] { (void)registry.status("data", other); }, missing),
            "no shared-memory region 'data' is registered");
  auto request = reading("data", other);
  EXPECT_EQ(error_of([&] { resolve(request, registry); }, missing),
            "input 'x': shared-memory region 'data' is not registered");
  EXPECT_EQ(error_of([&] { registry.unregister_region("data", other); }, missing),
            "no shared-memory region 'data' is registered");
  registry.unregister_all(other);  // its own: none
  EXPECT_FALSE(registry.contains("data", other));

  // The same name for a region of its own; each sees its own.
  registry.register_region("data", mine.key(), 0, 4096, other);
  ASSERT_EQ(registry.status({}, other).size(), 1U);
  EXPECT_EQ(registry.status({}, other)[0].key, mine.key());
  EXPECT_EQ(registry.status("data", owner)[0].key, theirs.key());
  auto own_request = reading("data", other);
  resolve(own_request, registry);
  auto owner_request = reading("data", owner);
  resolve(owner_request, registry);
  EXPECT_NE(own_request.inputs[0].data.data(), owner_request.inputs[0].data.data());  // two mappings
  registry.unregister_all(other);
  EXPECT_EQ(registry.usage().registered, 1U);  // the owner's stays
  EXPECT_EQ(registry.status({}, owner).size(), 1U);
}

TEST(ServeShmOwner, TheServersOwnCallerAndClientsDoNotShareRegions) {
  const owned_object object("self", getuid());
  shm_registry registry(cuda_registration::off);
  registry.register_region("r", object.key(), 0, 4096);  // the server's own caller
  const shm_client client{"127.0.0.1", getuid()};
  EXPECT_TRUE(registry.status({}, client).empty());
  EXPECT_EQ(registry.status().size(), 1U);
  auto request = reading("r", client);
  EXPECT_NE(error_of([&] { resolve(request, registry); }, error_status::not_found).find("is not registered"),
            std::string::npos);
}

TEST(ServeShmOwner, AClientElsewhereHasNoSystemRegions) {
  const owned_object object("remote", getuid());
  shm_registry registry(cuda_registration::off);
  registry.register_region("r", object.key(), 0, 4096);
  const shm_client remote{"10.0.0.5", std::nullopt};
  const auto refused = error_status::forbidden;
  const std::string why =
      "system shared memory is for clients on this machine: the client (10.0.0.5) is not a "
      "process of this machine, whose shared memory it could not share";
  EXPECT_EQ(error_of([&] { registry.register_region("q", object.key(), 0, 4096, remote); }, refused), why);
  EXPECT_EQ(error_of([&] { (void)registry.status({}, remote); }, refused), why);
  EXPECT_EQ(error_of([&] { registry.unregister_region("r", remote); }, refused), why);
  EXPECT_EQ(error_of([&] { registry.unregister_all(remote); }, refused), why);
  auto request = reading("r", remote);
  EXPECT_EQ(error_of([&] { resolve(request, registry); }, refused), why);
  EXPECT_FALSE(registry.contains("r", remote));
  EXPECT_EQ(registry.usage().registered, 1U);
}

// The table both registries keep (the CUDA one needs a GPU to register): filed by owner.
TEST(ServeShmOwner, TheTableFilesRegionsByOwner) {
  struct stand_in {
    int status = 0;
  };
  region_table<stand_in, int> table("CUDA shared-memory region", 8, "--max-cuda-shm-regions");
  auto a = std::make_shared<stand_in>();
  a->status = 1;
  auto b = std::make_shared<stand_in>();
  b->status = 2;
  table.insert("uid 1", "g", a);
  table.insert("uid 2", "g", b);  // the same name, another owner
  table.insert("uid 10", "h", std::make_shared<stand_in>());
  EXPECT_EQ(table.status("uid 1", ""), std::vector<int>{1});  // not "uid 10"'s, whose owner sorts after
  EXPECT_EQ(table.status("uid 2", "g"), std::vector<int>{2});
  EXPECT_EQ(table.find("uid 1", "g", "input 'x'").get(), a.get());
  EXPECT_EQ(error_of([&] { (void)table.find("uid 3", "g", "input 'x'"); }, error_status::not_found),
            "input 'x': CUDA shared-memory region 'g' is not registered");
  EXPECT_EQ(error_of([&] { table.erase("uid 3", "g"); }, error_status::not_found),
            "no CUDA shared-memory region 'g' is registered");
  table.clear("uid 1");
  EXPECT_FALSE(table.contains("uid 1", "g"));
  EXPECT_TRUE(table.contains("uid 2", "g"));
  EXPECT_TRUE(table.contains("uid 10", "h"));
  EXPECT_EQ(table.usage().registered, 2U);
}

TEST(ServeShmOwner, NamesOwnersByUserOrAddress) {
  EXPECT_EQ(region_owner(shm_client{"127.0.0.1", 1000U}), "uid 1000");
  EXPECT_EQ(region_owner(shm_client{"::1", 1000U}), "uid 1000");  // one user, whichever address
  EXPECT_EQ(region_owner(shm_client{"10.0.0.5", std::nullopt}), "host 10.0.0.5");
  EXPECT_EQ(region_owner(std::nullopt), "");
  EXPECT_EQ(grpc_shm_client("unix:/tmp/socket", 8001).address, "unix:/tmp/socket");
  EXPECT_FALSE(grpc_shm_client("unix:/tmp/socket", 8001).uid.has_value());
}

// Rows as the kernel prints them on a little-endian machine: 127.0.0.1:50000 -> 0100007F:C350.
TEST(ServeShmOwner, RowsThatNameNoUserOrDisagreeGiveNone) {
  const std::string head =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n";
  const std::string established =
      "   1: 0100007F:C350 0100007F:1F41 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0 20 4 0 10 -1\n";
  const std::string time_wait =
      "   2: 0100007F:C350 0100007F:1F41 06 00000000:00000000 03:00000F8A 00000000     0        0 0 3 0\n";
  // Another user's socket on the same local end (SO_REUSEADDR), connected to port 8001 elsewhere.
  const std::string elsewhere =
      "   3: 0100007F:C350 0500000A:1F41 01 00000000:00000000 00:00000000 00000000     0        0 5 1 0 20 4 0 10 -1\n";
  const peer_endpoint client{"127.0.0.1", 50000, 8001, ""};
  EXPECT_EQ(find_socket_owner(head + time_wait + established, client), 1000U);  // TIME_WAIT's uid 0 is no user
  EXPECT_FALSE(find_socket_owner(head + time_wait, client).has_value());
  EXPECT_FALSE(find_socket_owner(head + established + elsewhere, client).has_value());
}

TEST(ServeShmOwner, ReadsEscapedIpv6GrpcPeers) {
  const auto escaped = parse_grpc_peer("ipv6:%5B::1%5D:40000", 8001);
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->address, "::1");
  EXPECT_EQ(escaped->port, 40000);
  EXPECT_FALSE(parse_grpc_peer("ipv6:%5B::1:40000", 8001).has_value());
}

}  // namespace
