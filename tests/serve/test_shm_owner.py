"""A system shared-memory region belongs to the user whose client registered it, over HTTP and
gRPC alike. Once, a region registered by root was a global name: a client running as nobody
listed it with its key, read root's data through an inference, overwrote root's object through an
output and unregistered it. Here root registers a region, and a client of another local user
(nobody, through setpriv: other_user.py) meets it nowhere: not in the status list, not by name, not
in an inference (input or output), not to unregister; each answered 404 / NOT_FOUND as for a
region that does not exist. That user registers a region of its own under the same name, uses it,
and sees only it; root's region and data are untouched throughout.

Needs root (to run a client as another user); skips, saying why, without it."""
import os
import unittest

import numpy as np
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient
import tritonclient.utils.shared_memory as shm

import references as ref
from ferry_server import ServerTestCase
from other_user import other_user_unavailable, run_as_other_user

TOUCH_BYTES = ref.TOUCH_ELEMENTS * 4
NOT_FOUND = {"http": "404", "grpc": "StatusCode.NOT_FOUND"}


class RegionOwner(ServerTestCase):
    server_args = ("--allow-client-shm",)

    @classmethod
    def setUpClass(cls):
        why = other_user_unavailable()
        if why:
            raise unittest.SkipTest(why)
        super().setUpClass()

    def setUp(self):
        self.clients = {"http": httpclient.InferenceServerClient(self.server.http_url),
                        "grpc": grpcclient.InferenceServerClient(self.server.grpc_url)}
        self.key = f"/ferry_root_{os.getpid()}_{self._testMethodName}"
        self.region = shm.create_shared_memory_region("root_data", self.key, TOUCH_BYTES)
        self.x = ref.random_f32(np.random.default_rng(3), ref.TOUCH_ELEMENTS)
        shm.set_shared_memory_region(self.region, [self.x])

    def tearDown(self):
        self.clients["http"].unregister_system_shared_memory()
        shm.destroy_shared_memory_region(self.region)
        super().tearDown()

    def other_user(self, *steps):
        return run_as_other_user(self.server.http_url, self.server.grpc_url, list(steps))

    def root_still_owns_its_region(self, protocol):
        """Root lists its region with its key, and an inference reads root's data from it."""
        module, client = (httpclient if protocol == "http" else grpcclient), self.clients[protocol]
        listed = client.get_system_shared_memory_status(**({"as_json": True} if protocol == "grpc" else {}))
        names = set(listed["regions"]) if protocol == "grpc" else {r["name"] for r in listed}
        self.assertEqual(names, {"mine"})
        np.testing.assert_array_equal(shm.get_contents_as_numpy(self.region, np.float32, [ref.TOUCH_ELEMENTS]),
                                      self.x)  # never overwritten
        inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
        inp.set_shared_memory("mine", TOUCH_BYTES)
        np.testing.assert_allclose(client.infer("touch", [inp]).as_numpy("output"), ref.touch(self.x), rtol=1e-6)

    def check_another_user_cannot_reach(self, protocol):
        self.clients[protocol].register_system_shared_memory("mine", self.key, TOUCH_BYTES)
        listed, by_name, read, written, unregistered, all_gone, own = self.other_user(
            ["status", protocol, "system", ""],
            ["status", protocol, "system", "mine"],
            ["infer", protocol, "mine", ""],
            ["infer", protocol, "nowhere", "mine"],
            ["unregister", protocol, "system", "mine"],
            ["unregister", protocol, "system", ""],
            ["own_region", protocol, "mine"])
        self.assertEqual(listed, {"ok": True, "regions": {}})  # neither the name nor the key
        for outcome, says in [(by_name, "no shared-memory region 'mine' is registered"),
                              (read, "input 'input': shared-memory region 'mine' is not registered"),
                              (unregistered, "no shared-memory region 'mine' is registered")]:
            self.assertEqual((outcome["ok"], outcome["code"]), (False, NOT_FOUND[protocol]), outcome)
            self.assertIn(says, outcome["message"])
        # Its input region is looked up first, and is no more its own than root's is.
        self.assertEqual((written["ok"], written["code"]), (False, NOT_FOUND[protocol]), written)
        self.assertTrue(all_gone["ok"], all_gone)  # its own regions: none
        self.assertEqual(own, {"ok": True, "matches": True})  # the same name, its own object
        self.root_still_owns_its_region(protocol)

    def test_another_user_cannot_reach_a_region_over_http(self):
        self.check_another_user_cannot_reach("http")

    def test_another_user_cannot_reach_a_region_over_grpc(self):
        self.check_another_user_cannot_reach("grpc")

    def test_output_into_another_users_region_is_refused(self):
        """The output alone names root's region (the input comes in the request)."""
        self.clients["http"].register_system_shared_memory("mine", self.key, TOUCH_BYTES)
        for protocol in ("http", "grpc"):
            [written] = self.other_user(["infer_body_into", protocol, "mine"])
            self.assertEqual((written["ok"], written["code"]), (False, NOT_FOUND[protocol]), written)
            self.assertIn("output 'output': shared-memory region 'mine' is not registered", written["message"])
        self.root_still_owns_its_region("http")


if __name__ == "__main__":
    unittest.main()
