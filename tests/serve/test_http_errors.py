"""Every bad request gets the protocol's status and {"error": ...} naming the problem, and the
server keeps serving: after each one a good request still succeeds."""
import http.client
import json
import os
import socket
import unittest

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import ServerTestCase

X = ref.random_f32(np.random.default_rng(7), ref.TOUCH_ELEMENTS)


class HttpErrors(ServerTestCase):
    def request(self, method, path, body=b"", headers=None):
        conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            response = conn.getresponse()
            return response.status, response.read()
        finally:
            conn.close()

    def expect_error(self, status, needle, method, path, body=b"", headers=None):
        got_status, got_body = self.request(method, path, body, headers)
        self.assertEqual(got_status, status, got_body)
        message = json.loads(got_body)["error"]
        self.assertIn(needle, message)
        return message

    def tearDown(self):
        # Still serving, and still right.
        client = httpclient.InferenceServerClient(self.server.http_url)
        inp = httpclient.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_data_from_numpy(X)
        np.testing.assert_allclose(client.infer("touch", [inp]).as_numpy("output"), ref.touch(X), rtol=1e-6)
        super().tearDown()

    @staticmethod
    def touch_request(**changes):
        inp = {"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32", "data": X.tolist()}
        inp.update(changes)
        return json.dumps({"inputs": [inp]}).encode()

    @staticmethod
    def binary_request(inputs, blobs, outputs=None):
        header = json.dumps({"inputs": inputs, **({"outputs": outputs} if outputs else {})}).encode()
        return header + b"".join(blobs), {"Inference-Header-Content-Length": str(len(header))}

    def test_unknown_model(self):
        self.expect_error(404, "no_such_model", "POST", "/v2/models/no_such_model/infer", self.touch_request())
        self.expect_error(404, "no_such_model", "GET", "/v2/models/no_such_model")
        with self.assertRaises(InferenceServerException) as e:
            httpclient.InferenceServerClient(self.server.http_url).get_model_metadata("no_such_model")
        self.assertIn("unknown model", e.exception.message())

    def test_unknown_version(self):
        self.expect_error(404, "version '7'", "POST", "/v2/models/touch/versions/7/infer", self.touch_request())

    def test_broken_model(self):
        msg = self.expect_error(503, "not ready", "POST", "/v2/models/broken_engine/infer", self.touch_request())
        self.assertIn("nonsense", msg)

    def test_unknown_input(self):
        self.expect_error(400, "'inptu'", "POST", "/v2/models/touch/infer", self.touch_request(name="inptu"))

    def test_unknown_output(self):
        body = json.loads(self.touch_request())
        body["outputs"] = [{"name": "nope"}]
        self.expect_error(400, "no output 'nope'", "POST", "/v2/models/touch/infer", json.dumps(body).encode())

    def test_wrong_shape(self):
        self.expect_error(400, "shape", "POST", "/v2/models/touch/infer",
                          self.touch_request(shape=[2, ref.TOUCH_ELEMENTS // 2]))
        rows = np.zeros((1, 32), dtype=np.float16)  # mlp takes 64 columns
        blob = rows.tobytes()
        body, headers = self.binary_request(
            [{"name": "input", "shape": [1, 32], "datatype": "FP16", "parameters": {"binary_data_size": len(blob)}}], [blob])
        self.expect_error(400, "[-1,64]", "POST", "/v2/models/mlp_single/infer", body, headers)

    def test_batch_over_max_batch(self):
        rows = np.zeros((5, ref.MLP_WIDTH), dtype=np.float16)  # mlp_single: max_batch 4
        blob = rows.tobytes()
        body, headers = self.binary_request(
            [{"name": "input", "shape": [5, 64], "datatype": "FP16", "parameters": {"binary_data_size": len(blob)}}], [blob])
        self.expect_error(400, "batch 5", "POST", "/v2/models/mlp_single/infer", body, headers)

    def test_wrong_datatype(self):
        self.expect_error(400, "FP32", "POST", "/v2/models/touch/infer", self.touch_request(datatype="INT32",
                                                                                          data=[1] * ref.TOUCH_ELEMENTS))
        self.expect_error(400, "BYTES", "POST", "/v2/models/touch/infer", self.touch_request(datatype="BYTES"))

    def test_wrong_json_element(self):
        data = X.tolist()
        data[3] = "three"
        self.expect_error(400, "element 3", "POST", "/v2/models/touch/infer", self.touch_request(data=data))
        self.expect_error(400, "holds 3", "POST", "/v2/models/touch/infer", self.touch_request(data=[1, 2, 3]))

    def test_wrong_byte_size(self):
        blob = X.tobytes()[:-4]  # one element short, but consistent with binary_data_size
        body, headers = self.binary_request(
            [{"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32",
              "parameters": {"binary_data_size": len(blob)}}], [blob])
        self.expect_error(400, "needs 4096 bytes", "POST", "/v2/models/touch/infer", body, headers)

    def test_truncated_binary_body(self):
        blob = X.tobytes()
        body, headers = self.binary_request(
            [{"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32",
              "parameters": {"binary_data_size": len(blob)}}], [blob[:100]])
        self.expect_error(400, "truncated", "POST", "/v2/models/touch/infer", body, headers)

    def test_trailing_bytes(self):
        blob = X.tobytes()
        body, headers = self.binary_request(
            [{"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32",
              "parameters": {"binary_data_size": len(blob)}}], [blob, b"extra"])
        self.expect_error(400, "5 bytes after", "POST", "/v2/models/touch/infer", body, headers)

    def test_header_length_beyond_body(self):
        body = self.touch_request()
        self.expect_error(400, "Inference-Header-Content-Length", "POST", "/v2/models/touch/infer", body,
                          {"Inference-Header-Content-Length": str(len(body) + 1)})
        self.expect_error(400, "not a byte count", "POST", "/v2/models/touch/infer", body,
                          {"Inference-Header-Content-Length": "many"})

    def test_inference_header_length_given_twice(self):
        # Once the first was taken and the second silently ignored.
        blob = X.tobytes()
        body, headers = self.binary_request(
            [{"name": "input", "shape": [ref.TOUCH_ELEMENTS], "datatype": "FP32",
              "parameters": {"binary_data_size": len(blob)}}], [blob])
        length = headers["Inference-Header-Content-Length"]
        for values in ((length, length), (length, str(int(length) + 4))):
            with self.subTest(values=values):
                conn = http.client.HTTPConnection("127.0.0.1", self.server.http_port, timeout=30)
                try:
                    conn.putrequest("POST", "/v2/models/touch/infer")
                    for value in values:
                        conn.putheader("Inference-Header-Content-Length", value)
                    conn.putheader("Content-Length", str(len(body)))
                    conn.endheaders(body)
                    response = conn.getresponse()
                    self.assertEqual(response.status, 400)
                    self.assertIn("Inference-Header-Content-Length is given more than once",
                                  json.loads(response.read())["error"])
                finally:
                    conn.close()
        # Once, it is taken.
        status, _ = self.request("POST", "/v2/models/touch/infer", body, headers)
        self.assertEqual(status, 200)

    def test_oversize_inference_header(self):
        self.expect_error(413, "exceeds the server's limit", "POST", "/v2/models/touch/infer", b"{}",
                          {"Inference-Header-Content-Length": str(1 << 40)})

    def test_oversize_http_header(self):
        status, _ = self.request("GET", "/v2/health/live", headers={"X-Big": "a" * 100_000})
        self.assertGreaterEqual(status, 400)

    def test_malformed_json(self):
        self.expect_error(400, "malformed JSON", "POST", "/v2/models/touch/infer", b'{"inputs": [')
        self.expect_error(400, "\"inputs\"", "POST", "/v2/models/touch/infer", b'{"outputs": []}')

    def test_deep_json_nesting(self):
        # 200 KB of brackets: parsed, walked or quoted recursively, this overflows the stack.
        deep = b"[" * 100_000 + b"]" * 100_000
        data_body = (b'{"inputs": [{"name": "input", "shape": [1024], "datatype": "FP32", "data": ' + deep +
                     b'}]}')
        self.expect_error(400, "nested deeper than 64", "POST", "/v2/models/touch/infer", data_body)
        id_body = b'{"id": ' + deep + b', ' + self.touch_request()[1:]
        self.expect_error(400, "nested deeper than 64", "POST", "/v2/models/touch/infer", id_body)

    def test_number_beyond_double(self):
        body = self.touch_request().replace(b'"data": [', b'"data": [1e999, ', 1)
        self.expect_error(400, "number out of range", "POST", "/v2/models/touch/infer", body)

    def test_value_beyond_fp32(self):
        # Once stored as infinity and answered 200 with nulls.
        data = X.tolist()
        data[5] = 1e300
        self.expect_error(400, "element 5 (1e+300) is out of range for FP32", "POST", "/v2/models/touch/infer",
                          self.touch_request(data=data))

    # A sanitizer's allocator holds freed memory back on purpose (scripts/test_sanitized.sh says
    # which one runs): memory bounds are checked only without one.
    sanitized = bool(os.environ.get("FERRY_SANITIZER"))

    def assert_memory_grew_less_than(self, before, bound):
        if not self.sanitized:
            self.assertLess(self.peak_memory() - before, bound)

    def peak_memory(self):
        """The server's peak resident memory so far, in bytes."""
        with open(f"/proc/{self.server.process.pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        raise AssertionError("no VmHWM in /proc/PID/status")

    def test_large_json_tensor_with_the_wrong_shape(self):
        # 60 MB of JSON numbers for a model that takes 1024: refused from the shape, before any
        # number is decoded; a document of it would take ~20 times the body.
        n = 15_000_000
        data = b"[" + b"1.5," * (n - 1) + b"1.5]"
        shape_first = b'{"inputs": [{"name": "input", "shape": [%d], "datatype": "FP32", "data": %s}]}' % (n, data)
        data_first = b'{"inputs": [{"data": %s, "datatype": "FP32", "name": "input", "shape": [%d]}]}' % (data, n)
        junk = b'{"junk": %s, "inputs": []}' % data
        before = self.peak_memory()
        for body in (shape_first, data_first):
            self.expect_error(400, "has shape [1024], the request gives [15000000]", "POST",
                              "/v2/models/touch/infer", body)
        # The same numbers outside any tensor: no document grows beyond a bound either.
        self.expect_error(400, "more than 65536 values", "POST", "/v2/models/touch/infer", junk)
        self.assert_memory_grew_less_than(before, 2 * len(shape_first))

    def test_shape_beyond_memory(self):
        # Once a 500 (bad_alloc): the claimed element count was reserved before it was checked.
        self.expect_error(400, "the request gives [1099511627776]", "POST", "/v2/models/touch/infer",
                          self.touch_request(shape=[1 << 40]))
        self.expect_error(400, "has batch 1073741824", "POST", "/v2/models/mlp_single/infer",
                          json.dumps({"inputs": [{"name": "input", "shape": [1 << 30, 64], "datatype": "FP16",
                                                  "data": [0]}]}).encode())

    def test_long_client_values_are_quoted_short(self):
        message = self.expect_error(400, '"id" must be a string', "POST", "/v2/models/touch/infer",
                                    b'{"id": [' + b"1," * 60_000 + b'1], ' + self.touch_request()[1:])
        self.assertLess(len(message), 200)

    def test_unknown_parameter(self):
        body = json.loads(self.touch_request())
        body["outputs"] = [{"name": "output", "parameters": {"classification": 3}}]
        self.expect_error(400, "classification", "POST", "/v2/models/touch/infer", json.dumps(body).encode())

    def test_shared_memory_refused_without_flag(self):
        self.expect_error(403, "--allow-client-shm", "POST", "/v2/systemsharedmemory/region/r/register",
                          json.dumps({"key": "/x", "offset": 0, "byte_size": 16}).encode())
        body = self.touch_request()
        body = json.loads(body)
        del body["inputs"][0]["data"]
        body["inputs"][0]["parameters"] = {"shared_memory_region": "r", "shared_memory_byte_size": 4096}
        self.expect_error(403, "--allow-client-shm", "POST", "/v2/models/touch/infer", json.dumps(body).encode())

    def test_large_body_to_a_route_that_takes_none(self):
        # 512 MB announced to an endpoint that ignores its body: refused from its headers, unread
        # (four such bodies once pushed the server to 2 GB).
        before = self.peak_memory()
        with socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10) as s:
            s.sendall(b"POST /v2/repository/index HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (512 << 20) +
                      b"x" * 65536)
            answer = b""
            while b"}" not in answer:
                chunk = s.recv(65536)
                if not chunk:
                    break
                answer += chunk
        head, _, body = answer.partition(b"\r\n\r\n")
        self.assertTrue(head.startswith(b"HTTP/1.1 413"), head)
        self.assertIn("65536 bytes for every other endpoint", json.loads(body)["error"])
        self.assert_memory_grew_less_than(before, 16 << 20)
        self.expect_error(413, "65536 bytes for every other endpoint", "POST", "/v2/systemsharedmemory/region/r/register",
                          b" " * 65537)
        # Small bodies there are still read, and an inference body far above them is taken.
        status, _ = self.request("POST", "/v2/repository/index", b"{}")
        self.assertEqual(status, 200)

    def test_long_path(self):
        # 40,000 characters overflowed the stack of the regular expressions routes were once
        # matched with.
        self.expect_error(414, "request path of 40011 bytes exceeds the server's limit of 8192 bytes", "GET",
                          "/v2/models/" + "a" * 40_000)
        self.expect_error(414, "exceeds the server's limit", "POST", "/v2/models/" + "a" * 40_000 + "/infer",
                          self.touch_request())
        message = self.expect_error(404, "unknown model 'aaaa", "GET", "/v2/models/" + "a" * 8000)
        self.assertLess(len(message), 200)

    def test_unknown_endpoint(self):
        self.expect_error(404, "no such endpoint", "GET", "/v2/nothing/here")

    def test_client_that_disconnects_mid_body(self):
        # Announces a large body, sends a little, hangs up: the server drops it and carries on.
        with socket.create_connection(("127.0.0.1", self.server.http_port), timeout=10) as s:
            s.sendall(b"POST /v2/models/touch/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"inputs\"")


if __name__ == "__main__":
    unittest.main()
