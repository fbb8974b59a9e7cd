"""One host cannot lock out the others: connections are capped per client address as well as in
all, and a request's headers have a deadline of their own.

Once, 1,024 sockets from one host trickling a byte every 4 s made every new HTTP connection get
503, from any host, for as long as they kept reconnecting; headers could take the whole minute
a request is given."""
import socket
import threading
import time
import unittest

from ferry_server import ServerTestCase, read_answer, wait_for

MAX_CONNECTIONS = 40
PER_PEER = 10
HEADER_TIMEOUT_S = 1.0
TRICKLE = b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: slow\r\nX-Slow: " + b"a" * 4096


class FairClients(ServerTestCase):
    server_args = ("--http-max-connections", str(MAX_CONNECTIONS),
                   "--http-max-connections-per-peer", str(PER_PEER),
                   "--http-header-timeout-ms", str(int(HEADER_TIMEOUT_S * 1000)))

    def probe(self, source):
        """GET /v2/health/live on a new connection from `source`: (status, headers, body)."""
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10, source_address=(source, 0))
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: p\r\nConnection: close\r\n\r\n")
        answer = read_answer(s, 10)
        s.close()
        return answer

    def setUp(self):
        # The server notices the previous test's closed sockets when it next reads them; until
        # then they count against both limits (slowly, under a sanitizer).
        self.assertTrue(wait_for(lambda: self.probe("127.0.0.1")[0] == 200, 10),
                        "the previous test's connections were not released")

    def test_a_trickling_host_is_capped_and_others_are_served(self):
        stop = threading.Event()
        sockets = []

        def trickle():
            k = 0
            while not stop.wait(0.2):
                for s in list(sockets):
                    try:
                        s.send(TRICKLE[k:k + 1])
                    except OSError:
                        pass
                k += 1

        # As many trickling connections from 127.0.0.1 as the whole server takes.
        for _ in range(MAX_CONNECTIONS):
            sockets.append(socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10))
        sender = threading.Thread(target=trickle)
        sender.start()
        try:
            time.sleep(0.3)
            status, headers, body = self.probe("127.0.0.1")
            self.assertEqual(status, 503)
            self.assertEqual(headers.get("retry-after"), "1")
            self.assertIn(f"this client address (127.0.0.1, network 127.0.0.0/24) has the limit of {PER_PEER} HTTP "
                          "connections", body.decode())
            # Other networks (a /24 each) are served.
            for other in ("127.0.1.2", "127.0.2.3"):
                status, _, body = self.probe(other)
                self.assertEqual(status, 200, body)
        finally:
            stop.set()
            sender.join()
            for s in sockets:
                s.close()

    def test_headers_must_arrive_within_their_deadline(self):
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10)
        start = time.monotonic()
        stop = threading.Event()

        def trickle():
            for k in range(len(TRICKLE)):
                if stop.wait(0.05):
                    return
                try:
                    s.send(TRICKLE[k:k + 1])
                except OSError:
                    return

        sender = threading.Thread(target=trickle)
        sender.start()
        status, headers, body = read_answer(s, 30)
        took = time.monotonic() - start
        stop.set()
        sender.join()
        s.close()
        self.assertEqual(status, 408)
        self.assertIn(f"headers did not arrive within {int(HEADER_TIMEOUT_S * 1000)} ms of its first byte",
                      body.decode())
        self.assertGreaterEqual(took, HEADER_TIMEOUT_S * 0.9)
        self.assertLess(took, HEADER_TIMEOUT_S + 5)


if __name__ == "__main__":
    unittest.main()
