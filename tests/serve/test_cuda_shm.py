"""The CUDA shared-memory extension on a GPU, with Triton's client and its cuda_shared_memory
utilities (which need cuda-python): inputs read from client device memory (bound in place when a
lone request fills the tensor exactly and is aligned; gathered on the device when padded into a
batch or misaligned), outputs written into a client region, over HTTP and gRPC.

Skips, saying why, where it cannot run: `ferry serve` on the CPU (no GPU: it does not announce
cuda_shared_memory), or tritonclient.utils.cuda_shared_memory not importable (no cuda-python)."""
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import ServerTestCase
from other_user import other_user_unavailable, run_as_other_user

try:
    import tritonclient.utils.cuda_shared_memory as cudashm
    CUDASHM_IMPORT_ERROR = None
except Exception as e:  # ImportError, or cuda-python failing to load the driver
    cudashm = None
    CUDASHM_IMPORT_ERROR = f"{type(e).__name__}: {e}"

TOUCH_BYTES = ref.TOUCH_ELEMENTS * 4
MLP_ROW_BYTES = ref.MLP_WIDTH * 2  # FP16
MISALIGNMENT = 16  # bytes before a tensor placed off the 256-byte boundary engines bind at


class CudaSharedMemory(ServerTestCase):
    server_args = ("--allow-client-shm",)

    @classmethod
    def setUpClass(cls):
        if cudashm is None:
            raise unittest.SkipTest("tritonclient.utils.cuda_shared_memory cannot be imported "
                                    f"(it needs cuda-python and a CUDA driver): {CUDASHM_IMPORT_ERROR}")
        super().setUpClass()
        extensions = httpclient.InferenceServerClient(cls.server.http_url).get_server_metadata()["extensions"]
        if "cuda_shared_memory" not in extensions:
            cls.server.stop()
            raise unittest.SkipTest("ferry serve reports no GPU (no cuda_shared_memory extension): "
                                    + " | ".join(line for line in cls.server.log if "CPU" in line))

    def setUp(self):
        self.http = httpclient.InferenceServerClient(self.server.http_url)
        self.grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        self.regions = []

    def tearDown(self):
        self.http.unregister_cuda_shared_memory()
        for region in self.regions:
            cudashm.destroy_shared_memory_region(region)
        super().tearDown()

    def region(self, client, name, byte_size, device=0):
        handle = cudashm.create_shared_memory_region(name, byte_size, device)
        self.regions.append(handle)
        client.register_cuda_shared_memory(name, cudashm.get_raw_handle(handle), device, byte_size)
        return handle

    def test_extension_is_announced_and_regions_listed(self):
        self.assertIn("cuda_shared_memory", self.http.get_server_metadata()["extensions"])
        self.region(self.http, "listed", 4096)
        status = self.http.get_cuda_shared_memory_status()
        self.assertEqual([r["name"] for r in status], ["listed"])
        self.assertEqual(int(status[0]["byte_size"]), 4096)

    def touch_through_cuda_regions(self, module, client, misaligned):
        """touch (4 KiB, not batched): the input in one CUDA region, the output into another."""
        pad = MISALIGNMENT if misaligned else 0
        x = ref.random_f32(np.random.default_rng(7 + pad), ref.TOUCH_ELEMENTS)
        inputs = self.region(client, "x", TOUCH_BYTES + pad)
        outputs = self.region(client, "y", TOUCH_BYTES)
        cudashm.set_shared_memory_region(inputs, [np.zeros(pad, np.uint8), x] if pad else [x])
        inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory("x", TOUCH_BYTES, offset=pad)
        out = module.InferRequestedOutput("output")
        out.set_shared_memory("y", TOUCH_BYTES)
        client.infer("touch", [inp], outputs=[out])
        y = cudashm.get_contents_as_numpy(outputs, np.float32, [ref.TOUCH_ELEMENTS])
        np.testing.assert_allclose(y, ref.touch(x), rtol=1e-6)

    def test_input_bound_in_place_http(self):
        self.touch_through_cuda_regions(httpclient, self.http, misaligned=False)

    def test_input_bound_in_place_grpc(self):
        self.touch_through_cuda_regions(grpcclient, self.grpc, misaligned=False)

    def test_misaligned_input_is_gathered_on_the_device(self):
        self.touch_through_cuda_regions(httpclient, self.http, misaligned=True)

    def test_requests_run_on_the_gpu_their_region_is_on(self):
        """With every GPU serving (the default --devices all), a region on GPU n is read by an
        instance on GPU n: a request placed on another GPU would be refused, so 8 requests per GPU
        in a row, each with its own data and answer, show placement follows the data."""
        from cuda.bindings import runtime
        error, gpus = runtime.cudaGetDeviceCount()
        if error != runtime.cudaError_t.cudaSuccess or gpus < 2:
            self.skipTest(f"needs 2 GPUs, found {gpus if error == runtime.cudaError_t.cudaSuccess else 0}")
        for device in range(gpus):
            inputs = self.region(self.http, f"x{device}", TOUCH_BYTES, device)
            for request in range(8):
                with self.subTest(gpu=device, request=request):
                    x = ref.random_f32(np.random.default_rng(100 * device + request), ref.TOUCH_ELEMENTS)
                    cudashm.set_shared_memory_region(inputs, [x])
                    inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                    inp.set_shared_memory(f"x{device}", TOUCH_BYTES)
                    result = self.http.infer("touch", [inp])
                    np.testing.assert_allclose(result.as_numpy("output"), ref.touch(x), rtol=1e-6)

    def test_output_returned_in_the_response(self):
        x = ref.random_f32(np.random.default_rng(3), ref.TOUCH_ELEMENTS)
        inputs = self.region(self.grpc, "x", TOUCH_BYTES)
        cudashm.set_shared_memory_region(inputs, [x])
        inp = grpcclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory("x", TOUCH_BYTES)
        result = self.grpc.infer("touch", [inp])
        np.testing.assert_allclose(result.as_numpy("output"), ref.touch(x), rtol=1e-6)

    def test_padded_batch_input_is_gathered_on_the_device(self):
        """mlp_batched runs 8 rows; 3 rows from a CUDA region are padded on the device and must
        give what the same rows sent in the request body give."""
        rows = ref.random_rows(np.random.default_rng(11), 3)
        inputs = self.region(self.http, "rows", rows.nbytes)
        cudashm.set_shared_memory_region(inputs, [rows])
        inp = httpclient.InferInput("input", list(rows.shape), "FP16")
        inp.set_shared_memory("rows", rows.nbytes)
        from_region = self.http.infer("mlp_batched", [inp]).as_numpy("output")
        body = httpclient.InferInput("input", list(rows.shape), "FP16")
        body.set_data_from_numpy(rows)
        from_body = self.http.infer("mlp_batched", [body]).as_numpy("output")
        self.assertEqual(from_region.shape, (3, ref.MLP_WIDTH))
        np.testing.assert_array_equal(from_region, from_body)

    def test_batch_merging_a_cuda_input_with_a_body_input(self):
        """Two requests sent together join one mlp_batched run (its batching delay is 2 ms): one
        from a CUDA region, one in the request body; each must get its own rows' answer."""
        rng = np.random.default_rng(13)
        from_device, from_body = ref.random_rows(rng, 2), ref.random_rows(rng, 3)
        expected = []
        for rows in (from_device, from_body):
            inp = httpclient.InferInput("input", list(rows.shape), "FP16")
            inp.set_data_from_numpy(rows)
            expected.append(self.http.infer("mlp_batched", [inp]).as_numpy("output"))
        inputs = self.region(self.http, "rows", from_device.nbytes)
        cudashm.set_shared_memory_region(inputs, [from_device])
        device_input = httpclient.InferInput("input", list(from_device.shape), "FP16")
        device_input.set_shared_memory("rows", from_device.nbytes)
        body_input = httpclient.InferInput("input", list(from_body.shape), "FP16")
        body_input.set_data_from_numpy(from_body)
        client = httpclient.InferenceServerClient(self.server.http_url, concurrency=2)
        for _ in range(5):  # timing decides whether they merge; either way the answers must hold
            pending = [client.async_infer("mlp_batched", [device_input]),
                       client.async_infer("mlp_batched", [body_input])]
            for result, want in zip(pending, expected):
                # Rows at another position of the batch may round differently in FP16.
                np.testing.assert_allclose(result.get_result().as_numpy("output").astype(np.float32),
                                           want.astype(np.float32), rtol=1e-2, atol=1e-3)
        client.close()

    def test_bad_ranges_and_unknown_regions_are_refused(self):
        self.region(self.http, "small", 1024)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory("small", TOUCH_BYTES)
        with self.assertRaises(InferenceServerException) as e:
            self.http.infer("touch", [inp])
        self.assertIn("outside region 'small' of 1024 bytes", e.exception.message())
        inp.set_shared_memory("missing", TOUCH_BYTES)
        with self.assertRaises(InferenceServerException) as e:
            self.http.infer("touch", [inp])
        self.assertIn("'missing' is not registered", e.exception.message())

    def test_another_users_client_cannot_reach_a_region(self):
        """A region is its registering client's: a client of another local user (nobody, through
        setpriv) neither lists it, finds it by name, reads or writes it in an inference, nor
        unregisters it; each 404 / NOT_FOUND, as for a region that does not exist."""
        why = other_user_unavailable()
        if why:
            self.skipTest(why)
        x = ref.random_f32(np.random.default_rng(11), ref.TOUCH_ELEMENTS)
        handle = self.region(self.http, "mine", TOUCH_BYTES)
        cudashm.set_shared_memory_region(handle, [x])
        not_found = {"http": "404", "grpc": "StatusCode.NOT_FOUND"}
        for protocol in ("http", "grpc"):
            listed, by_name, read, written, unregistered = run_as_other_user(
                self.server.http_url, self.server.grpc_url,
                [["status", protocol, "cuda", ""], ["status", protocol, "cuda", "mine"],
                 ["infer", protocol, "mine", ""], ["infer_body_into", protocol, "mine"],
                 ["unregister", protocol, "cuda", "mine"]])
            self.assertEqual(listed, {"ok": True, "regions": {}})
            for outcome in (by_name, read, written, unregistered):
                self.assertEqual((outcome["ok"], outcome["code"]), (False, not_found[protocol]), outcome)
                self.assertIn("'mine'", outcome["message"])
        np.testing.assert_array_equal(cudashm.get_contents_as_numpy(handle, np.float32, [ref.TOUCH_ELEMENTS]), x)
        self.assertEqual([r["name"] for r in self.http.get_cuda_shared_memory_status()], ["mine"])

    def test_byte_size_beyond_the_allocation_is_refused(self):
        handle = cudashm.create_shared_memory_region("short", 4096, 0)
        self.regions.append(handle)
        with self.assertRaises(InferenceServerException) as e:
            self.http.register_cuda_shared_memory("short", cudashm.get_raw_handle(handle), 0, 1 << 40)
        self.assertIn("reaches past the device memory", e.exception.message())


if __name__ == "__main__":
    unittest.main()
