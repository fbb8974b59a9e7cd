"""Starts `ferry serve` on free ports for a test module and stops it afterwards.

The binary comes from FERRY_BIN (set by ctest), the model repository from tests/serve/models.
The server prints the ports it bound ("HTTP on HOST:PORT", "gRPC on HOST:PORT"), then
"ferry serve: serving", so tests never race for a port.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "models")


class FerryServer:
    def __init__(self, *extra_args, repository=MODELS, env=None):
        """`env`: variables added to this process's environment for the server."""
        binary = os.environ.get("FERRY_BIN")
        if not binary:
            raise RuntimeError("FERRY_BIN is not set (run these tests through ctest)")
        # 127.0.0.1 (the server's default too) unless the test names another address.
        host = [] if any(a == "--host" or a.startswith("--host=") for a in extra_args) else ["--host", "127.0.0.1"]
        args = [binary, "serve", "--model-repository", repository, *host,
                "--http-port", "0", "--grpc-port", "0", *extra_args]
        self.process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env={**os.environ, **(env or {})})
        self.log = []
        self.http_port = None
        self.grpc_port = None
        ports_seen = threading.Event()

        def read_output():
            for line in self.process.stdout:
                self.log.append(line.rstrip("\n"))
                m = re.search(r"HTTP on [^ ]+:(\d+)", line)
                if m:
                    self.http_port = int(m.group(1))
                m = re.search(r"gRPC on [^ ]+:(\d+)", line)
                if m:
                    self.grpc_port = int(m.group(1))
                if "ferry serve: serving" in line:
                    ports_seen.set()
            ports_seen.set()

        self.reader = threading.Thread(target=read_output, daemon=True)
        self.reader.start()
        if not ports_seen.wait(60) or self.http_port is None:
            self.stop()
            raise RuntimeError("ferry serve did not start:\n" + "\n".join(self.log))

    @property
    def http_url(self):
        return f"127.0.0.1:{self.http_port}"

    @property
    def grpc_url(self):
        return f"127.0.0.1:{self.grpc_port}"

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        """Stops the server with SIGTERM; returns its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.reader.join(5)
        return self.process.returncode


def write_repository(models, prefix):
    """A temporary model repository: a folder per model name holding its config.json (the dicts of
    `models`). The caller removes it."""
    repository = tempfile.mkdtemp(prefix=prefix)
    for name, config in models.items():
        os.makedirs(os.path.join(repository, name))
        with open(os.path.join(repository, name, "config.json"), "w") as f:
            json.dump(config, f)
    return repository


def write_model(repository, name, config, files=None):
    """A model folder in `repository`: its config.json (`config`, text as written) and `files`
    beside it ({name: text}), for a test that needs a config no dict gives (key order, mistakes)."""
    folder = os.path.join(repository, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(config)
    for file, text in (files or {}).items():
        with open(os.path.join(folder, file), "w") as f:
            f.write(text)


def stop_and_remove(server, folder):
    """Stops `server` and removes `folder` whatever happens; fails when the server exited non-zero."""
    try:
        code = server.stop()
        if code != 0:
            raise AssertionError(f"ferry serve exited with {code}:\n" + "\n".join(server.log))
    finally:
        shutil.rmtree(folder)


class ServerTestCase(unittest.TestCase):
    """One server for all tests of a class; each test checks it is still alive afterwards."""

    server_args = ()

    @classmethod
    def setUpClass(cls):
        cls.server = FerryServer(*cls.server_args)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        if code != 0:
            raise AssertionError(f"ferry serve exited with {code}:\n" + "\n".join(cls.server.log))

    def tearDown(self):
        self.assertTrue(self.server.alive(), "ferry serve died:\n" + "\n".join(self.server.log))


def resident_mb(pid):
    """The process's resident memory (VmRSS) in MiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def thread_count(pid):
    return len(os.listdir(f"/proc/{pid}/task"))


def open_sockets(pid):
    """The sockets the process holds: its listeners, and the connections it has not yet seen close."""
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            count += os.readlink(f"/proc/{pid}/fd/{fd}").startswith("socket:")
        except OSError:
            pass  # closed while listed
    return count


# Set by scripts/test_sanitized.sh: the server runs under a sanitizer, whose allocator pads and
# quarantines memory (so memory bounds do not apply) and which makes everything several times
# slower (so tests scale their work down).
SANITIZED = bool(os.environ.get("FERRY_SANITIZER"))


def read_answer(sock, timeout):
    """Reads one HTTP answer (status line, headers, a body of its Content-Length) from a raw
    socket; returns (status, headers as a lowercase dict, body), or (None, {}, b"") when the
    connection ends or nothing comes within `timeout`."""
    sock.settimeout(timeout)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                return None, {}, b""
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(body) < length:
            chunk = sock.recv(65536)
            if not chunk:
                break
            body += chunk
        return int(lines[0].split()[1]), headers, body
    except OSError:
        return None, {}, b""


def wait_for(predicate, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def run_clients(count, body):
    """Runs body(index) on `count` threads at once and returns what went wrong, one line per
    failing client naming it, so a load test can assert the list is empty."""
    failures = []
    lock = threading.Lock()

    def guarded(index):
        try:
            body(index)
        except Exception as e:  # reported by the caller, with the client that saw it
            with lock:
                failures.append(f"client {index}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    return failures

