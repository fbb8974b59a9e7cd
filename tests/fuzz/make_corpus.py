"""Writes the fuzz targets' seed corpus (tests/fuzz/corpus/<target>/) from the requests the tests
send: the bodies and messages of the unit tests, and what Triton's own Python client sends for
the serve suite's models. Run with the Python of build-tools/venv (tritonclient, numpy):

    build-tools/venv/bin/python tests/fuzz/make_corpus.py

Seeds stay small (a few elements per tensor): the fuzzers mutate them, and small inputs run fast.
"""
import hashlib
import json
import os
import struct

import numpy as np
import tritonclient.http as httpclient
from tritonclient.grpc import service_pb2

CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def write(target, data):
    if isinstance(data, str):
        data = data.encode()
    folder = os.path.join(CORPUS, target)
    os.makedirs(folder, exist_ok=True)
    # Named by content, as libFuzzer names what it adds, so rerunning changes nothing.
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


def http_seeds():
    # The unit tests' bodies (tests/serve/codec/test_serve_http_codec.cpp).
    for body in [
        '{"id": "r1", "inputs": [{"name": "a", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3.5, -4]]},'
        ' {"name": "b", "shape": [3], "datatype": "BOOL", "data": [true, false, true]},'
        ' {"name": "c", "shape": [2], "datatype": "INT64", "data": [-9007199254740993, 7]}],'
        ' "outputs": [{"name": "y", "parameters": {"binary_data": true}}, {"name": "z"}]}',
        '{"inputs": [{"name": "a", "shape": [4], "datatype": "FP32", "parameters": {"shared_memory_region": "in",'
        ' "shared_memory_offset": 64, "shared_memory_byte_size": 16}}], "outputs": [{"name": "y", "parameters":'
        ' {"shared_memory_region": "out", "shared_memory_byte_size": 16}}]}',
        '{"parameters": {"triton_enable_empty_final_response": true},'
        ' "inputs": [{"name": "a", "shape": [1], "datatype": "FP32", "data": [1.0]}]}',
        '{"inputs": [{"name": "a", "shape": [2], "datatype": "INT8", "data": [1, 300]}]}',
        '{"inputs": [{"name": "a", "shape": [1], "datatype": "INT32", "data": [1.5]}]}',
        '{"inputs": [{"name": "a", "shape": [2], "datatype": "UINT8", "data": [0, 255]}]}',
        '{"inputs": [{"name": "a", "shape": [2], "datatype": "BF16", "data": [0.5, -2]}]}',
    ]:
        write("http_infer_codec", body)
    header = json.dumps({"inputs": [
        {"name": "a", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 8}},
        {"name": "b", "shape": [1], "datatype": "FP32", "data": [5]},
        {"name": "c", "shape": [1], "datatype": "FP32", "parameters": {"binary_data_size": 4}}],
        "parameters": {"binary_data_output": True}}).encode()
    write("http_infer_codec", b"#%d\n" % len(header) + header + np.array([1, 2, 3], np.float32).tobytes())

    # What tritonclient sends for the serve suite's models (touch: FP32; mlp: FP16 rows),
    # shortened to a few elements.
    rng = np.random.default_rng(7)
    for binary_in in (False, True):
        for binary_out in (False, True):
            x = rng.uniform(-4, 4, 4).astype(np.float32)
            inp = httpclient.InferInput("input", [4], "FP32")
            inp.set_data_from_numpy(x, binary_data=binary_in)
            out = httpclient.InferRequestedOutput("output", binary_data=binary_out)
            body, json_size = httpclient.InferenceServerClient.generate_request_body(
                [inp], outputs=[out], request_id="0-1")
            write("http_infer_codec", body if json_size is None else b"#%d\n" % json_size + body)
    rows = rng.uniform(-1, 1, (2, 3)).astype(np.float16)
    inp = httpclient.InferInput("input", [2, 3], "FP16")
    inp.set_data_from_numpy(rows, binary_data=True)
    body, json_size = httpclient.InferenceServerClient.generate_request_body(
        [inp], outputs=[httpclient.InferRequestedOutput("output", binary_data=True)])
    write("http_infer_codec", b"#%d\n" % json_size + body)


def json_tensor_seeds():
    # One byte picks the datatype (BOOL, INT8, UINT8, INT32, INT64, FP16, BF16, FP32), one gives
    # the element count; then the "data" text.
    for type_index, count, data in [
        (0, 3, "[true, false, true]"),
        (1, 2, "[1, -128]"),
        (2, 2, "[0, 255]"),
        (3, 4, "[[1, 2], [3, -4]]"),
        (4, 2, "[-9007199254740993, 7]"),
        (5, 2, "[0.5, -2]"),
        (6, 2, "[1.5, 3e4]"),
        (7, 4, "[[1, 2], [3.5, -4]]"),
        (7, 0, "[]"),
    ]:
        write("json_tensor", bytes([type_index, count]) + data.encode())


def grpc_seeds():
    # tests/serve/codec/test_serve_grpc_codec.cpp: raw contents in input order, skipping shared memory.
    m = service_pb2.ModelInferRequest(model_name="m", id="7")
    m.inputs.add(name="a", datatype="FP32", shape=[1])
    s = m.inputs.add(name="s", datatype="INT64", shape=[2])
    s.parameters["shared_memory_region"].string_param = "r"
    s.parameters["shared_memory_byte_size"].int64_param = 16
    s.parameters["shared_memory_offset"].int64_param = 32
    m.inputs.add(name="b", datatype="INT32", shape=[2])
    m.raw_input_contents.append(np.float32(1).tobytes())
    m.raw_input_contents.append(b"\x01" * 8)
    m.outputs.add(name="y")
    write("grpc_infer_codec", m.SerializeToString())
    # Typed contents.
    m = service_pb2.ModelInferRequest(model_name="m")
    t = m.inputs.add(name="i", datatype="INT8", shape=[3])
    t.contents.int_contents.extend([-1, 0, 127])
    write("grpc_infer_codec", m.SerializeToString())
    m = service_pb2.ModelInferRequest(model_name="m")
    t = m.inputs.add(name="f", datatype="FP32", shape=[2])
    t.contents.fp32_contents.extend([1.5, -2])
    t = m.inputs.add(name="b", datatype="BOOL", shape=[1])
    t.contents.bool_contents.extend([True])
    write("grpc_infer_codec", m.SerializeToString())
    # What tritonclient.grpc sends for touch and mlp (raw contents), shortened; perf_analyzer's
    # empty-final-response parameter; an output in shared memory.
    m = service_pb2.ModelInferRequest(model_name="touch", id="3")
    m.parameters["triton_enable_empty_final_response"].bool_param = True
    m.inputs.add(name="input", datatype="FP32", shape=[4])
    m.raw_input_contents.append(np.arange(4, dtype=np.float32).tobytes())
    o = m.outputs.add(name="output")
    o.parameters["shared_memory_region"].string_param = "out"
    o.parameters["shared_memory_byte_size"].uint64_param = 16
    write("grpc_infer_codec", m.SerializeToString())
    m = service_pb2.ModelInferRequest(model_name="mlp_batched")
    m.inputs.add(name="input", datatype="FP16", shape=[2, 3])
    m.raw_input_contents.append(np.ones((2, 3), np.float16).tobytes())
    m.outputs.add(name="output")
    write("grpc_infer_codec", m.SerializeToString())


def model_config_seeds():
    # The serve suite's repository and tests/serve/config/test_serve_config.cpp.
    models = os.path.join(os.path.dirname(CORPUS), "..", "serve", "models")
    for name in sorted(os.listdir(models)):
        with open(os.path.join(models, name, "config.json"), "rb") as f:
            write("model_config", f.read())
    for text in ['{"engine": "mlp:2x256", "strategy": "mapped", "inflight": 3, "instances_per_gpu": 2,'
                 ' "max_batch": 16, "batch_delay_us": 500, "input_size": "4KiB"}',
                 '{"engine": "touch", "input_size": 8000}',
                 '{"engine": "touch", "max_batch": 1.5}',
                 # Sizes that once loaded as nonsense: not finite, or past 2^64 bytes.
                 '{"engine": "touch", "input_size": "nanKiB"}',
                 '{"engine": "touch", "input_size": "17179869188GiB"}',
                 '{"engine": "touch", "max_queue_size": 0, "tensor_strategies": {"input": "pinned"}}']:
        write("model_config", text)


def io_description_seeds():
    # tests/engines/test_model_io_description.cpp's descriptions; the encoder's also with a shape
    # asked for (NUL, then one byte per input dim).
    resnet = ('{"format": "ferry.io/1", "name": "resnet50", "exported_with": {"torch": "2.11.0+cu130",'
              ' "cuda_arch": "sm_90"}, "symbols": {"batch": {"min": 1, "max": 64}},'
              ' "inputs": [{"name": "images", "dtype": "float16", "shape": ["batch", 3, 224, 224]}],'
              ' "outputs": [{"name": "logits", "dtype": "float16", "shape": ["batch", 1000]}]}')
    encoder = ('{"format": "ferry.io/1", "name": "encoder", "symbols": {"batch": {"min": 1, "max": 32},'
               ' "seq": {"min": 8, "max": 512}}, "inputs": [{"name": "tokens", "dtype": "int64",'
               ' "shape": ["batch", "seq"], "index_bound": 30522}, {"name": "mask", "dtype": "bool",'
               ' "shape": ["batch", "seq"]}], "outputs": [{"name": "hidden", "dtype": "float16",'
               ' "shape": ["batch", "seq", 768]}]}')
    write("io_description", resnet)
    write("io_description", encoder)
    write("io_description", encoder.encode() + b"\0" + bytes([4, 128, 4, 128]))


def shm_range_seeds():
    # Region size (2 bytes), offset and byte size (8 bytes each), region name: a fit, the
    # region's end, and an offset whose sum with the size overflows.
    for region, offset, size in [(1024, 64, 16), (64, 0, 64), (64, 64, 0), (16, 2**64 - 8, 16)]:
        write("shm_range", struct.pack("<HQQ", region, offset, size) + b"in")


if __name__ == "__main__":
    http_seeds()
    json_tensor_seeds()
    grpc_seeds()
    model_config_seeds()
    io_description_seeds()
    shm_range_seeds()
