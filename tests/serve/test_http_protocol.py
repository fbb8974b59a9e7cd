"""KServe v2 over HTTP/REST, driven by Triton's own client: health, metadata, inference in JSON
and with the binary tensor data extension, statistics, the repository index and /metrics."""
import json
import unittest
import urllib.error
import urllib.request

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import ServerTestCase


class HttpProtocol(ServerTestCase):
    def setUp(self):
        self.client = httpclient.InferenceServerClient(self.server.http_url)

    def infer(self, model, inputs, outputs=None):
        return self.client.infer(model, inputs, outputs=outputs)

    def test_health(self):
        # The fixtures hold broken models, so with strict readiness (Triton's default, and ferry's)
        # the server is live but not ready, and says which models keep it so.
        self.assertTrue(self.client.is_server_live())
        self.assertFalse(self.client.is_server_ready())
        try:
            urllib.request.urlopen(f"http://{self.server.http_url}/v2/health/ready")
            self.fail("ready with broken models")
        except urllib.error.HTTPError as e:
            self.assertEqual(e.code, 503)
            body = json.loads(e.read())
            self.assertIn("strict readiness: 3 of 7 models are not ready (broken_config, broken_engine, model_file)",
                          body["error"])
        self.assertTrue(self.client.is_model_ready("touch"))

    def test_server_metadata(self):
        meta = self.client.get_server_metadata()
        self.assertEqual(meta["name"], "ferry")
        self.assertIn("binary_tensor_data", meta["extensions"])
        self.assertIn("statistics", meta["extensions"])
        self.assertNotIn("system_shared_memory", meta["extensions"])  # not without --allow-client-shm

    def test_model_config(self):
        # Triton's configuration document, which perf_analyzer reads before sending anything.
        config = self.client.get_model_config("mlp_batched")
        self.assertEqual(config["name"], "mlp_batched")
        self.assertEqual(config["max_batch_size"], 8)
        self.assertEqual(config["input"], [{"name": "input", "data_type": "TYPE_FP16", "dims": [ref.MLP_WIDTH]}])
        self.assertEqual(config["output"], [{"name": "output", "data_type": "TYPE_FP16", "dims": [ref.MLP_WIDTH]}])
        self.assertEqual(config["dynamic_batching"], {"max_queue_delay_microseconds": 2000})
        touch = self.client.get_model_config("touch", model_version="1")
        self.assertEqual(touch["max_batch_size"], 0)
        self.assertEqual(touch["input"][0]["dims"], [ref.TOUCH_ELEMENTS])
        self.assertNotIn("dynamic_batching", touch)

    def test_model_metadata(self):
        meta = self.client.get_model_metadata("mlp_batched")
        self.assertEqual(meta["name"], "mlp_batched")
        self.assertEqual(meta["versions"], ["1"])
        self.assertEqual(meta["inputs"], [{"name": "input", "datatype": "FP16", "shape": [-1, ref.MLP_WIDTH]}])
        self.assertEqual(meta["outputs"], [{"name": "output", "datatype": "FP16", "shape": [-1, ref.MLP_WIDTH]}])
        meta = self.client.get_model_metadata("touch", model_version="1")
        self.assertEqual(meta["inputs"][0]["shape"], [ref.TOUCH_ELEMENTS])

    def test_model_readiness(self):
        for model in ("touch", "reduce", "mlp_batched", "mlp_single"):
            self.assertTrue(self.client.is_model_ready(model), model)
        for model in ("broken_engine", "broken_config", "model_file", "no_such_model"):
            self.assertFalse(self.client.is_model_ready(model), model)
        self.assertFalse(self.client.is_model_ready("touch", model_version="2"))

    def test_broken_models_say_why(self):
        with self.assertRaises(InferenceServerException) as e:
            self.client.get_model_metadata("broken_config")
        self.assertIn("inflght", e.exception.message())
        with self.assertRaises(InferenceServerException) as e:
            self.client.get_model_metadata("broken_engine")
        self.assertIn("nonsense", e.exception.message())
        index = {m["name"]: m for m in self.client.get_model_repository_index()}
        self.assertEqual(index["touch"]["state"], "READY")
        self.assertEqual(index["broken_engine"]["state"], "UNAVAILABLE")
        self.assertIn("nonsense", index["broken_engine"]["reason"])
        # The model file by its name: absolute paths are never shown to clients.
        self.assertIn("model.pt2", index["model_file"]["reason"])
        self.assertNotIn("/nonexistent", index["model_file"]["reason"])

    def check_touch(self, binary_in, binary_out):
        x = ref.random_f32(np.random.default_rng(1), ref.TOUCH_ELEMENTS)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_data_from_numpy(x, binary_data=binary_in)
        out = httpclient.InferRequestedOutput("output", binary_data=binary_out)
        result = self.infer("touch", [inp], [out])
        np.testing.assert_allclose(result.as_numpy("output"), ref.touch(x), rtol=1e-6)
        self.assertEqual(result.get_output("output")["shape"], [ref.TOUCH_ELEMENTS])

    def test_infer_json(self):
        self.check_touch(binary_in=False, binary_out=False)

    def test_infer_binary(self):
        self.check_touch(binary_in=True, binary_out=True)

    def test_infer_mixed(self):
        self.check_touch(binary_in=True, binary_out=False)
        self.check_touch(binary_in=False, binary_out=True)

    def test_infer_all_outputs_by_default(self):
        x = ref.random_f32(np.random.default_rng(2), ref.REDUCE_ELEMENTS)
        inp = httpclient.InferInput("input", [ref.REDUCE_ELEMENTS], "FP32")
        inp.set_data_from_numpy(x)
        result = self.infer("reduce", [inp])  # no outputs named: every output, binary
        np.testing.assert_allclose(result.as_numpy("sums"), ref.reduce(x), rtol=1e-5, atol=1e-5)

    def test_request_id_is_echoed(self):
        x = ref.random_f32(np.random.default_rng(3), ref.TOUCH_ELEMENTS)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_data_from_numpy(x)
        result = self.client.infer("touch", [inp], request_id="req-42")
        self.assertEqual(result.get_response()["id"], "req-42")

    def test_fp16_batched_model_in_json_and_binary(self):
        rows = ref.random_rows(np.random.default_rng(4), 3)
        results = []
        for binary in (False, True):
            inp = httpclient.InferInput("input", list(rows.shape), "FP16")
            inp.set_data_from_numpy(rows, binary_data=binary)
            out = httpclient.InferRequestedOutput("output", binary_data=binary)
            results.append(self.infer("mlp_single", [inp], [out]).as_numpy("output"))
        self.assertEqual(results[0].shape, (3, ref.MLP_WIDTH))
        np.testing.assert_array_equal(results[0], results[1])
        # Batch rows are independent: each row alone gives the same answer.
        for i in range(3):
            inp = httpclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            inp.set_data_from_numpy(rows[i:i + 1])
            np.testing.assert_array_equal(self.infer("mlp_single", [inp]).as_numpy("output")[0], results[1][i])

    def test_statistics(self):
        x = ref.random_f32(np.random.default_rng(5), ref.TOUCH_ELEMENTS)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_data_from_numpy(x)
        before = self.client.get_inference_statistics("touch")["model_stats"][0]
        for _ in range(3):
            self.infer("touch", [inp])
        stats = self.client.get_inference_statistics("touch")["model_stats"][0]
        self.assertEqual(stats["name"], "touch")
        self.assertEqual(stats["inference_count"] - before["inference_count"], 3)
        self.assertEqual(stats["execution_count"] - before["execution_count"], 3)
        inference = stats["inference_stats"]
        for key in ("success", "queue", "compute_input", "compute_infer", "compute_output"):
            self.assertEqual(inference[key]["count"] - before["inference_stats"][key]["count"], 3, key)
            self.assertGreater(inference[key]["ns"], 0, key)
        self.assertGreater(stats["last_inference"], 0)
        everything = self.client.get_inference_statistics()["model_stats"]
        self.assertIn("mlp_batched", [m["name"] for m in everything])

    def test_prometheus_metrics(self):
        x = ref.random_f32(np.random.default_rng(6), ref.TOUCH_ELEMENTS)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_data_from_numpy(x)
        self.infer("touch", [inp])
        text = urllib.request.urlopen(f"http://{self.server.http_url}/metrics").read().decode()
        self.assertIn("# TYPE nv_inference_request_success counter", text)
        lines = [l for l in text.splitlines() if l.startswith('nv_inference_request_success{model="touch"')]
        self.assertEqual(len(lines), 1)
        self.assertGreaterEqual(float(lines[0].split()[-1]), 1)
        self.assertIn('ferry_model_ready{model="broken_engine",version="1"} 0', text)


if __name__ == "__main__":
    unittest.main()
