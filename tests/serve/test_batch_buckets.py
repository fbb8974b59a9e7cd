"""Batch buckets as clients see them: a model of dynamic batch served with "batch_buckets" and a
"latency_target_ms" answers every batch size exactly, its statistics keep Triton's batch_stats by
the rows requests brought, and /metrics counts engine runs by the bucket they ran at and the rows
padding added (none on the CPU, which runs each batch at its own rows; on a GPU a batch of 3 runs at
bucket 4). A bucket list a model cannot take is refused at load, naming the key."""
import re
import tempfile
import unittest
import urllib.request

import numpy as np
import tritonclient.http as httpclient

from ferry_server import FerryServer, stop_and_remove, write_model

WIDTH = 32
AFFINE = f"format ferry-affine/1\nname doubled\nwidth {WIDTH}\nmax_batch 8\nscale 2\nbias 1\n"


class BatchBuckets(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = tempfile.mkdtemp(prefix="ferry_batch_buckets_")
        write_model(cls.repository, "doubled",
                    '{"engine": "affine:doubled.affine", "max_batch": 8, "batch_buckets": [1, 4, 8], '
                    '"latency_target_ms": 5}', {"doubled.affine": AFFINE})
        write_model(cls.repository, "fixed_with_buckets", '{"engine": "touch", "max_batch": 8, "batch_buckets": [2, 8]}')
        write_model(cls.repository, "short_buckets",
                    '{"engine": "affine:doubled.affine", "max_batch": 8, "batch_buckets": [1, 4]}', {"doubled.affine": AFFINE})
        cls.server = FerryServer(repository=cls.repository)
        cls.on_cpu = any("running on the CPU" in line for line in cls.server.log)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def metrics(self):
        with urllib.request.urlopen(f"http://{self.server.http_url}/metrics", timeout=10) as answer:
            return answer.read().decode()

    def test_every_batch_size_is_answered_exactly_and_counted_by_its_bucket(self):
        http = httpclient.InferenceServerClient(self.server.http_url)
        self.assertTrue(http.is_model_ready("doubled"), "\n".join(self.server.log))
        rng = np.random.default_rng(3)
        for rows in (1, 3, 7, 8):
            x = rng.uniform(-10, 10, (rows, WIDTH)).astype(np.float32)
            inputs = [httpclient.InferInput("x", list(x.shape), "FP32")]
            inputs[0].set_data_from_numpy(x, binary_data=True)
            y = http.infer("doubled", inputs).as_numpy("y")
            self.assertEqual(y.shape, (rows, WIDTH))
            np.testing.assert_array_equal(y, (x * np.float32(2) + np.float32(1)).astype(np.float32))
        stats = http.get_inference_statistics("doubled")["model_stats"][0]
        self.assertEqual(sorted(int(b["batch_size"]) for b in stats["batch_stats"]), [1, 3, 7, 8])
        text = self.metrics()
        runs = {int(b): int(n) for b, n in re.findall(
            r'ferry_bucket_executions_total\{model="doubled",version="1",bucket="(\d+)"\} (\d+)', text)}
        padded = int(re.search(r'ferry_padded_rows_total\{model="doubled",version="1"\} (\d+)', text).group(1))
        if self.on_cpu:
            self.assertEqual(runs, {1: 1, 3: 1, 7: 1, 8: 1})
            self.assertEqual(padded, 0)
        else:
            self.assertEqual(runs, {1: 1, 4: 1, 8: 2})
            self.assertEqual(padded, 1 + 1)

    def test_buckets_a_model_cannot_take_are_refused_naming_the_key(self):
        http = httpclient.InferenceServerClient(self.server.http_url)
        index = {m["name"]: m for m in http.get_model_repository_index()}
        short = index["short_buckets"]
        self.assertEqual(short["state"], "UNAVAILABLE")
        self.assertIn("'batch_buckets' must end at 'max_batch' (8)", short["reason"])
        fixed = index["fixed_with_buckets"]  # a batched model's engine takes any batch, or it does not load
        self.assertEqual(fixed["state"], "UNAVAILABLE")
        self.assertIn("has no dynamic leading dim", fixed["reason"])


if __name__ == "__main__":
    unittest.main()
