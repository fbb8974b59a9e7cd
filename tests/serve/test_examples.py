"""The quick tour's repository, examples/models: every model in it loads (on a GPU, or on the CPU
through the host references and the example backend's CPU entry point), the server is ready, and
the example backend's model answers as numpy does."""
import os
import unittest

import numpy as np
import tritonclient.http as httpclient

from ferry_server import FerryServer

EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "models")


class ExampleRepository(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = FerryServer(repository=os.path.normpath(EXAMPLES))

    @classmethod
    def tearDownClass(cls):
        code = cls.server.stop()
        if code != 0:
            raise AssertionError(f"ferry serve exited with {code}:\n" + "\n".join(cls.server.log))

    def test_every_example_model_is_ready(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        index = client.get_model_repository_index()
        names = sorted(m["name"] for m in index)
        self.assertEqual(names, sorted(os.listdir(EXAMPLES)))
        for model in index:
            self.assertEqual(model["state"], "READY", f"{model['name']}: {model.get('reason')}")
        self.assertTrue(client.is_server_ready())

    def test_the_plugin_model_answers(self):
        client = httpclient.InferenceServerClient(self.server.http_url)
        x = np.random.default_rng(3).uniform(-10, 10, (5, 1024)).astype(np.float32)
        request = httpclient.InferInput("x", list(x.shape), "FP32")
        request.set_data_from_numpy(x, binary_data=True)
        y = client.infer("scaled", [request]).as_numpy("y")
        np.testing.assert_array_equal(y, (x * np.float32(0.5) + np.float32(1)).astype(np.float32))


if __name__ == "__main__":
    unittest.main()
