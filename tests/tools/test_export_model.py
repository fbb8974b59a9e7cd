"""scripts/export_model.py on your own model, without a GPU: the ferry.io/1 description derived from
the exported program (names, dtypes, dynamic dims named after their torch.export.Dim with their
range, outputs in terms of them), the refusals, and a whole export of a tiny module into a package
with its sidecar and check data. Runs where PyTorch is importable, and skips, saying so, elsewhere
(CI's machines have no PyTorch: it is not a Debian package and its PyPI wheels are GPU builds of
several GB)."""
import json
import pathlib
import re
import sys
import tempfile
import unittest
import zipfile

try:
    import torch
except ImportError as e:  # ctest: SKIP_RETURN_CODE
    print(f"skipped: PyTorch is not importable here ({e})")
    sys.exit(77)

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import export_model  # noqa: E402


class TwoHeads(torch.nn.Module):
    def forward(self, tokens, weights):
        return weights.sum(dim=1), (tokens * 2).to(torch.int32)


class Doubling(torch.nn.Module):
    def forward(self, x):
        return torch.cat([x, x], dim=0)


def exported(module, example, dynamic):
    return torch.export.export(module, example, dynamic_shapes=dynamic)


class DescribeIo(unittest.TestCase):
    def test_names_dtypes_and_dynamic_dims_come_from_the_program(self):
        batch = torch.export.Dim("batch", min=1, max=32)
        example = (torch.zeros(4, 7, dtype=torch.int64), torch.zeros(4, 3, dtype=torch.float16))
        dynamic = {"tokens": {0: batch}, "weights": {0: batch}}
        io = export_model.describe_io(exported(TwoHeads(), example, dynamic), dynamic,
                                      output_names=["total", "doubled"], index_bounds={"tokens": 100})
        self.assertEqual(io["symbols"], {"batch": {"min": 1, "max": 32}})
        self.assertEqual(io["inputs"], [
            {"name": "tokens", "dtype": "int64", "shape": ["batch", 7], "index_bound": 100},
            {"name": "weights", "dtype": "float16", "shape": ["batch", 3]}])
        self.assertEqual(io["outputs"], [
            {"name": "total", "dtype": "float16", "shape": ["batch"]},
            {"name": "doubled", "dtype": "int32", "shape": ["batch", 7]}])

    def test_an_output_dim_that_is_an_expression_is_refused_saying_which(self):
        batch = torch.export.Dim("batch", min=1, max=32)
        dynamic = {"x": {0: batch}}
        program = exported(Doubling(), (torch.zeros(4, 3),), dynamic)
        with self.assertRaises(SystemExit) as refused:
            export_model.describe_io(program, dynamic)
        self.assertIn("output 'output0' dim 0 is 2*", str(refused.exception))
        self.assertIn("an expression of the dynamic dims", str(refused.exception))

    def test_a_wrong_count_of_names_is_refused(self):
        program = exported(Doubling(), (torch.zeros(4, 3),), None)
        with self.assertRaises(SystemExit) as refused:
            export_model.describe_io(program, None, input_names=["a", "b"])
        self.assertIn("input_names lists 2 names and the model takes 1 inputs", str(refused.exception))


class ExportOnTheCpu(unittest.TestCase):
    def test_a_tiny_module_becomes_a_package_with_its_description_and_check(self):
        with tempfile.TemporaryDirectory() as out:
            out = pathlib.Path(out)
            rows = torch.export.Dim("rows", min=1, max=8)
            torch.manual_seed(0)
            model = torch.nn.Linear(4, 2).eval()
            description = export_model.export("tiny", out, torch.device("cpu"), model, (torch.randn(3, 4),),
                                              {"input": {0: rows}}, names={"output_names": ["y"]})
            self.assertEqual(description["format"], "ferry.io/1")
            self.assertEqual(description["exported_with"]["cuda_arch"], "cpu")
            self.assertEqual(description["inputs"], [{"name": "input", "dtype": "float32", "shape": ["rows", 4]}])
            self.assertEqual(description["outputs"], [{"name": "y", "dtype": "float32", "shape": ["rows", 2]}])
            self.assertEqual(json.loads((out / "tiny.pt2.io.json").read_text()), description)
            self.assertEqual((out / "tiny.pt2").read_bytes()[:4], b"PK\x03\x04")
            manifest = json.loads((out / "tiny.pt2.check" / "manifest.json").read_text())
            self.assertEqual(manifest["outputs"][0]["shape"], [3, 2])

    def test_bare_writes_a_package_whose_generated_code_spells_out_its_inputs(self):
        # What ferry reads from a package with no description (src/engines/torch/compiled_io.hpp):
        # this checks the installed PyTorch still writes it that way.
        with tempfile.TemporaryDirectory() as out:
            out = pathlib.Path(out)
            rows = torch.export.Dim("rows", min=1, max=8)
            model = torch.nn.Linear(4, 2).eval()
            export_model.export("tiny", out, torch.device("cpu"), model, (torch.randn(3, 4),), {"input": {0: rows}},
                                bare=True)
            with zipfile.ZipFile(out / "tiny.bare.pt2") as package:
                names = package.namelist()
                wrapper = [n for n in names if "/data/aotinductor/model/" in n and n.endswith(".wrapper.cpp")]
                self.assertEqual(len(wrapper), 1, names)
                code = package.read(wrapper[0]).decode()
                metadata = "".join(package.read(n).decode() for n in names if n.endswith("_metadata.json"))
            self.assertNotIn("ferry.io", metadata)
            self.assertFalse((out / "tiny.bare.pt2.io.json").exists())
            name = re.search(r'inputs_info_\[0\]\.name = "(\w+)";', code).group(1)
            self.assertIn(f"{name}_expected_dtype = aoti_torch_dtype_float32();", code)
            self.assertIn(f"if (4 != {name}_size[1])", code)
            self.assertIn(f"if ({name}_size[0] > 8)", code)
            self.assertRegex(code, rf"int64_t \w+ = {name}_size\[0\];")


if __name__ == "__main__":
    unittest.main()
