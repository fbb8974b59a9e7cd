"""The system shared-memory extension with Triton's client and its shared_memory utilities:
register/status/unregister over HTTP and gRPC, inputs read from and outputs written to client
regions (with offsets), and every bad range, key or name refused with the server still serving."""
import base64
import http.client
import json
import os
import re
import unittest
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import ServerTestCase

TOUCH_BYTES = ref.TOUCH_ELEMENTS * 4


class SystemSharedMemory(ServerTestCase):
    server_args = ("--allow-client-shm",)

    def setUp(self):
        self.http = httpclient.InferenceServerClient(self.server.http_url)
        self.grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        tag = f"{os.getpid()}_{self._testMethodName}"
        # One region for inputs and one for outputs, each with room for two tensors.
        self.input_key, self.output_key = f"/ferry_in_{tag}", f"/ferry_out_{tag}"
        self.input_region = shm.create_shared_memory_region("in", self.input_key, 2 * TOUCH_BYTES)
        self.output_region = shm.create_shared_memory_region("out", self.output_key, 2 * TOUCH_BYTES)

    def tearDown(self):
        self.http.unregister_system_shared_memory()
        shm.destroy_shared_memory_region(self.input_region)
        shm.destroy_shared_memory_region(self.output_region)
        super().tearDown()

    def register(self, client):
        client.register_system_shared_memory("in", self.input_key, 2 * TOUCH_BYTES)
        client.register_system_shared_memory("out", self.output_key, 2 * TOUCH_BYTES)

    def test_extension_is_announced(self):
        self.assertIn("system_shared_memory", self.http.get_server_metadata()["extensions"])

    def test_register_status_unregister(self):
        self.register(self.http)
        status = {r["name"]: r for r in self.http.get_system_shared_memory_status()}
        self.assertEqual(status["in"]["key"], self.input_key)
        self.assertEqual(int(status["in"]["byte_size"]), 2 * TOUCH_BYTES)
        grpc_status = self.grpc.get_system_shared_memory_status(as_json=True)["regions"]
        self.assertEqual(set(grpc_status), {"in", "out"})
        self.grpc.unregister_system_shared_memory("in")
        self.assertEqual([r["name"] for r in self.http.get_system_shared_memory_status()], ["out"])
        with self.assertRaises(InferenceServerException) as e:
            self.http.unregister_system_shared_memory("in")
        self.assertIn("no shared-memory region 'in'", e.exception.message())

    def run_touch(self, module, client, x_offset, y_offset):
        x = ref.random_f32(np.random.default_rng(x_offset + y_offset), ref.TOUCH_ELEMENTS)
        shm.set_shared_memory_region(self.input_region, [x], offset=x_offset)
        inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory("in", TOUCH_BYTES, offset=x_offset)
        out = module.InferRequestedOutput("output")
        out.set_shared_memory("out", TOUCH_BYTES, offset=y_offset)
        result = client.infer("touch", [inp], outputs=[out])
        y = shm.get_contents_as_numpy(self.output_region, np.float32, [ref.TOUCH_ELEMENTS], offset=y_offset)
        np.testing.assert_allclose(y, ref.touch(x), rtol=1e-6)
        return result

    def test_infer_through_shared_memory_http(self):
        self.register(self.http)
        result = self.run_touch(httpclient, self.http, 0, 0)
        # As Triton's server answers: the output is described, its data is in the region (and
        # Triton's C++ client would read any "parameters" here as binary data of the response).
        output = result.get_output("output")
        self.assertEqual(output["shape"], [ref.TOUCH_ELEMENTS])
        self.assertNotIn("parameters", output)
        self.assertNotIn("data", output)
        self.run_touch(httpclient, self.http, TOUCH_BYTES, TOUCH_BYTES)

    def test_infer_through_shared_memory_grpc(self):
        self.register(self.grpc)
        self.run_touch(grpcclient, self.grpc, 0, TOUCH_BYTES)
        self.run_touch(grpcclient, self.grpc, TOUCH_BYTES, 0)

    def test_shared_memory_input_with_output_in_the_response(self):
        self.register(self.http)
        rows = ref.random_rows(np.random.default_rng(5), 2)
        shm.set_shared_memory_region(self.input_region, [rows], offset=64)
        inp = httpclient.InferInput("input", [2, ref.MLP_WIDTH], "FP16")
        inp.set_shared_memory("in", rows.nbytes, offset=64)
        got = self.http.infer("mlp_single", [inp]).as_numpy("output")
        direct = httpclient.InferInput("input", [2, ref.MLP_WIDTH], "FP16")
        direct.set_data_from_numpy(rows)
        np.testing.assert_array_equal(got, self.http.infer("mlp_single", [direct]).as_numpy("output"))

    def expect_error(self, call, needle):
        with self.assertRaises(InferenceServerException) as e:
            call()
        self.assertIn(needle, e.exception.message())

    def test_key_with_a_nul_byte(self):
        # shm_open() once read the key only up to the NUL, silently mapping another object than
        # the one named (here, the real input region).
        for client in (self.http, self.grpc):
            with self.subTest(client=type(client).__module__):
                self.expect_error(lambda: client.register_system_shared_memory("in", self.input_key + "\0x",
                                                                              2 * TOUCH_BYTES),
                                  "holds U+0000, a control character")
        self.assertEqual(self.http.get_system_shared_memory_status(), [])
        self.register(self.http)
        self.run_touch(httpclient, self.http, 0, 0)

    def test_deep_json_in_a_registration(self):
        connection = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=30)
        try:
            connection.request("POST", "/v2/systemsharedmemory/region/in/register",
                               body=b"[" * 30_000 + b"]" * 30_000)
            response = connection.getresponse()
            self.assertEqual(response.status, 400)
            self.assertIn("nested deeper than 64", json.loads(response.read())["error"])
        finally:
            connection.close()
        self.register(self.http)
        self.run_touch(httpclient, self.http, 0, 0)

    def test_bad_regions_and_ranges(self):
        self.register(self.http)
        for client in (self.http, self.grpc):
            with self.subTest(client=type(client).__module__):
                self.expect_error(lambda: client.register_system_shared_memory("in", self.input_key, 16),
                                  "already registered")
                self.expect_error(lambda: client.register_system_shared_memory("x", "/ferry_no_such_key", 16),
                                  "cannot open key")
                self.expect_error(lambda: client.register_system_shared_memory("x", self.input_key, 16,
                                                                              offset=2 * TOUCH_BYTES),
                                  "exceeds the")
                self.expect_error(lambda: client.register_system_shared_memory("x", self.input_key, 0), "byte_size is 0")
        module_client = ((httpclient, self.http), (grpcclient, self.grpc))
        for module, client in module_client:
            def infer(region="in", size=TOUCH_BYTES, offset=0, out=None):
                inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                inp.set_shared_memory(region, size, offset=offset)
                outputs = None
                if out:
                    o = module.InferRequestedOutput("output")
                    o.set_shared_memory(*out)
                    outputs = [o]
                return client.infer("touch", [inp], outputs=outputs)
            with self.subTest(client=module.__name__):
                self.expect_error(lambda: infer(region="nope"), "region 'nope' is not registered")
                self.expect_error(lambda: infer(offset=TOUCH_BYTES + 4), "outside region 'in'")
                self.expect_error(lambda: infer(offset=2**62), "outside region 'in'")
                self.expect_error(lambda: infer(size=TOUCH_BYTES - 4), "needs 4096 bytes")
                self.expect_error(lambda: infer(out=("out", TOUCH_BYTES - 4, 0)), "its shared-memory range has 4092")
                self.expect_error(lambda: infer(out=("out", TOUCH_BYTES, TOUCH_BYTES + 8)), "outside region 'out'")
        self.http.unregister_system_shared_memory("in")
        self.expect_error(lambda: self.run_touch(httpclient, self.http, 0, 0), "region 'in' is not registered")

    def resize_object(self, key, size):
        """What a client may do to its object at any time after registering it."""
        fd = os.open("/dev/shm" + key, os.O_RDWR)
        try:
            os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def test_a_region_shrunk_after_registering_is_refused(self):
        """Once crashed the server (SIGBUS copying from the unmapped pages)."""
        self.register(self.http)
        self.resize_object(self.input_key, 0)
        self.resize_object(self.output_key, TOUCH_BYTES)
        for module, client in ((httpclient, self.http), (grpcclient, self.grpc)):
            with self.subTest(client=module.__name__):
                inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                inp.set_shared_memory("in", TOUCH_BYTES)
                self.expect_error(lambda: client.infer("touch", [inp]),
                                  f"input 'input': shared-memory region 'in' has shrunk: its object "
                                  f"'{self.input_key}' is now 0 bytes")
                direct = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
                direct.set_data_from_numpy(np.zeros(ref.TOUCH_ELEMENTS, np.float32))
                out = module.InferRequestedOutput("output")
                out.set_shared_memory("out", TOUCH_BYTES, offset=TOUCH_BYTES)
                self.expect_error(lambda: client.infer("touch", [direct], outputs=[out]),
                                  f"output 'output': shared-memory region 'out' has shrunk: its object "
                                  f"'{self.output_key}' is now {TOUCH_BYTES} bytes")
        # Grown back, the same registrations serve again.
        self.resize_object(self.input_key, 2 * TOUCH_BYTES)
        self.resize_object(self.output_key, 2 * TOUCH_BYTES)
        self.run_touch(httpclient, self.http, TOUCH_BYTES, TOUCH_BYTES)
        self.run_touch(grpcclient, self.grpc, 0, 0)


class SharedMemoryRegionLimit(ServerTestCase):
    """Registering one small region over and over once exhausted the server's memory maps, and
    then every request failed, the unregister that would have fixed it included. Now the count
    of regions is limited (--max-shm-regions), refusals say so, and the server keeps serving."""

    LIMIT = 4
    server_args = ("--allow-client-shm", "--max-shm-regions", str(LIMIT))

    def setUp(self):
        self.http = httpclient.InferenceServerClient(self.server.http_url)
        self.grpc = grpcclient.InferenceServerClient(self.server.grpc_url)
        self.key = f"/ferry_limit_{os.getpid()}"
        self.region = shm.create_shared_memory_region("limit", self.key, TOUCH_BYTES)

    def tearDown(self):
        self.http.unregister_system_shared_memory()
        shm.destroy_shared_memory_region(self.region)
        super().tearDown()

    def region_metrics(self):
        text = urllib.request.urlopen(f"http://{self.server.http_url}/metrics").read().decode()
        return {name: int(value) for name, value in
                re.findall(r'^(ferry_shm_region(?:s|_limit)){kind="system"} (\d+)$', text, re.M)}

    def test_registrations_past_the_limit_are_refused_and_the_server_keeps_serving(self):
        for i in range(self.LIMIT):
            self.http.register_system_shared_memory(f"r{i}", self.key, TOUCH_BYTES)
        self.assertEqual(self.region_metrics(), {"ferry_shm_regions": self.LIMIT, "ferry_shm_region_limit": self.LIMIT})
        message = (f"cannot register shared-memory region 'extra': {self.LIMIT} shared-memory regions are "
                   f"registered, this server's limit (--max-shm-regions); unregister one first")
        for _ in range(100):  # as the attack did, if not 64,866 times
            with self.assertRaises(InferenceServerException) as e:
                self.http.register_system_shared_memory("extra", self.key, TOUCH_BYTES)
            self.assertEqual(e.exception.status(), "429")
            self.assertEqual(e.exception.message(), message)
        with self.assertRaises(InferenceServerException) as e:
            self.grpc.register_system_shared_memory("extra", self.key, TOUCH_BYTES)
        self.assertEqual(e.exception.status(), "StatusCode.RESOURCE_EXHAUSTED")
        self.assertEqual(e.exception.message(), message)

        # Every region still serves, and unregistering makes room.
        x = ref.random_f32(np.random.default_rng(3), ref.TOUCH_ELEMENTS)
        shm.set_shared_memory_region(self.region, [x])
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory(f"r{self.LIMIT - 1}", TOUCH_BYTES)
        np.testing.assert_allclose(self.http.infer("touch", [inp]).as_numpy("output"), ref.touch(x), rtol=1e-6)
        self.grpc.unregister_system_shared_memory("r0")
        self.grpc.register_system_shared_memory("extra", self.key, TOUCH_BYTES)
        self.assertEqual(len(self.http.get_system_shared_memory_status()), self.LIMIT)
        self.http.unregister_system_shared_memory()
        self.assertEqual(self.region_metrics()["ferry_shm_regions"], 0)


class CudaSharedMemory(ServerTestCase):
    """Register/status/unregister; without a GPU registering is refused, saying why. (Serving
    tensors from CUDA regions is refused by name on any machine, see cuda_shm_registry.hpp.)"""

    server_args = ("--allow-client-shm",)

    def test_register_refused_or_handle_checked(self):
        on_cpu = any("on the CPU" in line for line in self.server.log)
        for client in (httpclient.InferenceServerClient(self.server.http_url),
                       grpcclient.InferenceServerClient(self.server.grpc_url)):
            with self.subTest(client=type(client).__module__):
                with self.assertRaises(InferenceServerException) as e:
                    # As tritonclient.utils.cuda_shared_memory.get_raw_handle gives it: base64.
                    client.register_cuda_shared_memory("c", base64.b64encode(b"\0" * 64).decode(), 0, 1024)
                expected = "needs a GPU" if on_cpu else "cudaIpcOpenMemHandle failed"  # a handle of zeros
                self.assertIn(expected, e.exception.message())
                with self.assertRaises(InferenceServerException) as e:
                    client.unregister_cuda_shared_memory("c")
                self.assertIn("no CUDA shared-memory region 'c'", e.exception.message())
        self.assertEqual(httpclient.InferenceServerClient(self.server.http_url).get_cuda_shared_memory_status(), [])


if __name__ == "__main__":
    unittest.main()
