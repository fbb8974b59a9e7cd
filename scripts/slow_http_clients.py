#!/usr/bin/env python3
"""Measures whether slow or idle HTTP connections keep `ferry serve` from answering others.

Two scenarios against a running server (standard library only):
  trickle  N connections each send a request one byte per interval and never finish it; once
           they are all open, P probes (GET /v2/health/live, each on its own new connection) are
           sent one after another, each given --probe-timeout seconds.
  idle     N connections are opened and send nothing; then one probe is timed.

Prints one line per scenario: how many probes were answered in time and how long each took.

  scripts/slow_http_clients.py --port 8000 trickle --connections 128
  scripts/slow_http_clients.py --port 8000 idle --connections 500
"""
import argparse
import socket
import threading
import time

PROBE = b"GET /v2/health/live HTTP/1.1\r\nHost: probe\r\nConnection: close\r\n\r\n"
# A request that never ends: its headers trickle in one byte at a time.
TRICKLE = b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: slow\r\n" + b"X-Slow: " + b"a" * 4096


def connect(host, port, timeout):
    s = socket.create_connection((host, port), timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def probe(host, port, timeout):
    """Seconds until a complete status line arrived, or None when none came within `timeout`."""
    start = time.monotonic()
    try:
        s = connect(host, port, timeout)
        s.settimeout(max(0.01, timeout - (time.monotonic() - start)))
        s.sendall(PROBE)
        got = b""
        while b"\r\n" not in got:
            chunk = s.recv(4096)
            if not chunk:
                return None
            got += chunk
        s.close()
        return time.monotonic() - start if got.startswith(b"HTTP/1.1 200") else None
    except OSError:
        return None


def open_many(host, port, count):
    sockets = []
    for _ in range(count):
        sockets.append(connect(host, port, 10))
    return sockets


def report(name, connections, results, timeout):
    answered = [r for r in results if r is not None]
    times = ", ".join("%.3f s" % r if r is not None else "none in %.0f s" % timeout for r in results)
    print(f"{name}: {connections} connections; {len(answered)} of {len(results)} probes answered ({times})")


def trickle(args):
    sockets = open_many(args.host, args.port, args.connections)
    stop = threading.Event()

    def send_bytes():
        position = 0
        while not stop.is_set() and position < len(TRICKLE):
            for s in sockets:
                try:
                    s.send(TRICKLE[position:position + 1])
                except OSError:
                    pass  # closed by the server: that is its right
            position += 1
            stop.wait(args.interval)

    sender = threading.Thread(target=send_bytes, daemon=True)
    sender.start()
    time.sleep(args.settle)
    results = [probe(args.host, args.port, args.probe_timeout) for _ in range(args.probes)]
    stop.set()
    sender.join()
    for s in sockets:
        s.close()
    report("trickle", args.connections, results, args.probe_timeout)


def idle(args):
    sockets = open_many(args.host, args.port, args.connections)
    time.sleep(args.settle)
    results = [probe(args.host, args.port, args.probe_timeout) for _ in range(args.probes)]
    for s in sockets:
        s.close()
    report("idle", args.connections, results, args.probe_timeout)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--settle", type=float, default=0.5, help="seconds between opening and probing")
    sub = parser.add_subparsers(dest="scenario", required=True)
    t = sub.add_parser("trickle")
    t.add_argument("--connections", type=int, default=128)
    t.add_argument("--interval", type=float, default=1.0, help="seconds between bytes")
    t.add_argument("--probes", type=int, default=4)
    t.add_argument("--probe-timeout", type=float, default=8.0)
    t.set_defaults(run=trickle)
    i = sub.add_parser("idle")
    i.add_argument("--connections", type=int, default=500)
    i.add_argument("--probes", type=int, default=1)
    i.add_argument("--probe-timeout", type=float, default=30.0)
    i.set_defaults(run=idle)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
