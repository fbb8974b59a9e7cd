"""Models with an integer index input (every text model has one), through the `lookup` test
backend (tests/backends/lookup_backend.c): an id outside [0, rows) fails a device-side assert on
a GPU, which loses the GPU's context for the whole process, and reports that fault from the CPU.

- A model that declares its bound: a request with an id out of range gets 400 / INVALID_ARGUMENT
  naming the tensor, the value and the bound, from the request body and from system shared memory
  (checked on the host) and from CUDA shared memory (checked on the GPU, where there is one); the
  model, and every other model, keeps answering right afterwards; the server stays live and ready.
- A model that declares none (as a bare model package): a bad id reaches the model and the GPU
  faults. The server then says so once, turns not live and not ready at once, answers 503 naming
  the cause, and exits with code 4 for its supervisor to restart it.

Needs FERRY_TEST_BACKEND_DIR (set by ctest) for the test backend."""
import os
import shutil
import tempfile
import time
import unittest
import urllib.error
import urllib.request
import uuid

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

from ferry_server import FerryServer, wait_for

try:
    import tritonclient.utils.cuda_shared_memory as cudashm
except Exception:  # no cuda-python or no driver: the CUDA shared-memory test skips
    cudashm = None

ROWS, WIDTH, DIM, MAX_BATCH = 1000, 8, 4, 4
AFFINE = "format ferry-affine/1\nname halved\nwidth 16\nmax_batch 4\nscale 0.5\nbias -3\n"
DEVICE_FAULT_EXIT = 4


def lookup_model(declare_bound):
    return (f"format ferry-lookup/1\nrows {ROWS}\nwidth {WIDTH}\ndim {DIM}\nmax_batch {MAX_BATCH}\n"
            f"declare_bound {'yes' if declare_bound else 'no'}\n")


def expected(ids):
    return (ids[..., None].astype(np.float32) + np.arange(DIM, dtype=np.float32) / 4).astype(np.float32)


def write_model(repository, name, config, files):
    folder = os.path.join(repository, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write(config)
    for file, text in files.items():
        with open(os.path.join(folder, file), "w") as f:
            f.write(text)


def backend_args():
    folder = os.environ.get("FERRY_TEST_BACKEND_DIR")
    if not folder or not os.path.exists(os.path.join(folder, "libferry_backend_lookup.so")):
        raise unittest.SkipTest("the lookup test backend is not built (FERRY_TEST_BACKEND_DIR)")
    return ["--backend-directory", folder]


def http_status(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def ids_infer(client_module, ids):
    inp = client_module.InferInput("ids", list(ids.shape), "INT64")
    inp.set_data_from_numpy(ids)
    return [inp]


class DeclaredBound(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        args = backend_args()
        cls.repository = tempfile.mkdtemp(prefix="ferry_index_")
        write_model(cls.repository, "tokens", f'{{"engine": "lookup:tokens.lookup", "max_batch": {MAX_BATCH}}}',
                    {"tokens.lookup": lookup_model(True)})
        write_model(cls.repository, "halved", '{"engine": "affine:halved.affine", "max_batch": 4}',
                    {"halved.affine": AFFINE})
        cls.server = FerryServer(*args, "--allow-client-shm", repository=cls.repository)
        cls.http = httpclient.InferenceServerClient(cls.server.http_url)
        cls.grpc = grpcclient.InferenceServerClient(cls.server.grpc_url)

    @classmethod
    def tearDownClass(cls):
        try:
            code = cls.server.stop()
            if code != 0:
                raise AssertionError(f"ferry serve exited with {code}:\n" + "\n".join(cls.server.log))
        finally:
            shutil.rmtree(cls.repository)

    def assert_everything_still_answers(self):
        ids = np.arange(MAX_BATCH * WIDTH, dtype=np.int64).reshape(MAX_BATCH, WIDTH) * 7 % ROWS
        np.testing.assert_array_equal(self.http.infer("tokens", ids_infer(httpclient, ids)).as_numpy("vectors"),
                                      expected(ids))
        np.testing.assert_array_equal(self.grpc.infer("tokens", ids_infer(grpcclient, ids)).as_numpy("vectors"),
                                      expected(ids))
        x = np.linspace(-4, 4, 2 * 16, dtype=np.float32).reshape(2, 16)
        inp = httpclient.InferInput("x", [2, 16], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_array_equal(self.http.infer("halved", [inp]).as_numpy("y"), x * np.float32(0.5) - 3)
        self.assertTrue(self.http.is_server_live())
        self.assertTrue(self.http.is_server_ready())

    def assert_refused(self, error, value, position):
        text = str(error)
        self.assertIn("input 'ids'", text)
        self.assertIn(f"value {value} at [{position}] is outside [0, {ROWS})", text)

    def test_metadata_says_the_bound(self):
        parameters = self.http.get_model_metadata("tokens")["parameters"]
        self.assertEqual(parameters["index_bounds"]["string_value"], f"ids={ROWS}")
        config = self.grpc.get_model_config("tokens", as_json=True)["config"]
        self.assertEqual(config["parameters"]["index_bounds"]["string_value"], f"ids={ROWS}")

    def test_ids_inside_the_bound_are_answered_right(self):
        self.assert_everything_still_answers()

    def test_an_id_out_of_range_in_the_body_is_refused_on_both_protocols(self):
        for value in (ROWS, 99999, -1):
            ids = np.zeros((2, WIDTH), dtype=np.int64)
            ids[1, 5] = value
            with self.assertRaises(InferenceServerException) as http_error:
                self.http.infer("tokens", ids_infer(httpclient, ids))
            self.assertEqual(http_error.exception.status(), "400")
            self.assert_refused(http_error.exception, value, "1, 5")
            with self.assertRaises(InferenceServerException) as grpc_error:
                self.grpc.infer("tokens", ids_infer(grpcclient, ids))
            self.assertEqual(grpc_error.exception.status(), "StatusCode.INVALID_ARGUMENT")
            self.assert_refused(grpc_error.exception, value, "1, 5")
        self.assert_everything_still_answers()

    def test_an_id_out_of_range_in_system_shared_memory_is_refused(self):
        ids = np.full((1, WIDTH), 3, dtype=np.int64)
        ids[0, 7] = 123456
        key = "/ferry-index-" + uuid.uuid4().hex[:8]
        region = shm.create_shared_memory_region("ids", key, ids.nbytes)
        try:
            shm.set_shared_memory_region(region, [ids])
            for module, client in ((httpclient, self.http), (grpcclient, self.grpc)):
                client.register_system_shared_memory("ids", key, ids.nbytes)
                inp = module.InferInput("ids", [1, WIDTH], "INT64")
                inp.set_shared_memory("ids", ids.nbytes)
                with self.assertRaises(InferenceServerException) as error:
                    client.infer("tokens", [inp])
                self.assertIn(error.exception.status(), ("400", "StatusCode.INVALID_ARGUMENT"))
                self.assert_refused(error.exception, 123456, "0, 7")
                client.unregister_system_shared_memory("ids")
        finally:
            shm.destroy_shared_memory_region(region)
        self.assert_everything_still_answers()

    def test_an_id_out_of_range_in_cuda_shared_memory_is_refused_on_the_gpu(self):
        if "cuda_shared_memory" not in self.http.get_server_metadata()["extensions"]:
            self.skipTest("ferry serve runs on the CPU here: no CUDA shared memory to check on the GPU")
        if cudashm is None:
            self.skipTest("tritonclient.utils.cuda_shared_memory cannot be imported (it needs cuda-python)")
        for batch in (MAX_BATCH, 1):  # in place when it fills the tensor, gathered when padded
            ids = np.full((batch, WIDTH), 9, dtype=np.int64)
            ids[batch - 1, 2] = ROWS + 5
            region = cudashm.create_shared_memory_region("ids_gpu", ids.nbytes, 0)
            try:
                cudashm.set_shared_memory_region(region, [ids])
                for module, client in ((httpclient, self.http), (grpcclient, self.grpc)):
                    client.register_cuda_shared_memory("ids_gpu", cudashm.get_raw_handle(region), 0, ids.nbytes)
                    inp = module.InferInput("ids", [batch, WIDTH], "INT64")
                    inp.set_shared_memory("ids_gpu", ids.nbytes)
                    with self.assertRaises(InferenceServerException) as error:
                        client.infer("tokens", [inp])
                    self.assertIn(error.exception.status(), ("400", "StatusCode.INVALID_ARGUMENT"))
                    self.assert_refused(error.exception, ROWS + 5, f"{batch - 1}, 2")
                    client.unregister_cuda_shared_memory("ids_gpu")
                # The client's memory is left as it was: the check repairs the server's copy only.
                np.testing.assert_array_equal(cudashm.get_contents_as_numpy(region, np.int64, [batch, WIDTH]), ids)
            finally:
                cudashm.destroy_shared_memory_region(region)
        self.assert_everything_still_answers()


class UndeclaredBound(unittest.TestCase):
    """A bad id reaches a model that declares no bound: the GPU faults, and the server exits."""

    def setUp(self):
        args = backend_args()
        self.repository = tempfile.mkdtemp(prefix="ferry_fault_")
        write_model(self.repository, "bare", f'{{"engine": "lookup:bare.lookup", "max_batch": {MAX_BATCH}}}',
                    {"bare.lookup": lookup_model(False)})
        write_model(self.repository, "halved", '{"engine": "affine:halved.affine", "max_batch": 4}',
                    {"halved.affine": AFFINE})
        self.server = FerryServer(*args, repository=self.repository)
        self.http = httpclient.InferenceServerClient(self.server.http_url)

    def tearDown(self):
        if self.server.alive():
            self.server.stop()
        shutil.rmtree(self.repository)

    def test_warm_up_and_good_ids_run(self):
        # Warm-up gave the unbounded ids zeros, not garbage: the model loaded and answers.
        self.assertTrue(self.http.is_model_ready("bare"), "\n".join(self.server.log))
        parameters = self.http.get_model_metadata("bare")["parameters"]
        self.assertEqual(parameters["index_bounds"]["string_value"], "ids=none")
        ids = np.arange(WIDTH, dtype=np.int64).reshape(1, WIDTH)
        np.testing.assert_array_equal(self.http.infer("bare", ids_infer(httpclient, ids)).as_numpy("vectors"),
                                      expected(ids))

    def test_a_fault_turns_the_server_not_live_and_it_exits_with_its_code(self):
        ids = np.zeros((1, WIDTH), dtype=np.int64)
        ids[0, 3] = ROWS + 1
        with self.assertRaises(InferenceServerException) as error:
            self.http.infer("bare", ids_infer(httpclient, ids), request_id="poison")
        self.assertIn("GPU faulted", str(error.exception))
        base = f"http://{self.server.http_url}/v2"
        # At once: not live, not ready, and every model refuses with the cause (until it exits).
        statuses = []
        deadline = time.monotonic() + 2
        while self.server.alive() and time.monotonic() < deadline and len(statuses) < 1:
            try:
                statuses.append((http_status(base + "/health/live"), http_status(base + "/health/ready")))
            except (urllib.error.URLError, ConnectionError):
                break  # already gone: the exit code below still says why
        for live, ready in statuses:
            self.assertEqual((live, ready), (503, 503))
        self.assertTrue(wait_for(lambda: not self.server.alive(), timeout=20), "\n".join(self.server.log))
        self.assertEqual(self.server.process.returncode, DEVICE_FAULT_EXIT, "\n".join(self.server.log))
        log = "\n".join(self.server.log)
        self.assertEqual(log.count("the GPU faulted running model 'bare'"), 1, log)
        self.assertIn("request id 'poison'", log)
        # No wall of errors from cleanup in a lost context.
        self.assertNotIn("failed: cudaError", log)


if __name__ == "__main__":
    unittest.main()
