// Names from outside the server (model folders, shared-memory regions and keys) as untrusted bytes,
// and who a client is: once, a folder or region named with byte 0xFF went raw into /metrics and
// made every gRPC index, statistics and shared-memory status answer fail to parse (INTERNAL for
// every client); the connection caps counted addresses one by one, so a /24 or a /64 held by one
// party counted as many clients.
#include <gtest/gtest.h>

#include <string>

#include "serve/admission/peer_group.hpp"
#include "serve/codec/client_json.hpp"
#include "serve/vocabulary/peer_identity.hpp"
#include "serve/vocabulary/safe_name.hpp"

namespace {

using namespace ferry::serve;

TEST(ServeNames, TakesPrintableUtf8) {
  for (const std::string name : {"touch", "resnet50_onnx-v2.1", "modèle", "模型", "a b", "emoji-\xf0\x9f\x98\x80"})
    EXPECT_FALSE(name_problem(name).has_value()) << name;
}

TEST(ServeNames, RefusesWhatIsNotPrintableUtf8SayingWhy) {
  EXPECT_EQ(name_problem(""), "is empty");
  EXPECT_EQ(name_problem(std::string(256, 'a')), "has 256 bytes, more than the 255 a name may have");
  EXPECT_EQ(name_problem("ab\xff"), "is not valid UTF-8 (byte 0xff at offset 2)");
  EXPECT_EQ(name_problem("\xc0\xaf"), "is not valid UTF-8 (byte 0xc0 at offset 0)");      // overlong '/'
  EXPECT_EQ(name_problem("\xed\xa0\x80"), "is not valid UTF-8 (byte 0xed at offset 0)");  // a surrogate
  EXPECT_EQ(name_problem("\xe6\xa8"), "is not valid UTF-8 (byte 0xe6 at offset 0)");      // cut short
  EXPECT_EQ(name_problem(std::string("a\0b", 3)), "holds U+0000, a control character");
  EXPECT_EQ(name_problem("a\nb"), "holds U+000A, a control character");
  EXPECT_EQ(name_problem("a\xc2\x85"), "holds U+0085, a control character");
  EXPECT_EQ(name_problem("admin\xe2\x80\xae"), "holds U+202E, an invisible or bidirectional formatting character");
  EXPECT_EQ(name_problem("a\xe2\x80\x8b"), "holds U+200B, an invisible or bidirectional formatting character");
  EXPECT_EQ(name_problem("a\xef\xbf\xbe"), "holds U+FFFE, a Unicode noncharacter");
  EXPECT_EQ(name_problem("../x"), "holds U+002F, a character that separates paths or quotes text");
  EXPECT_EQ(name_problem("a\\b"), "holds U+005C, a character that separates paths or quotes text");
}

TEST(ServeNames, PrintsEveryNameAsValidUtf8AndNoTwoAlike) {
  EXPECT_EQ(printable_name("touch"), "touch");
  EXPECT_EQ(printable_name("modèle"), "modèle");
  EXPECT_EQ(printable_name("bad\xffname"), "bad\\xffname");
  EXPECT_EQ(printable_name("bad\nname"), "bad\\x0aname");
  EXPECT_EQ(printable_name("a\xe2\x80\xae"), "a\\xe2\\x80\\xae");
  // A backslash is escaped too: the name "bad\xffname" written out is not the one with byte 0xff.
  EXPECT_EQ(printable_name("bad\\xffname"), "bad\\x5cxffname");
  for (const std::string raw : {"\xff", "a\x80", "\xc3", "x\xf4\x90\x80\x80"})
    EXPECT_EQ(printable_name(raw).find_first_of("\x80\xff"), std::string::npos) << raw;
}

TEST(ServeNames, QuotesClientsTextAsValidUtf8) {
  EXPECT_EQ(quote_text("go\xffod"), "go\\xffod");
  EXPECT_EQ(quote_text("modèle"), "modèle");
  EXPECT_EQ(quote_text(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(quote_text("a\xc2\x85"), "a\\xc2\\x85");
  // Cut inside a character: its first bytes are shown escaped, never half a character.
  EXPECT_EQ(quote_text("ab\xc3\xa9", 3), "ab\\xc3...");
}

TEST(ServePeerGroups, CountsAPrefixAsOnePeer) {
  EXPECT_EQ(peer_group("10.1.2.77", 24, 64), "10.1.2.0/24");
  EXPECT_EQ(peer_group("10.1.2.77", 32, 64), "10.1.2.77/32");
  EXPECT_EQ(peer_group("10.1.2.77", 20, 64), "10.1.0.0/20");
  EXPECT_EQ(peer_group("::ffff:10.1.2.77", 24, 64), "10.1.2.0/24");  // a dual-stack socket's IPv4 client
  EXPECT_EQ(peer_group("2001:db8:0:1:abcd::1", 24, 64), "2001:db8:0:1::/64");
  EXPECT_EQ(peer_group("2001:db8:0:1:abcd::1", 24, 128), "2001:db8:0:1:abcd::1/128");
  EXPECT_EQ(peer_group("not an address", 24, 64), "not an address");
}

TEST(ServePeerIdentity, ReadsGrpcPeers) {
  const auto v4 = parse_grpc_peer("ipv4:127.0.0.1:5000", 8001);
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->address, "127.0.0.1");
  EXPECT_EQ(v4->port, 5000);
  EXPECT_EQ(v4->server_port, 8001);
  const auto v6 = parse_grpc_peer("ipv6:[::1]:40000", 8001);
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->address, "::1");
  EXPECT_FALSE(parse_grpc_peer("unix:/tmp/socket", 8001).has_value());
  EXPECT_FALSE(parse_grpc_peer("ipv4:127.0.0.1:99999", 8001).has_value());
  EXPECT_FALSE(parse_grpc_peer("ipv6:::1:5", 8001).has_value());
}

// Lines as the kernel prints them on a little-endian machine: 127.0.0.1:50000 -> 0100007F:C350.
TEST(ServePeerIdentity, FindsTheOwnerOfAClientsSocketInTheTables) {
  const std::string tcp =
      "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
      "   0: 0100007F:1F41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0 100 0 0 10 0\n"
      "   1: 0100007F:C350 0100007F:1F41 01 00000000:00000000 00:00000000 00000000  1000        0 2 1 0 20 4 0 10 -1\n"
      "   2: 0100007F:C351 0100007F:1F40 01 00000000:00000000 00:00000000 00000000  2000        0 3 1 0 20 4 0 10 -1\n";
  EXPECT_EQ(find_socket_owner(tcp, {"127.0.0.1", 50000, 8001, ""}), 1000U);
  EXPECT_EQ(find_socket_owner(tcp, {"127.0.0.1", 50001, 8000, ""}), 2000U);
  EXPECT_FALSE(find_socket_owner(tcp, {"127.0.0.1", 50001, 8001, ""}).has_value());  // to another port
  EXPECT_FALSE(find_socket_owner(tcp, {"10.0.0.1", 50000, 8001, ""}).has_value());   // not of this machine
  // A dual-stack client: an IPv6 socket on the v4-mapped address.
  const std::string tcp6 =
      "  sl  local_address                         remote_address                        st tx_queue rx_queue "
      "tr tm->when retrnsmt   uid  timeout inode\n"
      "   5: 0000000000000000FFFF00000100007F:D1B6 0000000000000000FFFF00000100007F:AB85 01 00000000:00000000 "
      "00:00000000 00000000  1234        0 223025 3 0 20 4 27 15 -1\n";
  EXPECT_EQ(find_socket_owner(tcp6, {"127.0.0.1", 0xD1B6, 0xAB85, ""}), 1234U);
  EXPECT_EQ(find_socket_owner(tcp6, {"::ffff:127.0.0.1", 0xD1B6, 0xAB85, ""}), 1234U);
}

}  // namespace
