"""A model repository is untrusted input: a bad config makes its model unavailable, naming the
problem, and never takes down the others or the server; links leading outside the repository are
refused unless allowed; the index shows names, versions, states and reasons, never a file's
contents or an absolute path; names with control characters are refused (listed by their printable
form, unavailable).

Once, a value nested 100,000 levels deep crashed the server at start (SIGSEGV, every model gone);
"nanKiB" loaded with a shape of 2^61; "infKiB" and "17179869188GiB" overflowed to 0 bytes; a
folder linked to another place was served (and a model file may be named relative to its folder); a config linked to /etc/passwd showed its first
token and an absolute path in the index; a folder named with a newline split the log; `%00` in a
model's name cut its error message."""
import json
import os
import tempfile
import unittest
import urllib.error
import urllib.request

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

from ferry_server import FerryServer, stop_and_remove

GOOD = {"engine": "touch", "input_size": "4KiB"}
BAD_SIZES = {"nan": "nanKiB", "inf": "infKiB", "overflow": "17179869188GiB", "e30": "1e30"}


def make_repository():
    root = tempfile.mkdtemp(prefix="ferry_untrusted_")
    repository = os.path.join(root, "repository")
    outside = os.path.join(root, "elsewhere")
    os.makedirs(outside)

    def model(name, text):
        os.makedirs(os.path.join(repository, name))
        with open(os.path.join(repository, name, "config.json"), "w") as f:
            f.write(text)

    model("good", json.dumps(GOOD))
    model("deep", '{"engine": "touch", "input_size": ' + "[" * 100_000 + "]" * 100_000 + "}")
    for name, size in BAD_SIZES.items():
        model(name, json.dumps({"engine": "touch", "input_size": size}))
    with open(os.path.join(outside, "config.json"), "w") as f:
        json.dump(GOOD, f)
    os.symlink(outside, os.path.join(repository, "linked"))
    os.makedirs(os.path.join(repository, "passwd"))
    os.symlink("/etc/passwd", os.path.join(repository, "passwd", "config.json"))
    model("bad\nname", json.dumps(GOOD))
    # A model file named relative to its folder, climbing out of the repository.
    model("climbs", json.dumps({"engine": "affine:../../elsewhere/config.json"}))
    return root, repository


class UntrustedRepository(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.root, cls.repository = make_repository()
        cls.server = FerryServer(repository=cls.repository)

    @classmethod
    def tearDownClass(cls):
        stop_and_remove(cls.server, cls.root)

    def index(self):
        return {m["name"]: m for m in httpclient.InferenceServerClient(self.server.http_url).get_model_repository_index()}

    def test_a_bad_config_takes_down_only_its_model(self):
        index = self.index()
        self.assertEqual(index["good"]["state"], "READY")
        x = np.arange(1024, dtype=np.float32)
        inp = httpclient.InferInput("input", [1024], "FP32")
        inp.set_data_from_numpy(x)
        got = httpclient.InferenceServerClient(self.server.http_url).infer("good", [inp]).as_numpy("output")
        np.testing.assert_array_equal(got, x * 2 + 1)
        self.assertEqual(index["deep"]["state"], "UNAVAILABLE")
        self.assertIn("nested deeper than 64 levels", index["deep"]["reason"])
        for name, size in BAD_SIZES.items():
            self.assertEqual(index[name]["state"], "UNAVAILABLE", name)
            self.assertIn("'input_size': ", index[name]["reason"])
            self.assertIn(size, index[name]["reason"])
        self.assertIn("not a finite number", index["nan"]["reason"])
        self.assertIn("beyond what this machine can address", index["overflow"]["reason"])

    def test_links_leaving_the_repository_are_refused(self):
        index = self.index()
        self.assertEqual(index["linked"]["state"], "UNAVAILABLE")
        self.assertIn("its folder is a symbolic link leading outside the model repository", index["linked"]["reason"])
        self.assertEqual(index["passwd"]["state"], "UNAVAILABLE")
        self.assertIn("config.json is a symbolic link leading outside", index["passwd"]["reason"])
        self.assertEqual(index["climbs"]["state"], "UNAVAILABLE")
        self.assertIn("its model file '../../elsewhere/config.json' leads outside the model repository",
                      index["climbs"]["reason"])

    def test_the_index_shows_no_file_contents_or_absolute_paths(self):
        for protocol_index in (self.index(),
                               {m.name: {"reason": m.reason} for m in grpcclient.InferenceServerClient(
                                   self.server.grpc_url).get_model_repository_index().models}):
            for name, entry in protocol_index.items():
                self.assertNotIn("root:", entry["reason"], name)
                self.assertNotIn(self.root, entry["reason"], name)
                self.assertNotIn("/etc", entry["reason"], name)
                self.assertFalse(any(word.startswith("/") for word in entry["reason"].split()), entry["reason"])

    def test_names_with_control_characters_are_refused(self):
        # Listed by its printable name, unavailable, saying why; never raw, in the index or the log.
        index = self.index()
        self.assertNotIn("bad\nname", index)
        self.assertEqual(index["bad\\x0aname"]["state"], "UNAVAILABLE")
        self.assertIn("its folder's name holds U+000A, a control character", index["bad\\x0aname"]["reason"])
        self.assertFalse(any("bad\nname" in line for line in self.server.log))
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://{self.server.http_url}/v2/models/go%00od/ready")
        self.assertEqual(e.exception.code, 400)
        self.assertEqual(json.loads(e.exception.read())["error"],
                         "model name 'go\\x00od' holds a control character; model names never do")

    def test_links_are_followed_when_allowed(self):
        server = FerryServer("--allow-repository-symlinks", repository=self.repository)
        try:
            index = {m["name"]: m for m in httpclient.InferenceServerClient(server.http_url).get_model_repository_index()}
            self.assertEqual(index["linked"]["state"], "READY")
            # Followed, /etc/passwd is still no config, and still not shown.
            self.assertEqual(index["passwd"]["state"], "UNAVAILABLE")
            self.assertIn("config.json is not valid JSON: a syntax error at byte", index["passwd"]["reason"])
            self.assertNotIn("root", index["passwd"]["reason"])
        finally:
            self.assertEqual(server.stop(), 0)


if __name__ == "__main__":
    unittest.main()
