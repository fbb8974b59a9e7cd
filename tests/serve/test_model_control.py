"""Model control, as Triton's repository extension and its clients use it: `--model-control-mode
explicit` (only --load-model at start, then load_model/unload_model over HTTP and gRPC), `none`
(the API refuses), `poll` (added, changed and removed folders noticed); unloading answers every
request it had admitted with its own data and gives the model's memory back; a model that fails
to load says why while the others serve; strict readiness counts only the models meant to be
loaded."""
import os
import shutil
import subprocess
import threading
import time
import unittest
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import SANITIZED, FerryServer, resident_mb, run_clients, stop_and_remove, wait_for, write_repository

MODELS = {
    "touch": {"engine": "touch", "input_size": "4KiB"},
    "other": {"engine": "touch", "input_size": "4KiB", "inflight": 2},
    "broken": {"engine": "nonsense:3"},
}


def touch_http(client, model, x):
    inp = httpclient.InferInput("input", [x.size], "FP32")
    inp.set_data_from_numpy(x)
    return client.infer(model, [inp]).as_numpy("output")


def touch_grpc(client, model, x):
    inp = grpcclient.InferInput("input", [x.size], "FP32")
    inp.set_data_from_numpy(x)
    return client.infer(model, [inp]).as_numpy("output")


def index_of(client):
    return {m["name"]: m for m in client.get_model_repository_index()}


class ExplicitControl(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = write_repository(MODELS, "ferry_control_")
        cls.server = FerryServer("--model-control-mode", "explicit", "--load-model", "touch",
                                 repository=cls.repository)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def setUp(self):
        self.http = httpclient.InferenceServerClient(self.server.http_url)
        self.grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        self.x = ref.random_f32(np.random.default_rng(7), ref.TOUCH_ELEMENTS)

    def tearDown(self):
        # Whatever a test loaded or unloaded, the model loaded at start still serves, rightly.
        np.testing.assert_allclose(touch_http(self.http, "touch", self.x), ref.touch(self.x), rtol=1e-6)
        self.assertTrue(self.server.alive(), "\n".join(self.server.log))

    def test_only_the_named_models_load_at_start(self):
        index = index_of(self.http)
        self.assertEqual(index["touch"]["state"], "READY")
        self.assertEqual(index["broken"]["state"], "UNAVAILABLE")
        # Strict readiness counts the models meant to be loaded: "broken" was never asked for.
        self.assertTrue(self.http.is_server_ready(), "\n".join(self.server.log))

    def check_load_unload(self, client, infer):
        client.load_model("other")
        self.assertTrue(client.is_model_ready("other"))
        np.testing.assert_allclose(infer(client, "other", self.x), ref.touch(self.x), rtol=1e-6)
        client.unload_model("other")
        self.assertFalse(client.is_model_ready("other"))
        with self.assertRaises(InferenceServerException) as refused:
            infer(client, "other", self.x)
        self.assertIn("not ready: unloaded", refused.exception.message())
        self.assertEqual(index_of(self.http)["other"], {"name": "other", "version": "1", "state": "UNAVAILABLE",
                                                        "reason": "unloaded"})
        # And back again: a model unloaded loads as before.
        client.load_model("other")
        np.testing.assert_allclose(infer(client, "other", self.x), ref.touch(self.x), rtol=1e-6)
        client.unload_model("other")

    def test_load_and_unload_over_http(self):
        self.check_load_unload(self.http, touch_http)

    def test_load_and_unload_over_grpc(self):
        self.check_load_unload(self.grpc, touch_grpc)
        index = {m["name"]: m for m in self.grpc.get_model_repository_index(as_json=True)["models"]}
        self.assertEqual(index["other"]["state"], "UNAVAILABLE")

    def test_a_broken_model_fails_with_its_reason_and_the_others_serve(self):
        for client in (self.http, self.grpc):
            with self.assertRaises(InferenceServerException) as failed:
                client.load_model("broken")
            self.assertIn("failed to load model 'broken'", failed.exception.message())
            self.assertIn("no backend 'nonsense'", failed.exception.message())
        self.assertEqual(index_of(self.http)["broken"]["state"], "UNAVAILABLE")
        self.assertIn("no backend 'nonsense'", index_of(self.http)["broken"]["reason"])
        # A load the API asked for that failed is the caller's error, not the server's unreadiness.
        self.assertTrue(self.http.is_server_ready())

    def test_unknown_models(self):
        with self.assertRaises(InferenceServerException) as e:
            self.http.load_model("no_such_model")
        self.assertIn("no such model folder", e.exception.message())
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.unload_model("no_such_model")
        self.assertEqual(e.exception.status(), "StatusCode.NOT_FOUND")
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.load_model("../touch")  # a name is one folder of the repository, never a path
        self.assertIn("no such model folder", e.exception.message())

    def test_inline_configs_are_refused_not_ignored(self):
        with self.assertRaises(InferenceServerException) as e:
            self.http.load_model("other", config='{"max_batch_size": 4}')
        self.assertIn("load parameter 'config' is not supported", e.exception.message())

    def test_unload_answers_every_request_in_flight_with_its_own_data(self):
        self.http.load_model("other")
        outcomes = []
        lock = threading.Lock()
        started = threading.Barrier(9)

        def client(index):
            c = httpclient.InferenceServerClient(self.server.http_url)
            rng = np.random.default_rng(100 + index)
            started.wait()
            for _ in range(40):
                x = ref.random_f32(rng, ref.TOUCH_ELEMENTS)
                try:
                    y = touch_http(c, "other", x)
                except InferenceServerException as e:
                    # Refused once the unload began: said so, never run.
                    if "unloaded" not in e.message() and "being unloaded" not in e.message():
                        raise
                    with lock:
                        outcomes.append("refused")
                    continue
                np.testing.assert_allclose(y, ref.touch(x), rtol=1e-6)  # its own answer
                with lock:
                    outcomes.append("answered")

        failures = []

        def run_all():
            failures.extend(run_clients(8, client))

        runner = threading.Thread(target=run_all)
        runner.start()
        started.wait()
        time.sleep(0.05)
        self.http.unload_model("other")
        runner.join(120)
        self.assertEqual(failures, [])
        self.assertEqual(len(outcomes), 8 * 40, "every request was answered")
        self.assertIn("answered", outcomes)
        self.assertFalse(self.http.is_model_ready("other"))


class NoModelControl(unittest.TestCase):
    def test_the_api_may_not_load_or_unload(self):
        repository = write_repository({"touch": MODELS["touch"]}, "ferry_control_none_")
        server = FerryServer(repository=repository)
        try:
            for client in (httpclient.InferenceServerClient(server.http_url),
                           grpcclient.InferenceServerClient(server.grpc_url)):
                for call in (client.load_model, client.unload_model):
                    with self.assertRaises(InferenceServerException) as e:
                        call("touch")
                    self.assertIn("--model-control-mode none", e.exception.message())
                self.assertTrue(client.is_model_ready("touch"))
        finally:
            stop_and_remove(server, repository)

    def test_flags_of_another_mode_are_refused(self):
        for args, needle in ((["--load-model", "touch"], "--load-model is for --model-control-mode explicit"),
                             (["--model-control-mode", "explicit", "--repository-poll-secs", "5"],
                              "--repository-poll-secs is for --model-control-mode poll"),
                             (["--model-control-mode", "explicit", "--load-model", "absent"],
                              "--load-model 'absent': the model repository has no such model folder"),
                             (["--model-control-mode", "sometimes"], "--model-control-mode")):
            run = subprocess.run([os.environ["FERRY_BIN"], "serve", "--model-repository", os.path.dirname(__file__),
                                  "--http-port", "0", "--grpc-port", "0", *args],
                                 capture_output=True, text=True, timeout=60)
            self.assertEqual(run.returncode, 2, run.stdout + run.stderr)
            self.assertIn(needle, run.stdout + run.stderr)

    def test_a_startup_model_that_fails_makes_the_server_unready(self):
        repository = write_repository(MODELS, "ferry_control_start_")
        server = FerryServer("--model-control-mode", "explicit", "--load-model", "touch", "--load-model", "broken",
                             repository=repository)
        try:
            client = httpclient.InferenceServerClient(server.http_url)
            self.assertFalse(client.is_server_ready())
            self.assertTrue(any("strict readiness: 1 of 2 models are not ready (broken)" in line
                                for line in server.log), "\n".join(server.log))
        finally:
            stop_and_remove(server, repository)


@unittest.skipIf(SANITIZED, "a sanitizer's allocator holds freed memory back on purpose")
class MemoryComesBack(unittest.TestCase):
    """A model holding 32 MiB of weights (mlp:4x2048, FP16) loaded, used and unloaded over and
    over: the server's resident memory returns to its level before the loads. The tolerance is
    8 MiB over 6 cycles: a model's weights kept by one cycle would be 32 MiB, so a leak of even a
    part of one model per cycle shows."""

    CYCLES = 6
    TOLERANCE_MB = 8

    def cycle(self, client, rng):
        client.load_model("weights")
        for rows in (1, 4, 2):
            x = rng.uniform(-1, 1, (rows, 2048)).astype(np.float16)
            inp = httpclient.InferInput("input", list(x.shape), "FP16")
            inp.set_data_from_numpy(x)
            y = client.infer("weights", [inp]).as_numpy("output")
            self.assertEqual(y.shape, x.shape)
        client.unload_model("weights")

    def test_resident_memory_returns_after_unload(self):
        repository = write_repository({"weights": {"engine": "mlp:4x2048", "max_batch": 4}}, "ferry_control_mem_")
        server = FerryServer("--model-control-mode", "explicit", repository=repository)
        try:
            client = httpclient.InferenceServerClient(server.http_url)
            rng = np.random.default_rng(3)
            pid = server.process.pid
            # One cycle first: threads, arenas and the client connection settle.
            self.cycle(client, rng)
            time.sleep(0.5)
            before = resident_mb(pid)
            client.load_model("weights")
            loaded = resident_mb(pid)
            self.assertGreater(loaded - before, 24, "the model's weights are resident while it is loaded")
            client.unload_model("weights")
            for _ in range(self.CYCLES):
                self.cycle(client, rng)
            came_back = wait_for(lambda: resident_mb(pid) - before < self.TOLERANCE_MB, 5)
            after = resident_mb(pid)
            print(f"\nresident MiB: {before:.1f} before, {loaded:.1f} with the model loaded, {after:.1f} after "
                  f"{self.CYCLES} more cycles", flush=True)
            self.assertTrue(came_back, f"resident memory {after:.1f} MiB after {self.CYCLES} load/unload cycles, "
                                       f"{before:.1f} MiB before them ({loaded:.1f} MiB with the model loaded)")
        finally:
            stop_and_remove(server, repository)


class PollControl(unittest.TestCase):
    def test_added_changed_and_removed_folders(self):
        repository = write_repository({"touch": MODELS["touch"]}, "ferry_control_poll_")
        server = FerryServer("--model-control-mode", "poll", "--repository-poll-secs", "1", repository=repository)
        try:
            client = httpclient.InferenceServerClient(server.http_url)
            self.assertTrue(client.is_model_ready("touch"))
            # Added.
            os.makedirs(os.path.join(repository, "added"))
            with open(os.path.join(repository, "added", "config.json"), "w") as f:
                f.write('{"engine": "touch", "input_size": "4KiB"}')
            self.assertTrue(wait_for(lambda: "added" in index_of(client) and client.is_model_ready("added"), 15),
                            "\n".join(server.log))
            x = ref.random_f32(np.random.default_rng(5), ref.TOUCH_ELEMENTS)
            np.testing.assert_allclose(touch_http(client, "added", x), ref.touch(x), rtol=1e-6)
            # Changed: a new config (another input size) is loaded in its place.
            time.sleep(0.05)  # a modification time the file system tells apart from the first
            with open(os.path.join(repository, "added", "config.json"), "w") as f:
                f.write('{"engine": "touch", "input_size": "8KiB"}')
            shape = lambda: client.get_model_metadata("added")["inputs"][0]["shape"]  # noqa: E731
            self.assertTrue(wait_for(lambda: shape() == [2 * ref.TOUCH_ELEMENTS], 15), "\n".join(server.log))
            # Removed.
            shutil.rmtree(os.path.join(repository, "added"))
            self.assertTrue(wait_for(lambda: "added" not in index_of(client), 15), "\n".join(server.log))
            with self.assertRaises(InferenceServerException) as e:
                client.is_model_ready("added") or touch_http(client, "added", x)
            self.assertIn("unknown model 'added'", e.exception.message())
            self.assertTrue(client.is_model_ready("touch"))
            self.assertTrue(client.is_server_ready())
        finally:
            stop_and_remove(server, repository)


class Histograms(unittest.TestCase):
    def test_durations_are_histograms_that_count_requests(self):
        repository = write_repository({"touch": MODELS["touch"]}, "ferry_control_metrics_")
        server = FerryServer(repository=repository)
        try:
            client = httpclient.InferenceServerClient(server.http_url)
            x = ref.random_f32(np.random.default_rng(11), ref.TOUCH_ELEMENTS)
            for _ in range(25):
                touch_http(client, "touch", x)
            with urllib.request.urlopen(f"http://{server.http_url}/metrics") as answer:
                text = answer.read().decode()
            lines = text.splitlines()
            for family in ("ferry_request_duration_us", "ferry_queue_duration_us", "ferry_compute_infer_duration_us"):
                self.assertIn(f"# TYPE {family} histogram", lines)
                labels = 'model="touch",version="1"'
                buckets = [(line.split('le="')[1].split('"')[0], float(line.rsplit(" ", 1)[1]))
                           for line in lines if line.startswith(f"{family}_bucket{{{labels}")]
                self.assertEqual(buckets[-1][0], "+Inf")
                self.assertEqual(len(buckets), 17)
                counts = [c for _, c in buckets]
                self.assertEqual(counts, sorted(counts), "buckets are cumulative")
                count = [float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith(f"{family}_count{{{labels}}}")]
                total = [float(line.rsplit(" ", 1)[1]) for line in lines if line.startswith(f"{family}_sum{{{labels}}}")]
                self.assertEqual(count, [25.0])
                self.assertEqual(counts[-1], 25.0)
                self.assertGreater(total[0], 0)
            self.assertIn('nv_inference_pending_request_count{model="touch",version="1"} 0', lines)
            # One gauge per place the model runs: "cpu" without a GPU, the GPU's ordinal with one.
            in_flight = [line for line in lines if line.startswith("ferry_device_requests_in_flight{device=")]
            self.assertTrue(in_flight, "no ferry_device_requests_in_flight gauge")
            for line in in_flight:
                self.assertRegex(line, r'^ferry_device_requests_in_flight\{device="(cpu|\d+)"\} 0$')
            self.assertIn("ferry_requests_in_flight 0", lines)
        finally:
            stop_and_remove(server, repository)


if __name__ == "__main__":
    unittest.main()
