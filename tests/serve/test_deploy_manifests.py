"""The deployment files of deploy/: the KServe manifests are valid against KServe's published
CRD schemas (schemas/, see its README), checked strictly (an unknown field is an error, as
`kubectl apply --validate=strict` makes it); every flag they and the Dockerfile pass to `ferry
serve` is one `ferry serve --help` lists, and the server starts with exactly those arguments and
answers the probes the runtime declares."""
import functools
import gzip
import os
import re
import shlex
import shutil
import subprocess
import unittest
import urllib.request

try:  # scripts/setup.sh installs both; a host without them (the GPU host) skips what needs them
    import jsonschema
except ImportError:
    jsonschema = None
try:
    import yaml
except ImportError:
    yaml = None

from ferry_server import FerryServer, write_repository

HERE = os.path.dirname(os.path.abspath(__file__))
DEPLOY = os.path.join(HERE, "..", "..", "deploy")
SCHEMAS = os.path.join(HERE, "schemas")
RUNTIME = os.path.join(DEPLOY, "kserve", "clusterservingruntime.yaml")
SERVICE = os.path.join(DEPLOY, "kserve", "inferenceservice.yaml")
DOCKERFILE = os.path.join(DEPLOY, "Dockerfile")
CRDS = {"ClusterServingRuntime": "serving.kserve.io_clusterservingruntimes.yaml.gz",
        "InferenceService": "serving.kserve.io_inferenceservices.yaml.gz"}


def load_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def strict(schema):
    """The schema with unknown fields refused: every object that lists its properties and does not
    keep unknown fields (x-kubernetes-preserve-unknown-fields) gets additionalProperties false, as
    the API server's strict field validation treats it."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if "properties" in out and "additionalProperties" not in out and \
            not out.get("x-kubernetes-preserve-unknown-fields"):
        out["additionalProperties"] = False
    return out


@functools.lru_cache(maxsize=None)
def crd_of(kind):
    """KServe's CRD of `kind` (read once: the InferenceService one is 2 MB of YAML)."""
    with gzip.open(os.path.join(SCHEMAS, CRDS[kind]), "rt") as f:
        return yaml.load(f, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def schema_for(document):
    """The openAPIV3Schema of the document's kind and version, from KServe's CRD."""
    crd = crd_of(document["kind"])
    group, version = document["apiVersion"].split("/")
    assert crd["spec"]["group"] == group and crd["spec"]["names"]["kind"] == document["kind"]
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return strict(v["schema"]["openAPIV3Schema"])
    raise AssertionError(f"KServe's CRD for {document['kind']} has no version {version}")


def problems(document):
    validator = jsonschema.Draft7Validator(schema_for(document))
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(document)]


def serve_help():
    return subprocess.run([os.environ["FERRY_BIN"], "serve", "--help"], capture_output=True, text=True,
                          check=True).stdout


def container(runtime):
    [c] = runtime["spec"]["containers"]
    return c


def dockerfile_serve_args():
    """The arguments of the Dockerfile's CMD (exec form), which follow its ENTRYPOINT `ferry`."""
    with open(DOCKERFILE) as f:
        text = f.read()
    cmd = re.search(r'^CMD (\[.*\])$', text, re.M)
    return yaml.safe_load(cmd.group(1)), text


@unittest.skipIf(jsonschema is None or yaml is None, "jsonschema and PyYAML are not installed (scripts/setup.sh installs them)")
class Manifests(unittest.TestCase):
    def test_valid_against_kserves_schemas(self):
        for path in (RUNTIME, SERVICE):
            self.assertEqual(problems(load_yaml(path)), [], path)

    def test_the_check_refuses_what_kubernetes_would(self):
        # The validation itself can fail: a misspelt field, a wrong type and a value off its enum.
        runtime = load_yaml(RUNTIME)
        container(runtime)["readinesProbe"] = container(runtime).pop("readinessProbe")
        self.assertTrue(any("readinesProbe" in p for p in problems(runtime)), problems(runtime))
        service = load_yaml(SERVICE)
        service["spec"]["predictor"]["minReplicas"] = "one"
        service["spec"]["predictor"]["autoScaling"]["metrics"][0]["type"] = "Queue"
        found = problems(service)
        self.assertTrue(any("minReplicas" in p for p in found), found)
        self.assertTrue(any("'Queue' is not one of" in p for p in found), found)

    def test_the_service_uses_the_runtime(self):
        runtime, service = load_yaml(RUNTIME), load_yaml(SERVICE)
        model = service["spec"]["predictor"]["model"]
        self.assertEqual(model["runtime"], runtime["metadata"]["name"])
        self.assertIn(model["modelFormat"]["name"], [f["name"] for f in runtime["spec"]["supportedModelFormats"]])
        self.assertIn("v2", runtime["spec"]["protocolVersions"])
        # The drain ends before the kubelet's kill.
        args = container(runtime)["args"]
        drain = int(next(a.split("=", 1)[1] for a in args if a.startswith("--drain-timeout-secs=")))
        self.assertLess(drain, service["spec"]["predictor"]["terminationGracePeriodSeconds"])
        # The autoscaler reads a metric the server exports.
        query = service["spec"]["predictor"]["autoScaling"]["metrics"][0]["external"]["metric"]["query"]
        self.assertIn("nv_inference_pending_request_count", query)

    def test_the_runtime_probes_and_scrapes_the_servers_ports(self):
        runtime = load_yaml(RUNTIME)
        c = container(runtime)
        args = dict(a.split("=", 1) for a in c["args"] if a.startswith("--"))
        self.assertEqual(args["--model-repository"], "/mnt/models")  # KServe's storage mount
        http, grpc = int(args["--http-port"]), int(args["--grpc-port"])
        self.assertEqual((http, grpc), (8000, 8001))
        self.assertEqual([p["containerPort"] for p in c["ports"]], [http, grpc])
        self.assertEqual((c["livenessProbe"]["httpGet"]["path"], c["livenessProbe"]["httpGet"]["port"]),
                         ("/v2/health/live", http))
        self.assertEqual((c["readinessProbe"]["httpGet"]["path"], c["readinessProbe"]["httpGet"]["port"]),
                         ("/v2/health/ready", http))
        annotations = runtime["spec"]["annotations"]
        self.assertEqual((annotations["prometheus.io/scrape"], annotations["prometheus.io/port"],
                          annotations["prometheus.io/path"]), ("true", str(http), "/metrics"))
        self.assertTrue(c["securityContext"]["runAsNonRoot"])


@unittest.skipIf(yaml is None, "PyYAML is not installed (scripts/setup.sh installs it)")
class FlagsMatchTheServer(unittest.TestCase):
    def flags_of(self, args):
        return [a.split("=", 1)[0] for a in args if a.startswith("--")]

    def test_every_flag_is_one_serve_knows(self):
        known = set(re.findall(r"^\s+(--[a-z0-9-]+)", serve_help(), re.M))
        self.assertIn("--model-control-mode", known)
        runtime_args = container(load_yaml(RUNTIME))["args"]
        self.assertEqual(runtime_args[0], "serve")
        docker_args, _ = dockerfile_serve_args()
        self.assertEqual(docker_args[0], "serve")
        for flag in self.flags_of(runtime_args) + self.flags_of(docker_args):
            self.assertIn(flag, known, f"{flag} is passed by deploy/ but `ferry serve --help` does not list it")

    def test_the_server_starts_with_the_runtimes_arguments(self):
        # The runtime's own arguments, but for the repository (/mnt/models) and the ports (8000,
        # 8001), which the test server gives as a temporary repository and free ports.
        repository = write_repository({"touch": {"engine": "touch", "input_size": "4KiB"}}, "ferry_deploy_")
        # And the address: the runtime listens on every interface of its pod, the test server on
        # this machine only.
        replaced = {"--model-repository", "--http-port", "--grpc-port", "--host"}
        args = [a for a in container(load_yaml(RUNTIME))["args"][1:] if a.split("=", 1)[0] not in replaced]
        self.assertIn("--model-control-mode=poll", args)
        self.assertIn("--allow-client-shm=ferry-", args)
        server = FerryServer(*args, repository=repository)
        try:
            for path in ("/v2/health/live", "/v2/health/ready", "/metrics"):
                with urllib.request.urlopen(f"http://{server.http_url}{path}") as answer:
                    self.assertEqual(answer.status, 200, path)
            self.assertTrue(any("model 'touch' ready" in line for line in server.log), "\n".join(server.log))
        finally:
            code = server.stop()
            shutil.rmtree(repository)
        self.assertEqual(code, 0, "\n".join(server.log))


@unittest.skipIf(yaml is None, "PyYAML is not installed (scripts/setup.sh installs it)")
class Dockerfile(unittest.TestCase):
    def test_recipe(self):
        args, text = dockerfile_serve_args()
        header = text.split("\n\n", 1)[0]
        self.assertIn("NOT BUILT HERE", header)
        self.assertIn("no access to a", header)
        self.assertRegex(text, r"(?m)^FROM nvidia/cuda:\$\{CUDA_VERSION\}-runtime-ubuntu24\.04$")
        self.assertRegex(text, r"(?m)^ARG CUDA_VERSION=13\.0\.\d+$")
        self.assertEqual(len(re.findall(r"(?m)^FROM ", text)), 2, "a build stage and a runtime stage")
        users = re.findall(r"(?m)^USER (\S+)", text)
        self.assertTrue(users and not users[-1].startswith(("0", "root")), users)
        self.assertIn("--model-repository", args)
        self.assertEqual(args[args.index("--model-repository") + 1], "/mnt/models")
        self.assertIn('ENTRYPOINT ["/opt/ferry/bin/ferry"]', text)
        self.assertEqual(shlex.split(" ".join(args))[0], "serve")


if __name__ == "__main__":
    unittest.main()
