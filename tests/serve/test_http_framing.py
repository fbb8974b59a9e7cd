"""Request framing as strict as RFC 9112 §6, sent every case of request smuggling (RFC 9112 §11.2
and the literature: CL.TE, TE.CL, TE.TE obfuscations, two Content-Lengths, obs-fold, bare LF,
NUL, unbounded chunk extensions and trailers). A message two readers could frame differently is
refused (400, or 501 for a coding the server does not implement) with Connection: close, and
nothing after it on its connection is read: a request hidden in its body never runs, which the
touch model's success count shows.

Once, `Transfer-Encoding: xchunked` beside a body holding a second request got 400 and the hidden
request ran on the same connection (200); `chunked, identity` was kept open; 1 MiB of chunk
extensions and 10,000 trailers were accepted."""
import json
import socket
import unittest
import urllib.request

from ferry_server import ServerTestCase

# A valid inference: when it runs, touch's success count moves.
INFER_BODY = json.dumps({"inputs": [{"name": "input", "shape": [1024], "datatype": "FP32",
                                     "data": [1.0] * 1024}]}).encode()
HIDDEN = (b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\n"
          b"Content-Length: " + str(len(INFER_BODY)).encode() + b"\r\n\r\n" + INFER_BODY)
START = b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: s\r\nContent-Type: application/json\r\n"


def chunk(data):
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


LAST = b"0\r\n\r\n"

# name: (header lines of the first request, its body with the hidden request inside)
REFUSED = {
    "TE xchunked (the issue's)": (b"Transfer-Encoding: xchunked\r\n", HIDDEN),
    "TE chunked, identity": (b"Transfer-Encoding: chunked, identity\r\n", LAST + HIDDEN),
    "TE identity, chunked": (b"Transfer-Encoding: identity, chunked\r\n", LAST + HIDDEN),
    "TE gzip, chunked": (b"Transfer-Encoding: gzip, chunked\r\n", LAST + HIDDEN),
    "TE chunked, chunked": (b"Transfer-Encoding: chunked, chunked\r\n", LAST + HIDDEN),
    "TE x": (b"Transfer-Encoding: x\r\n", HIDDEN),
    "TE empty": (b"Transfer-Encoding: \r\n", HIDDEN),
    "TE chunked twice": (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "TE chunked then x": (b"Transfer-Encoding: chunked\r\nTransfer-Encoding: x\r\n", LAST + HIDDEN),
    "TE x then chunked": (b"Transfer-Encoding: x\r\nTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "TE with a space before the colon": (b"Transfer-Encoding : chunked\r\n", LAST + HIDDEN),
    "TE obs-fold": (b"Transfer-Encoding:\r\n chunked\r\n", LAST + HIDDEN),
    "TE line led by a space": (b"X: y\r\n Transfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "TE line led by a tab": (b"X: y\r\n\tTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "TE with a vertical tab": (b"Transfer-Encoding:\x0bchunked\r\n", LAST + HIDDEN),
    "TE chunked in HTTP/1.0": None,  # built below
    "CL.TE": (b"Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "TE.CL": (b"Transfer-Encoding: chunked\r\nContent-Length: 4\r\n", chunk(HIDDEN) + LAST),
    "CL beside TE xchunked": (b"Content-Length: 0\r\nTransfer-Encoding: xchunked\r\n", HIDDEN),
    "two Content-Lengths": (b"Content-Length: 0\r\nContent-Length: " + str(len(HIDDEN)).encode() + b"\r\n", HIDDEN),
    "two equal Content-Lengths": (b"Content-Length: 0\r\nContent-Length: 0\r\n", HIDDEN),
    "a Content-Length list": (b"Content-Length: 0, 0\r\n", HIDDEN),
    "Content-Length +0": (b"Content-Length: +0\r\n", HIDDEN),
    "Content-Length 0x0": (b"Content-Length: 0x0\r\n", HIDDEN),
    "Content-Length with a space inside": (b"Content-Length: 0 5\r\n", HIDDEN),
    "a bare LF ending a header": (b"X: y\nTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "a bare CR in a header": (b"X: y\rTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "a NUL in a header": (b"X: y\x00z\r\nTransfer-Encoding: chunked\r\n", LAST + HIDDEN),
    "1 MiB of chunk extensions": (b"Transfer-Encoding: chunked\r\n",
                                  b"1;" + b"e" * (1 << 20) + b"\r\nx\r\n" + LAST + HIDDEN),
    "10,000 trailers": (b"Transfer-Encoding: chunked\r\n",
                        b"1\r\nx\r\n0\r\n" + b"".join(b"T%d: t\r\n" % i for i in range(10000)) + b"\r\n" + HIDDEN),
}


def exchange(port, raw):
    """Sends `raw` on a new connection and reads until the server closes it: the status lines
    and heads of every answer it sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(raw)
    except OSError:
        pass  # the server answered and closed before taking all of it
    data = b""
    s.settimeout(10)
    try:
        while True:
            got = s.recv(65536)
            if not got:
                break
            data += got
    except OSError:
        pass
    s.close()
    heads = []
    while data.startswith(b"HTTP/1.") and b"\r\n\r\n" in data:
        head, _, data = data.partition(b"\r\n\r\n")
        heads.append(head)
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")[1:]
                       if line.lower().startswith(b"content-length:")), 0)
        data = data[length:]
    return heads


class Framing(ServerTestCase):

    def successes(self):
        with urllib.request.urlopen(f"http://{self.server.http_url}/v2/models/touch/stats") as answer:
            return json.loads(answer.read())["model_stats"][0]["inference_stats"]["success"]["count"]

    def test_a_request_hidden_in_a_refused_message_never_runs(self):
        cases = dict(REFUSED)
        before = self.successes()
        for name, case in cases.items():
            with self.subTest(name):
                if case is None:
                    raw = START.replace(b"HTTP/1.1", b"HTTP/1.0") + b"Transfer-Encoding: chunked\r\n\r\n" + LAST + HIDDEN
                else:
                    raw = START + case[0] + b"\r\n" + case[1]
                heads = exchange(self.server.http_port, raw)
                self.assertEqual(len(heads), 1, heads)
                self.assertRegex(heads[0], rb"^HTTP/1.1 (400|501) ")
                self.assertIn(b"\r\nConnection: close", heads[0])
        self.assertEqual(self.successes(), before, "a hidden request ran")
        # The hidden request does run when it is its own request: the count is what would show it.
        heads = exchange(self.server.http_port, HIDDEN.replace(b"Host: h\r\n", b"Host: h\r\nConnection: close\r\n"))
        self.assertEqual([h[:12] for h in heads], [b"HTTP/1.1 200"])
        self.assertEqual(self.successes(), before + 1)

    def test_framing_done_right_keeps_the_connection(self):
        # chunked in any case, with extensions within 4 KiB and a trailer: the next request runs.
        before = self.successes()
        raw = (START + b"Transfer-Encoding: CHUNKED\r\n\r\n" + chunk(INFER_BODY[:100]).replace(b"\r\n", b";e=1\r\n", 1) +
               chunk(INFER_BODY[100:]) + b"0\r\nX-Trailer: t\r\n\r\n" +
               HIDDEN.replace(b"Host: h\r\n", b"Host: h\r\nConnection: close\r\n"))
        heads = exchange(self.server.http_port, raw)
        self.assertEqual([h[:12] for h in heads], [b"HTTP/1.1 200", b"HTTP/1.1 200"])
        self.assertEqual(self.successes(), before + 2)

    def test_an_unimplemented_coding_is_named(self):
        s = socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10)
        s.sendall(START + b"Transfer-Encoding: gzip, chunked\r\n\r\n" + LAST)
        data = b""
        while b"}" not in data:
            got = s.recv(4096)
            if not got:
                break
            data += got
        s.close()
        self.assertTrue(data.startswith(b"HTTP/1.1 501"), data)
        self.assertEqual(json.loads(data.split(b"\r\n\r\n", 1)[1])["error"],
                         "Transfer-Encoding 'gzip, chunked': the transfer coding 'gzip' is not implemented by this "
                         "server: send the body 'chunked' alone")


if __name__ == "__main__":
    unittest.main()
