"""Every transfer strategy behind the same protocol: a repository with touch and a batched mlp
under each strategy. On a GPU each model runs through a ferry session with its strategy and must
give the CPU reference's answers (or, for a strategy the platform lacks, be unavailable with the
reason, never silently served another way); without a GPU the strategy is not used and every
model is served by the host reference."""
import shutil
import sys
import unittest

import numpy as np
import tritonclient.http as httpclient

import references as ref
from ferry_server import FerryServer, run_clients, write_repository

STRATEGIES = ["pageable", "staged", "pinned", "mapped", "registered", "registered-mapped", "managed",
              "managed-prefetch", "managed-advise", "system", "device", "auto"]


class Strategies(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        models = {}
        for s in STRATEGIES:
            placement = {"strategy": s, "inflight": "auto" if s == "auto" else 2}
            models[f"touch_{s}"] = {"engine": "touch", "input_size": "4KiB", **placement}
            models[f"mlp_{s}"] = {"engine": "mlp:2x64", "max_batch": 8, "batch_delay_us": 500, **placement}
        cls.repository = write_repository(models, "ferry_strategies_")
        cls.server = FerryServer(repository=cls.repository)
        cls.on_gpu = not any("on the CPU" in line for line in cls.server.log)

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        # Where each model ran, or why it could not: the record of a GPU run.
        sys.stderr.write("\n".join(l for l in cls.server.log if "model '" in l or "CPU" in l) + "\n")
        shutil.rmtree(cls.repository)
        if code != 0:
            raise AssertionError(f"ferry serve exited with {code}:\n" + "\n".join(cls.server.log))

    def test_every_strategy_answers_like_the_reference(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        index = {m["name"]: m for m in client.get_model_repository_index()}
        rng = np.random.default_rng(3)
        rows = ref.random_rows(rng, 5)
        served = []
        for s in STRATEGIES:
            for model in (f"touch_{s}", f"mlp_{s}"):
                with self.subTest(model=model):
                    if index[model]["state"] != "READY":
                        # Only a strategy this GPU lacks may be unavailable, and it says why.
                        self.assertTrue(self.on_gpu, index[model]["reason"])
                        self.assertIn(s, index[model]["reason"])
                        continue
                    served.append(model)
                    if model.startswith("touch"):
                        x = ref.random_f32(rng, ref.TOUCH_ELEMENTS)
                        inp = httpclient.InferInput("input", [x.size], "FP32")
                        inp.set_data_from_numpy(x)
                        np.testing.assert_allclose(client.infer(model, [inp]).as_numpy("output"), ref.touch(x), rtol=1e-6)
                    else:
                        inp = httpclient.InferInput("input", list(rows.shape), "FP16")
                        inp.set_data_from_numpy(rows)
                        got = client.infer(model, [inp]).as_numpy("output").astype(np.float32)
                        if model == "mlp_pinned":
                            reference = got
                        # Same weights everywhere: each strategy within fp16 GEMM tolerance of the others.
                        self.assertEqual(got.shape, rows.shape)
                        self.__dict__.setdefault("mlp_results", []).append((model, got))
        for model, got in self.__dict__.get("mlp_results", []):
            scale = max(float(np.abs(reference).max()), float(np.sqrt((reference ** 2).mean())), 1e-3)
            self.assertLessEqual(float(np.abs(got - reference).max()), 2e-2 * scale, model)
        self.assertIn("touch_pinned", served)
        if not self.on_gpu:
            self.assertEqual(len(served), 2 * len(STRATEGIES))

    def test_auto_is_chosen_logged_and_shown(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        for model in ("touch_auto", "mlp_auto"):
            with self.subTest(model=model):
                logged = [l for l in self.server.log if f"model '{model}' auto:" in l]
                self.assertEqual(len(logged), 1, self.server.log)
                parameters = client.get_model_config(model)["parameters"]
                self.assertIn(parameters["strategy_choice"]["string_value"], logged[0])
                self.assertEqual(client.get_model_metadata(model)["parameters"], parameters)
                if self.on_gpu:  # the pick is a strategy of this GPU, from its profile or the rules
                    self.assertIn(parameters["strategy"]["string_value"], STRATEGIES)
                    self.assertRegex(logged[0], "measured on this machine|not measured on this machine")

    def test_concurrent_requests_on_every_served_touch_model(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        models = [m["name"] for m in client.get_model_repository_index()
                  if m["state"] == "READY" and m["name"].startswith("touch")]

        def loop(index):
            c = httpclient.InferenceServerClient(self.server.http_url)
            local = np.random.default_rng(500 + index)
            for r in range(12):
                model = models[(index + r) % len(models)]
                x = ref.random_f32(local, ref.TOUCH_ELEMENTS)
                inp = httpclient.InferInput("input", [x.size], "FP32")
                inp.set_data_from_numpy(x)
                np.testing.assert_allclose(c.infer(model, [inp]).as_numpy("output"), ref.touch(x), rtol=1e-6)

        self.assertEqual(run_clients(8, loop), [])


if __name__ == "__main__":
    unittest.main()
