"""A strategy per tensor in a model's config.json ("tensor_strategies"): the built-in sparse engine
with its small index input read in place and its output kept in managed pages while its table is
copied. On a GPU the model runs through a ferry session with those strategies and must give the
numpy reference's answers; without one the host reference serves it. Either way the overrides are
shown in the model's configuration, a name that is not a tensor of the engine makes the model
unavailable saying which, and "auto" on a built-in engine loads with its reason per tensor."""
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from ferry_server import FerryServer, write_repository, stop_and_remove

TABLE_ELEMENTS = 256 * 1024 // 4  # input_size 256KiB of f32: 64 pages of 1024 floats
PAGES = TABLE_ELEMENTS // 1024
INDICES = round(0.05 * PAGES)      # sparse:0.05

MODELS = {
    "sparse_mixed": {"engine": "sparse:0.05", "input_size": "256KiB", "strategy": "pinned",
                     "tensor_strategies": {"indices": "mapped", "rows": "managed-advise"}},
    "sparse_typo": {"engine": "sparse:0.05", "input_size": "256KiB", "tensor_strategies": {"indexes": "mapped"}},
    "sparse_auto": {"engine": "sparse:0.05", "input_size": "256KiB", "strategy": "auto"},
}


def sparse(table, indices):
    pages = table.reshape(PAGES, 1024).astype(np.float64)
    return np.array([pages[i].sum() for i in indices])


class TensorStrategies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.repository = write_repository(MODELS, "ferry_tensor_strategies_")
        cls.server = FerryServer(repository=cls.repository)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.repository)

    def test_a_mixed_model_answers_like_the_reference(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        self.assertTrue(client.is_model_ready("sparse_mixed"), "\n".join(self.server.log))
        rng = np.random.default_rng(11)
        for _ in range(5):
            table = rng.uniform(-1, 1, TABLE_ELEMENTS).astype(np.float32)
            indices = rng.integers(0, PAGES, INDICES).astype(np.int32)
            inputs = [httpclient.InferInput("table", [TABLE_ELEMENTS], "FP32"),
                      httpclient.InferInput("indices", [INDICES], "INT32")]
            inputs[0].set_data_from_numpy(table)
            inputs[1].set_data_from_numpy(indices)
            rows = client.infer("sparse_mixed", inputs).as_numpy("rows")
            expected = sparse(table, indices)
            # The engine's tolerance: 1e-5 of each page's sum of magnitudes.
            scale = np.abs(table.reshape(PAGES, 1024)).sum(axis=1)[indices]
            self.assertTrue(np.all(np.abs(rows - expected) <= 1e-5 * scale), (rows, expected))

    def test_the_overrides_are_shown_in_the_configuration(self):
        http = httpclient.InferenceServerClient(self.server.http_url)
        parameters = http.get_model_config("sparse_mixed")["parameters"]
        self.assertEqual(parameters["strategy"]["string_value"], "pinned")
        self.assertEqual(parameters["tensor_strategies"]["string_value"], "indices=mapped,rows=managed-advise")
        self.assertEqual(http.get_model_metadata("sparse_mixed")["parameters"], parameters)
        grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        config = grpc.get_model_config("sparse_mixed", as_json=True)["config"]
        self.assertEqual(config["parameters"]["tensor_strategies"]["string_value"],
                         "indices=mapped,rows=managed-advise")

    def test_a_name_that_is_no_tensor_makes_the_model_unavailable(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        index = {m["name"]: m for m in client.get_model_repository_index()}
        self.assertEqual(index["sparse_typo"]["state"], "UNAVAILABLE")
        self.assertIn("'indexes'", index["sparse_typo"]["reason"])
        logged = [l for l in self.server.log if "model 'sparse_typo' UNAVAILABLE" in l]
        self.assertEqual(len(logged), 1, self.server.log)
        self.assertIn("tensor_strategies names 'indexes'", logged[0])

    def test_auto_loads_with_a_reason(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        self.assertTrue(client.is_model_ready("sparse_auto"), "\n".join(self.server.log))
        logged = [l for l in self.server.log if "model 'sparse_auto' auto:" in l]
        self.assertEqual(len(logged), 1, self.server.log)
        parameters = client.get_model_config("sparse_auto")["parameters"]
        self.assertIn(parameters["strategy_choice"]["string_value"], logged[0])
        if "on the CPU" not in "\n".join(self.server.log):
            self.assertIn("per tensor: 'table'", logged[0])


if __name__ == "__main__":
    unittest.main()
