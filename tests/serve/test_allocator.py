"""Which malloc `ferry serve` runs on: jemalloc where the system has it (it re-executes itself with
jemalloc preloaded, keeping its process id), glibc with one arena where it has not or where
FERRY_SERVE_MALLOC=glibc asks for it, and what the user set wins. The start lines say which."""
import os
import unittest

from ferry_server import SANITIZED, FerryServer

# Where the server looks besides its own ../lib (apps/ferry/serve_allocator.cpp).
SYSTEM_JEMALLOC = [p for p in ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/aarch64-linux-gnu/libjemalloc.so.2",
                               "/usr/lib64/libjemalloc.so.2", "/usr/local/lib/libjemalloc.so.2") if os.path.exists(p)]


def allocator_line(server):
    return next((line for line in server.log if "memory from" in line), None)


def started(env=None):
    """(whether the process the test started maps jemalloc, the start line, the exit code)."""
    server = FerryServer(env=env)
    try:
        with open(f"/proc/{server.process.pid}/maps") as maps:
            mapped = "libjemalloc" in maps.read()
        return mapped, allocator_line(server), server.stop()
    finally:
        server.stop()


class Allocator(unittest.TestCase):
    @unittest.skipIf(SANITIZED, "a sanitizer's runtime must be the first library: the server stays on glibc")
    @unittest.skipUnless(SYSTEM_JEMALLOC, "libjemalloc2 is not installed (scripts/setup.sh installs it)")
    def test_jemalloc_where_installed(self):
        mapped, line, code = started()
        self.assertEqual(code, 0)
        self.assertTrue(mapped, "the server's process does not map libjemalloc")
        self.assertIn("memory from jemalloc (MALLOC_CONF background_thread:true", line)

    @unittest.skipIf(SANITIZED, "a sanitizer's runtime must be the first library: the server stays on glibc")
    @unittest.skipUnless(SYSTEM_JEMALLOC, "libjemalloc2 is not installed (scripts/setup.sh installs it)")
    def test_the_users_malloc_conf_wins(self):
        _, line, _ = started({"MALLOC_CONF": "dirty_decay_ms:0"})
        self.assertEqual(line, "ferry serve: memory from jemalloc (MALLOC_CONF dirty_decay_ms:0)")

    def test_glibc_when_asked(self):
        mapped, line, code = started({"FERRY_SERVE_MALLOC": "glibc"})
        self.assertEqual(code, 0)
        self.assertFalse(mapped)
        self.assertEqual(line, "ferry serve: memory from glibc malloc, one arena")

    def test_the_users_arena_count_wins(self):
        _, line, _ = started({"FERRY_SERVE_MALLOC": "glibc", "MALLOC_ARENA_MAX": "4"})
        self.assertEqual(line, "ferry serve: memory from glibc malloc, MALLOC_ARENA_MAX 4")


if __name__ == "__main__":
    unittest.main()
