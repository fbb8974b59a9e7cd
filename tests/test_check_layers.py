"""scripts/check_layers.py on small fake trees: an upward include, a sibling include and an
unplaced public header fail, naming file:line and both layers; inside serve, a folder including a
higher floor, and a folder with no floor, fail; a tree that only includes downwards passes."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

CHECKER = Path(__file__).resolve().parent.parent / "scripts" / "check_layers.py"


def run_checker(files: dict[str, str]) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as root:
        for name, text in files.items():
            path = Path(root, name)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
        return subprocess.run([sys.executable, str(CHECKER), "--root", root], capture_output=True,
                              text=True, check=False)


BASE = {
    "include/ferry/core/error.hpp": "#pragma once\n",
    "include/ferry/engines/engine.hpp": '#pragma once\n#include "ferry/core/error.hpp"\n',
    "src/core/error.cpp": '#include "ferry/core/error.hpp"\n#include <vector>\n#include "third_party.h"\n',
    "src/engines/model_engine.cpp": '#include "ferry/engines/engine.hpp"\n#include "core/raii.hpp"\n',
    "src/core/raii.hpp": "#pragma once\n",
    "src/bench/cell.cpp": '#include "engines/local.hpp"\n',
    "src/engines/local.hpp": "#pragma once\n",
    "apps/ferry/main.cpp": '#include "commands.hpp"\n#include "serve/server.hpp"\n',
    "apps/ferry/commands.hpp": "#pragma once\n",
    "src/serve/server.hpp": '#pragma once\n#include "serve/transport/front.hpp"\n',
    "src/serve/transport/front.hpp": '#pragma once\n#include "serve/vocabulary/inference.hpp"\n',
    "src/serve/vocabulary/inference.hpp": "#pragma once\n",
}


class CheckLayers(unittest.TestCase):
    def test_includes_downwards_pass(self):
        result = run_checker(BASE)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertEqual(result.stdout, "")

    def test_an_upward_include_fails_naming_the_line_and_both_layers(self):
        result = run_checker({**BASE, "src/core/stream.cpp": '#include <cstdio>\n\n#include "engines/local.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/core/stream.cpp:3: core includes "engines/local.hpp" of engines (a higher layer)',
                      result.stdout)

    def test_a_public_header_counts_as_its_layer(self):
        result = run_checker({**BASE, "include/ferry/core/error.hpp": '#pragma once\n#include "ferry/engines/engine.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('include/ferry/core/error.hpp:2: core includes "ferry/engines/engine.hpp" of engines', result.stdout)

    def test_siblings_do_not_include_each_other(self):
        result = run_checker({**BASE, "src/serve/server.cpp": '#include "bench/cell.hpp"\n',
                              "src/bench/cell.hpp": "#pragma once\n"})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/serve/server.cpp:1: serve includes "bench/cell.hpp" of bench (a sibling)', result.stdout)

    def test_engines_do_not_include_memory(self):
        result = run_checker({**BASE, "src/memory/buffer.hpp": "#pragma once\n",
                              "src/engines/context.cpp": '#include "memory/buffer.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/engines/context.cpp:1: engines includes "memory/buffer.hpp" of memory (kept apart)',
                      result.stdout)

    def test_a_public_header_without_a_layer_fails(self):
        result = run_checker({**BASE, "include/ferry/new_thing.hpp": "#pragma once\n"})
        self.assertEqual(result.returncode, 1)
        self.assertIn("include/ferry/new_thing.hpp: a public header with no layer", result.stdout)
        result = run_checker({**BASE, "include/ferry/misc/new_thing.hpp": "#pragma once\n"})
        self.assertEqual(result.returncode, 1)
        self.assertIn("include/ferry/misc/new_thing.hpp: a public header with no layer", result.stdout)

    def test_a_public_header_takes_its_folders_layer(self):
        result = run_checker({**BASE, "include/ferry/session/session.hpp": "#pragma once\n",
                              "src/engines/engine.cpp": '#include "ferry/session/session.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/engines/engine.cpp:1: engines includes "ferry/session/session.hpp" of session',
                      result.stdout)

    def test_the_front_ends_share_frontend_and_not_each_other(self):
        shared = {**BASE, "include/ferry/frontend/bench_flags.hpp": '#pragma once\n#include "ferry/bench/matrix.hpp"\n',
                  "include/ferry/bench/matrix.hpp": "#pragma once\n",
                  "apps/ferry/bench_command.cpp": '#include "ferry/frontend/bench_flags.hpp"\n',
                  "python/src/bench.cpp": '#include "ferry/frontend/bench_flags.hpp"\n'}
        self.assertEqual(run_checker(shared).returncode, 0, run_checker(shared).stdout)
        result = run_checker({**shared, "python/src/devices.cpp": '#include "../../apps/ferry/commands.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('python/src/devices.cpp:1: python includes "../../apps/ferry/commands.hpp" of apps (a sibling)',
                      result.stdout)
        result = run_checker({**shared, "src/bench/cell.cpp": '#include "ferry/frontend/bench_flags.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/bench/cell.cpp:1: bench includes "ferry/frontend/bench_flags.hpp" of frontend '
                      "(a higher layer)", result.stdout)
        result = run_checker({**shared, "src/frontend/plot.cpp": '#include "../../apps/ferry/commands.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("of apps (a higher layer)", result.stdout)

    def test_tooling_headers_are_bench(self):
        result = run_checker({**BASE, "include/ferry/bench/report.hpp": "#pragma once\n",
                              "src/session/session.cpp": '#include "ferry/bench/report.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/session/session.cpp:1: session includes "ferry/bench/report.hpp" of bench', result.stdout)


class ServeFloors(unittest.TestCase):
    def test_a_serve_folder_including_a_higher_floor_fails(self):
        result = run_checker({**BASE, "src/serve/vocabulary/inference.cpp":
                              '#include "serve/vocabulary/inference.hpp"\n#include "serve/transport/front.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('src/serve/vocabulary/inference.cpp:2: serve/vocabulary includes "serve/transport/front.hpp" '
                      'of serve/transport (a higher floor)', result.stdout)

    def test_a_serve_file_may_not_include_the_server(self):
        result = run_checker({**BASE, "src/serve/transport/front.cpp": '#include "serve/server.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn('serve/transport includes "serve/server.hpp" of serve/(server)', result.stdout)

    def test_a_serve_folder_with_no_floor_fails(self):
        result = run_checker({**BASE, "src/serve/extras/thing.cpp": '#include "serve/vocabulary/inference.hpp"\n'})
        self.assertEqual(result.returncode, 1)
        self.assertIn("src/serve/extras/thing.cpp: a serve folder with no floor", result.stdout)


if __name__ == "__main__":
    unittest.main()
