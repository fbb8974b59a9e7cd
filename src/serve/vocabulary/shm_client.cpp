#include "serve/vocabulary/shm_client.hpp"

#include "serve/vocabulary/peer_identity.hpp"

namespace ferry::serve {

shm_client tcp_shm_client(const peer_endpoint& peer) { return {peer.address, local_peer_uid(peer)}; }

shm_client grpc_shm_client(std::string_view grpc_peer, std::uint16_t server_port) {
  const auto endpoint = parse_grpc_peer(grpc_peer, server_port);
  if (!endpoint) return {std::string(grpc_peer), std::nullopt};
  return tcp_shm_client(*endpoint);
}

std::string region_owner(const std::optional<shm_client>& client) {
  if (!client) return {};
  if (client->uid) return "uid " + std::to_string(*client->uid);
  return "host " + client->address;
}

}  // namespace ferry::serve
