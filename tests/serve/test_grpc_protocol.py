"""KServe v2 over gRPC with Triton's own client: health, metadata, ModelInfer with
raw_input_contents / raw_output_contents and typed contents, statistics, the repository index,
every bad request (with the server still serving afterwards), and concurrent clients."""
import unittest

import grpc
import numpy as np
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

import references as ref
from ferry_server import ServerTestCase, run_clients


class GrpcProtocol(ServerTestCase):
    def setUp(self):
        self.client = grpcclient.InferenceServerClient(self.server.grpc_url)

    def tearDown(self):
        # Still serving, and still right.
        x = ref.random_f32(np.random.default_rng(99), ref.TOUCH_ELEMENTS)
        np.testing.assert_allclose(self.touch(x).as_numpy("output"), ref.touch(x), rtol=1e-6)
        super().tearDown()

    def touch(self, x, model="touch", **kwargs):
        inp = grpcclient.InferInput("input", [x.size], "FP32")
        inp.set_data_from_numpy(x)
        return self.client.infer(model, [inp], **kwargs)

    def expect_error(self, call, code, needle):
        with self.assertRaises(InferenceServerException) as e:
            call()
        self.assertIn(needle, e.exception.message())
        self.assertEqual(e.exception.status(), f"StatusCode.{code}")
        return e.exception.message()

    def test_health_and_metadata(self):
        self.assertTrue(self.client.is_server_live())
        self.assertFalse(self.client.is_server_ready())  # strict readiness: the fixtures' broken models
        meta = self.client.get_server_metadata(as_json=True)
        self.assertEqual(meta["name"], "ferry")
        self.assertIn("binary_tensor_data", meta["extensions"])
        meta = self.client.get_model_metadata("mlp_batched", as_json=True)
        self.assertEqual(meta["inputs"], [{"name": "input", "datatype": "FP16", "shape": ["-1", str(ref.MLP_WIDTH)]}])
        self.assertTrue(self.client.is_model_ready("touch"))
        self.assertFalse(self.client.is_model_ready("broken_engine"))

    def test_model_config(self):
        # The same document as HTTP's /config; perf_analyzer asks for it first over gRPC too.
        config = self.client.get_model_config("mlp_batched", as_json=True)["config"]
        self.assertEqual(config["name"], "mlp_batched")
        self.assertEqual(config["max_batch_size"], 8)
        self.assertEqual(config["input"], [{"name": "input", "data_type": "TYPE_FP16", "dims": [str(ref.MLP_WIDTH)]}])
        self.assertEqual(config["output"], [{"name": "output", "data_type": "TYPE_FP16", "dims": [str(ref.MLP_WIDTH)]}])
        self.assertEqual(config["dynamic_batching"], {"max_queue_delay_microseconds": "2000"})
        touch = self.client.get_model_config("touch", as_json=True)["config"]
        self.assertNotIn("max_batch_size", touch)  # 0: no batch dim, left out as proto3 defaults are
        self.assertEqual(touch["input"], [{"name": "input", "data_type": "TYPE_FP32", "dims": [str(ref.TOUCH_ELEMENTS)]}])
        self.expect_error(lambda: self.client.get_model_config("no_such_model"), "NOT_FOUND", "no_such_model")
        self.expect_error(lambda: self.client.get_model_config("broken_engine"), "UNAVAILABLE", "nonsense")

    def test_broken_and_unknown_models(self):
        self.expect_error(lambda: self.client.is_model_ready("no_such_model"), "NOT_FOUND", "no_such_model")
        self.expect_error(lambda: self.client.get_model_metadata("broken_config"), "UNAVAILABLE", "inflght")
        x = np.zeros(ref.TOUCH_ELEMENTS, dtype=np.float32)
        self.expect_error(lambda: self.touch(x, model="broken_engine"), "UNAVAILABLE", "nonsense")
        self.expect_error(lambda: self.touch(x, model="no_such_model"), "NOT_FOUND", "unknown model")
        self.expect_error(lambda: self.touch(x, model_version="3"), "NOT_FOUND", "version '3'")
        index = {m["name"]: m for m in self.client.get_model_repository_index(as_json=True)["models"]}
        self.assertEqual(index["broken_engine"]["state"], "UNAVAILABLE")
        self.assertEqual(index["touch"]["state"], "READY")

    def test_infer_raw(self):
        x = ref.random_f32(np.random.default_rng(1), ref.TOUCH_ELEMENTS)
        result = self.touch(x, outputs=[grpcclient.InferRequestedOutput("output")], request_id="g1")
        np.testing.assert_allclose(result.as_numpy("output"), ref.touch(x), rtol=1e-6)
        self.assertEqual(result.get_response().id, "g1")
        x = ref.random_f32(np.random.default_rng(2), ref.REDUCE_ELEMENTS)
        inp = grpcclient.InferInput("input", [x.size], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_allclose(self.client.infer("reduce", [inp]).as_numpy("sums"), ref.reduce(x), rtol=1e-5, atol=1e-5)

    def test_infer_fp16_batch_matches_rows_alone(self):
        rows = ref.random_rows(np.random.default_rng(3), 3)
        inp = grpcclient.InferInput("input", list(rows.shape), "FP16")
        inp.set_data_from_numpy(rows)
        together = self.client.infer("mlp_single", [inp]).as_numpy("output")
        self.assertEqual(together.shape, (3, ref.MLP_WIDTH))
        for i in range(3):
            one = grpcclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            one.set_data_from_numpy(rows[i:i + 1])
            np.testing.assert_array_equal(self.client.infer("mlp_single", [one]).as_numpy("output")[0], together[i])

    def raw_stub(self):
        return service_pb2_grpc.GRPCInferenceServiceStub(grpc.insecure_channel(self.server.grpc_url))

    def test_infer_typed_contents(self):
        # tritonclient always sends raw bytes; the typed contents fields are the protocol's other form.
        x = ref.random_f32(np.random.default_rng(4), ref.TOUCH_ELEMENTS)
        request = service_pb2.ModelInferRequest(model_name="touch")
        tensor = request.inputs.add(name="input", datatype="FP32", shape=[x.size])
        tensor.contents.fp32_contents.extend(x.tolist())
        response = self.raw_stub().ModelInfer(request)
        got = np.frombuffer(response.raw_output_contents[0], dtype=np.float32)
        np.testing.assert_allclose(got, ref.touch(x), rtol=1e-6)

    def test_bad_requests(self):
        stub = self.raw_stub()

        def infer(build):
            request = service_pb2.ModelInferRequest(model_name="touch")
            build(request)
            try:
                stub.ModelInfer(request)
            except grpc.RpcError as e:
                return e.code(), e.details()
            return grpc.StatusCode.OK, ""

        good = np.zeros(ref.TOUCH_ELEMENTS, dtype=np.float32).tobytes()

        def tensor(r, name="input", datatype="FP32", shape=(ref.TOUCH_ELEMENTS,), raw=good):
            r.inputs.add(name=name, datatype=datatype, shape=list(shape))
            if raw is not None:
                r.raw_input_contents.append(raw)

        cases = [
            ("unknown input", lambda r: tensor(r, name="inptu"), "no input 'inptu'"),
            ("wrong shape", lambda r: tensor(r, shape=(2, ref.TOUCH_ELEMENTS // 2)), "shape"),
            ("wrong datatype", lambda r: tensor(r, datatype="INT32"), "datatype FP32"),
            ("unsupported datatype", lambda r: tensor(r, datatype="BYTES"), "'BYTES'"),
            ("wrong byte size", lambda r: tensor(r, raw=good[:-4]), "needs 4096 bytes"),
            ("missing raw data", lambda r: tensor(r, raw=None), "no data"),
            ("extra raw data", lambda r: (tensor(r), r.raw_input_contents.append(b"x")), "2 entries"),
            ("no inputs", lambda r: None, "no inputs"),
            ("unknown output", lambda r: (tensor(r), r.outputs.add(name="nope")), "no output 'nope'"),
            ("classification", lambda r: (tensor(r), r.outputs.add(name="output").parameters["classification"].
                                          CopyFrom(service_pb2.InferParameter(int64_param=3))), "classification"),
            ("shared memory refused", lambda r: (r.inputs.add(name="input", datatype="FP32", shape=[ref.TOUCH_ELEMENTS]),
                                                 r.inputs[0].parameters["shared_memory_region"].CopyFrom(
                                                     service_pb2.InferParameter(string_param="r")),
                                                 r.inputs[0].parameters["shared_memory_byte_size"].CopyFrom(
                                                     service_pb2.InferParameter(int64_param=4096))), "--allow-client-shm"),
        ]
        for name, build, needle in cases:
            with self.subTest(name):
                code, details = infer(build)
                self.assertNotEqual(code, grpc.StatusCode.OK)
                self.assertIn(needle, details)
        code, _ = infer(lambda r: tensor(r, name="inptu"))
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertEqual(infer(cases[-1][1])[0], grpc.StatusCode.PERMISSION_DENIED)

    def test_shared_memory_is_refused_as_such_whatever_else_the_request_holds(self):
        # Once answered with a complaint about raw_input_contents: the request also carried raw
        # data, which was checked before whether shared memory was allowed at all.
        request = service_pb2.ModelInferRequest(model_name="touch")
        request.inputs.add(name="input", datatype="FP32", shape=[ref.TOUCH_ELEMENTS])
        request.inputs[0].parameters["shared_memory_region"].CopyFrom(service_pb2.InferParameter(string_param="r"))
        request.inputs[0].parameters["shared_memory_byte_size"].CopyFrom(service_pb2.InferParameter(int64_param=4096))
        request.raw_input_contents.append(np.zeros(ref.TOUCH_ELEMENTS, dtype=np.float32).tobytes())
        request.outputs.add(name="output").parameters["shared_memory_region"].CopyFrom(
            service_pb2.InferParameter(string_param="o"))
        with self.assertRaises(grpc.RpcError) as e:
            self.raw_stub().ModelInfer(request)
        self.assertEqual(e.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("--allow-client-shm", e.exception.details())

    def test_malformed_messages_are_invalid_arguments_that_say_so(self):
        # Once INTERNAL with an empty message.
        with grpc.insecure_channel(self.server.grpc_url) as channel:
            for method in ("ModelInfer", "ModelMetadata", "ServerLive"):
                call = channel.unary_unary(f"/inference.GRPCInferenceService/{method}")
                with self.subTest(method), self.assertRaises(grpc.RpcError) as e:
                    call(b"\xff\xff\xff\xff\x0f", timeout=30)
                self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
                self.assertIn(f"malformed inference.{method}Request message (5 bytes", e.exception.details())
            unknown = channel.unary_unary("/inference.GRPCInferenceService/Nonsense")
            with self.assertRaises(grpc.RpcError) as e:
                unknown(b"", timeout=30)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNIMPLEMENTED)

    def test_statistics(self):
        before = self.client.get_inference_statistics("touch", as_json=True)["model_stats"][0]
        x = ref.random_f32(np.random.default_rng(5), ref.TOUCH_ELEMENTS)
        for _ in range(2):
            self.touch(x)
        stats = self.client.get_inference_statistics("touch", as_json=True)["model_stats"][0]
        self.assertEqual(int(stats["inference_count"]) - int(before.get("inference_count", 0)), 2)
        for key in ("success", "queue", "compute_input", "compute_infer", "compute_output"):
            self.assertGreater(int(stats["inference_stats"][key]["ns"]), 0, key)

    def test_concurrent_clients_get_their_own_answers(self):
        rng = np.random.default_rng(12)
        rows = ref.random_rows(rng, 32)
        expected = []
        for i in range(rows.shape[0]):
            one = grpcclient.InferInput("input", [1, ref.MLP_WIDTH], "FP16")
            one.set_data_from_numpy(rows[i:i + 1])
            expected.append(self.client.infer("mlp_single", [one]).as_numpy("output")[0])

        def loop(index):
            client = grpcclient.InferenceServerClient(self.server.grpc_url)
            local = np.random.default_rng(2000 + index)
            for r in range(20):
                if r % 2:
                    pick = local.choice(rows.shape[0], 1 + r % 3, replace=False)
                    inp = grpcclient.InferInput("input", [pick.size, ref.MLP_WIDTH], "FP16")
                    inp.set_data_from_numpy(rows[pick])
                    got = client.infer("mlp_batched", [inp]).as_numpy("output")
                    np.testing.assert_array_equal(got, np.stack([expected[i] for i in pick]))
                else:
                    x = ref.random_f32(local, ref.TOUCH_ELEMENTS)
                    inp = grpcclient.InferInput("input", [x.size], "FP32")
                    inp.set_data_from_numpy(x)
                    np.testing.assert_allclose(client.infer("touch", [inp]).as_numpy("output"), ref.touch(x), rtol=1e-6)

        self.assertEqual(run_clients(16, loop), [])


if __name__ == "__main__":
    unittest.main()
