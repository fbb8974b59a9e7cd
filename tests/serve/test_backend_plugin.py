"""Models served through a backend plugin: the example backend (examples/backend, found beside the
ferry binary as an installation lays it out) loads a model file named relative to its model folder,
and answers over HTTP and gRPC, batched and from several clients at once, exactly as numpy does. On
a machine without a GPU it computes on the CPU through the backend's host entry point. A missing
backend, a broken model file and a backend that cannot compute on the CPU each leave their model
unavailable with one clear reason, while the others serve."""
import os
import tempfile
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from ferry_server import FerryServer, run_clients, stop_and_remove, write_model

WIDTH = 64
AFFINE = "format ferry-affine/1\nname halved\nwidth {width}\nmax_batch 8\nscale 0.5\nbias -3\n"


def expected(x):
    # scale 0.5 is exact in float32, so x * 0.5 - 3 rounds once, as the backend's fused multiply-add.
    return (x * np.float32(0.5) - np.float32(3)).astype(np.float32)


class BackendPlugin(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = tempfile.mkdtemp(prefix="ferry_backend_plugin_")
        write_model(cls.repository, "halved", '{"engine": "affine:halved.affine", "max_batch": 8, "batch_delay_us": 200}',
                    {"halved.affine": AFFINE.format(width=WIDTH)})
        write_model(cls.repository, "missing_backend", '{"engine": "nosuch:model.bin"}')
        write_model(cls.repository, "corrupt_file", '{"engine": "affine:corrupt.affine"}',
                    {"corrupt.affine": "width 8\n"})
        args = []
        tests_backends = os.environ.get("FERRY_TEST_BACKEND_DIR")
        if tests_backends:
            # The C++-seam test backend, which computes on a GPU only.
            write_model(cls.repository, "gpu_only", '{"engine": "seam:touch"}')
            args = ["--backend-directory", tests_backends]
        cls.server = FerryServer(*args, repository=cls.repository)
        cls.on_cpu = any("running on the CPU" in line for line in cls.server.log)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def test_a_plugin_model_answers_over_http_and_grpc(self):
        http = httpclient.InferenceServerClient(self.server.http_url)
        grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        self.assertTrue(http.is_model_ready("halved"), "\n".join(self.server.log))
        metadata = http.get_model_metadata("halved")
        self.assertEqual(metadata["inputs"][0]["name"], "x")
        self.assertEqual(metadata["inputs"][0]["shape"], [-1, WIDTH])
        rng = np.random.default_rng(5)
        for rows in (1, 3, 8):
            x = rng.uniform(-100, 100, (rows, WIDTH)).astype(np.float32)
            inputs = [httpclient.InferInput("x", list(x.shape), "FP32")]
            inputs[0].set_data_from_numpy(x, binary_data=True)
            np.testing.assert_array_equal(http.infer("halved", inputs).as_numpy("y"), expected(x))
            inputs = [grpcclient.InferInput("x", list(x.shape), "FP32")]
            inputs[0].set_data_from_numpy(x)
            np.testing.assert_array_equal(grpc.infer("halved", inputs).as_numpy("y"), expected(x))

    def test_clients_at_once_each_get_their_own_answer(self):
        def client(index):
            http = httpclient.InferenceServerClient(self.server.http_url)
            rng = np.random.default_rng(100 + index)
            for _ in range(20):
                x = rng.uniform(-1, 1, (1 + index % 4, WIDTH)).astype(np.float32)
                inputs = [httpclient.InferInput("x", list(x.shape), "FP32")]
                inputs[0].set_data_from_numpy(x, binary_data=True)
                got = http.infer("halved", inputs).as_numpy("y")
                if not np.array_equal(got, expected(x)):
                    raise AssertionError(f"wrong answer for a batch of {x.shape[0]}")

        self.assertEqual(run_clients(8, client), [])

    def test_broken_models_are_unavailable_with_their_reason(self):
        http = httpclient.InferenceServerClient(self.server.http_url)
        index = {m["name"]: m for m in http.get_model_repository_index()}
        self.assertEqual(index["halved"]["state"], "READY")
        missing = index["missing_backend"]
        self.assertEqual(missing["state"], "UNAVAILABLE")
        self.assertIn("no backend 'nosuch'", missing["reason"])
        self.assertIn("libferry_backend_nosuch.so", missing["reason"])
        corrupt = index["corrupt_file"]
        self.assertEqual(corrupt["state"], "UNAVAILABLE")
        self.assertIn("backend 'affine'", corrupt["reason"])
        self.assertIn("is not an affine model", corrupt["reason"])
        if "gpu_only" in index:
            if self.on_cpu:
                self.assertEqual(index["gpu_only"]["state"], "UNAVAILABLE")
                self.assertIn("backend 'seam' cannot compute on the CPU", index["gpu_only"]["reason"])
            else:
                self.assertEqual(index["gpu_only"]["state"], "READY", index["gpu_only"].get("reason"))


if __name__ == "__main__":
    unittest.main()
