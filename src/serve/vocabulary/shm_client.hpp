// Who asks the server to use shared memory, and so whose regions it may see: a region belongs to
// the client that registered it. A process of this machine is known by the user owning its
// socket (peer_identity.hpp), whichever connection or protocol it uses; a client elsewhere only
// by its address, and it cannot share this machine's memory at all (system regions are refused
// to it; a CUDA region it registers is filed under its address).
//
// Regions are filed by owner: another owner's region is not found, listed or unregistered, and
// two owners may each have a region of the same name, so no client learns or blocks the names
// another uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ferry::serve {

struct peer_endpoint;

struct shm_client {
  std::string address;          // the client's address, without its port ("127.0.0.1", "::1", "10.1.2.3")
  std::optional<unsigned> uid;  // the user owning its socket, when it runs on this machine
};

// The client at the other end of a TCP connection: its uid from the kernel's socket tables.
[[nodiscard]] shm_client tcp_shm_client(const peer_endpoint& peer);

// The client of a gRPC call, from gRPC's peer text ("ipv4:127.0.0.1:5000") and the server's port.
// A peer that is no TCP address is a client elsewhere, known by that text.
[[nodiscard]] shm_client grpc_shm_client(std::string_view grpc_peer, std::uint16_t server_port);

// The owner a client's regions are filed under: "uid N" for a process of this machine, "host
// ADDRESS" for a client elsewhere, "" for the server's own caller (none: in-process use, as the
// tests make).
[[nodiscard]] std::string region_owner(const std::optional<shm_client>& client);

}  // namespace ferry::serve
