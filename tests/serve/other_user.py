"""A client of `ferry serve` running as another local user (nobody, uid 65534), for the tests of who
may use a shared-memory region. `run_as_other_user(steps)` starts this module under `setpriv` as
that user; it takes each step, a call to the server, and prints what each answered as JSON.

Steps: ["status", PROTOCOL, KIND, NAME] (KIND "system" or "cuda", NAME "" for the list),
["unregister", PROTOCOL, KIND, NAME] (NAME "" for all), ["infer", PROTOCOL, INPUT_REGION,
OUTPUT_REGION] (the touch model, its input read from INPUT_REGION, its output into OUTPUT_REGION
or, when that is "", in the answer), ["infer_body_into", PROTOCOL, OUTPUT_REGION] (its input in
the request, its output into OUTPUT_REGION), ["own_region", PROTOCOL, NAME] (a region of this user's own,
registered as NAME, used for one inference whose answer is checked, then unregistered).
PROTOCOL is "http" or "grpc"."""
import json
import os
import shutil
import subprocess
import sys

OTHER_UID = 65534
HERE = os.path.dirname(os.path.abspath(__file__))


def other_user_unavailable():
    """Why this process cannot run a client as another user here; None when it can."""
    if os.geteuid() != 0:
        return f"running a client as another user needs root (this runs as uid {os.geteuid()})"
    if shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed"
    return None


def run_as_other_user(http_url, grpc_url, steps):
    """Runs `steps` as uid 65534 and returns one outcome per step: {"ok", "code", "message",
    "regions" (status: name -> key or device), "matches" (infer: whether the answer was right)}."""
    command = ["setpriv", f"--reuid={OTHER_UID}", f"--regid={OTHER_UID}", "--clear-groups",
               sys.executable, "-m", "other_user", http_url, grpc_url, json.dumps(steps)]
    done = subprocess.run(command, cwd=HERE, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": "/tmp"})
    if done.returncode != 0:
        raise AssertionError(f"the client as uid {OTHER_UID} failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout)


def _client(protocol, http_url, grpc_url):
    if protocol == "http":
        import tritonclient.http as module
        return module, module.InferenceServerClient(http_url)
    import tritonclient.grpc as module
    return module, module.InferenceServerClient(grpc_url)


def _status(protocol, client, kind, name):
    as_json = {"as_json": True} if protocol == "grpc" else {}
    if kind == "system":
        found = client.get_system_shared_memory_status(name, **as_json)
    else:
        found = client.get_cuda_shared_memory_status(name, **as_json)
    regions = found.get("regions", {}).values() if isinstance(found, dict) else found
    return {r["name"]: r.get("key", r.get("device_id")) for r in regions}


def _unregister(client, kind, name):
    if kind == "system":
        client.unregister_system_shared_memory(name)
    else:
        client.unregister_cuda_shared_memory(name)


def _infer(module, client, input_region, output_region):
    import numpy as np
    import references as ref
    inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
    inp.set_shared_memory(input_region, ref.TOUCH_ELEMENTS * 4)
    out = module.InferRequestedOutput("output")
    if output_region:
        out.set_shared_memory(output_region, ref.TOUCH_ELEMENTS * 4)
    client.infer("touch", [inp], outputs=[out])
    return True


def _infer_body_into(module, client, output_region):
    """touch with its input in the request and its output asked into `output_region`."""
    import numpy as np
    import references as ref
    inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
    inp.set_data_from_numpy(np.ones(ref.TOUCH_ELEMENTS, dtype=np.float32))
    out = module.InferRequestedOutput("output")
    out.set_shared_memory(output_region, ref.TOUCH_ELEMENTS * 4)
    client.infer("touch", [inp], outputs=[out])
    return True


def _own_region(protocol, module, client, name):
    """Registers an object of this user's own as `name`, runs touch on it, checks the answer. The
    object is made with os calls: tritonclient's utility registers it with multiprocessing's
    resource tracker, a process that cannot start as this user."""
    import numpy as np
    import references as ref
    key = f"/ferry_other_user_{os.getpid()}"
    x = ref.random_f32(np.random.default_rng(7), ref.TOUCH_ELEMENTS)
    fd = os.open("/dev/shm" + key, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600)
    try:
        os.write(fd, x.tobytes())
        client.register_system_shared_memory(name, key, x.nbytes)
        try:
            inp = module.InferInput("input", [ref.TOUCH_ELEMENTS], "FP32")
            inp.set_shared_memory(name, x.nbytes)
            y = client.infer("touch", [inp]).as_numpy("output")
            listed = _status(protocol, client, "system", "")
            return bool(np.allclose(y, ref.touch(x), rtol=1e-6)) and listed == {name: key}
        finally:
            client.unregister_system_shared_memory(name)
    finally:
        os.close(fd)
        os.unlink("/dev/shm" + key)


def _step(step, http_url, grpc_url):
    from tritonclient.utils import InferenceServerException
    action, protocol, *rest = step
    module, client = _client(protocol, http_url, grpc_url)
    outcome = {"ok": True}
    try:
        if action == "status":
            outcome["regions"] = _status(protocol, client, *rest)
        elif action == "unregister":
            _unregister(client, *rest)
        elif action == "infer":
            outcome["matches"] = _infer(module, client, *rest)
        elif action == "infer_body_into":
            outcome["matches"] = _infer_body_into(module, client, *rest)
        elif action == "own_region":
            outcome["matches"] = _own_region(protocol, module, client, *rest)
        else:
            raise ValueError(f"unknown step {action}")
    except InferenceServerException as e:
        outcome = {"ok": False, "code": str(e.status()), "message": e.message()}
    return outcome


def main():
    http_url, grpc_url, steps = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    print(json.dumps([_step(step, http_url, grpc_url) for step in steps]))


if __name__ == "__main__":
    main()
