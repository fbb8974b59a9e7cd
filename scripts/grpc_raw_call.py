"""One unary gRPC call over a bare HTTP/2 connection, sending its message from a buffer the caller
keeps (a memoryview slice per DATA frame, never a copy). grpcio copies a message into its own
buffer before it sends it, so eight concurrent calls of 1000 MiB cost that client 8 GB; sent from
here they cost the one buffer, and a client that measures the server does not crowd it out of
the machine.

The answer is not decoded (that would need HPACK's Huffman code): a call reports how many bytes
of answer DATA came back, whether the stream ended, and the RST_STREAM or GOAWAY code if one came.
What the server decided is read from its /metrics (success and failure counts by reason)."""
import socket
import struct
import threading

DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 3, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 0x4, 0x5
LARGEST_WINDOW = 2**31 - 1


def _frame(kind, flags, stream, payload=b""):
    """A frame's 9-byte header, for a payload of len(payload) bytes (or of `payload` bytes)."""
    length = payload if isinstance(payload, int) else len(payload)
    return struct.pack(">I", length)[1:] + bytes([kind, flags]) + struct.pack(">I", stream)


def _literal(name, value):
    """An HPACK literal header field without indexing, new name, no Huffman code."""
    def string(text):
        data = text.encode()
        assert len(data) < 127
        return bytes([len(data)]) + data
    return b"\x00" + string(name) + string(value)


class RawGrpcCall:
    """Sends `message` (bytes or memoryview) to `method` on 127.0.0.1:`port`; run() blocks until
    the server ends the stream, and returns {"answer_bytes", "ended", "reset", "goaway"}."""

    def __init__(self, port, method, message, timeout=600):
        self.port, self.method, self.message, self.timeout = port, method, memoryview(message), timeout
        self.lock = threading.Condition()
        self.send_lock = threading.Lock()
        self.connection_window = 65535
        self.stream_window = 65535
        self.peer_initial_window = 65535
        self.max_frame = 16384
        self.answer_bytes = 0
        self.ended = False
        self.reset = None
        self.goaway = None

    def _send(self, *parts):
        parts = [memoryview(p) for p in parts]
        with self.send_lock:
            while parts:
                sent = self.sock.sendmsg(parts)  # may send part of them
                while parts and sent >= len(parts[0]):
                    sent -= len(parts[0])
                    parts.pop(0)
                if parts:
                    parts[0] = parts[0][sent:]

    def run(self):
        self.sock = socket.create_connection(("127.0.0.1", self.port), timeout=self.timeout)
        try:
            # Our windows as large as they go: the answer is read and dropped, never throttled.
            settings = struct.pack(">HI", INITIAL_WINDOW_SIZE, LARGEST_WINDOW)
            self._send(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", _frame(SETTINGS, 0, 0, settings), settings,
                       _frame(WINDOW_UPDATE, 0, 0, 4), struct.pack(">I", LARGEST_WINDOW - 65535))
            headers = b"".join(_literal(n, v) for n, v in [
                (":method", "POST"), (":scheme", "http"), (":path", self.method), (":authority", "localhost"),
                ("content-type", "application/grpc"), ("te", "trailers")])
            self._send(_frame(HEADERS, END_HEADERS, 1, headers), headers)
            reader = threading.Thread(target=self._read, daemon=True)
            reader.start()
            self._write_message()
            reader.join(self.timeout)
        finally:
            self.sock.close()
        return {"answer_bytes": self.answer_bytes, "ended": self.ended, "reset": self.reset, "goaway": self.goaway}

    def _finished(self):
        return self.ended or self.reset is not None or self.goaway is not None

    def _write_message(self):
        prefix = b"\x00" + struct.pack(">I", len(self.message))
        pieces = [memoryview(prefix), self.message]
        total = len(prefix) + len(self.message)
        sent = 0
        while sent < total:
            with self.lock:
                while not self._finished() and min(self.connection_window, self.stream_window) <= 0:
                    self.lock.wait(self.timeout)
                if self._finished():
                    return  # answered (or refused) before the whole message went
                n = min(self.max_frame, self.connection_window, self.stream_window, total - sent)
                self.connection_window -= n
                self.stream_window -= n
            chunk, at = [], sent
            for piece_start, piece in ((0, pieces[0]), (len(prefix), pieces[1])):
                lo, hi = max(at, piece_start), min(sent + n, piece_start + len(piece))
                if lo < hi:
                    chunk.append(piece[lo - piece_start:hi - piece_start])
            sent += n
            try:
                self._send(_frame(DATA, END_STREAM if sent == total else 0, 1, n), *chunk)
            except OSError:
                return

    def _recv_exactly(self, n):
        out = bytearray()
        while len(out) < n:
            part = self.sock.recv(min(n - len(out), 1 << 20))
            if not part:
                raise ConnectionError("closed")
            out += part
        return bytes(out)

    def _read(self):
        try:
            while not self._finished():
                head = self._recv_exactly(9)
                length = int.from_bytes(head[:3], "big")
                kind, flags = head[3], head[4]
                stream = int.from_bytes(head[5:9], "big") & 0x7FFFFFFF
                payload = self._recv_exactly(length) if length else b""
                self._on_frame(kind, flags, stream, payload)
        except (OSError, ConnectionError):
            pass
        with self.lock:
            if not self._finished():
                self.goaway = "connection closed"
            self.lock.notify_all()

    def _on_frame(self, kind, flags, stream, payload):
        with self.lock:
            if kind == SETTINGS and not flags & ACK:
                self._on_settings(payload)
            elif kind == PING and not flags & ACK:
                self._send(_frame(PING, ACK, 0, payload), payload)
            elif kind == WINDOW_UPDATE:
                self._on_window_update(stream, int.from_bytes(payload[:4], "big") & 0x7FFFFFFF)
            elif kind in (DATA, HEADERS):
                self.answer_bytes += len(payload) if kind == DATA else 0
                self.ended = self.ended or bool(flags & END_STREAM)
            elif kind == RST_STREAM:
                self.reset = int.from_bytes(payload[:4], "big")
            elif kind == GOAWAY and len(payload) >= 8:
                self.goaway = int.from_bytes(payload[4:8], "big")
            self.lock.notify_all()

    def _on_settings(self, payload):
        for i in range(0, len(payload), 6):
            key, value = struct.unpack(">HI", payload[i:i + 6])
            if key == INITIAL_WINDOW_SIZE:
                self.stream_window += value - self.peer_initial_window
                self.peer_initial_window = value
            elif key == MAX_FRAME_SIZE:
                self.max_frame = value
        self._send(_frame(SETTINGS, ACK, 0))

    def _on_window_update(self, stream, increment):
        if stream == 0:
            self.connection_window += increment
        else:
            self.stream_window += increment
