"""The deployment files of deploy/: the KServe manifests are valid against KServe's published
CRD schemas (schemas/, see its README), checked strictly (an unknown field is an error, as
`kubectl apply --validate=strict` makes it); every flag they and the Dockerfile pass to `ferry
serve` is one `ferry serve --help` lists, and the server starts with exactly those arguments and
answers the probes the runtime declares; the runtime runs the image docs/deploy.md builds with the
torch backend (the Dockerfile's serve-torch stage, against one pinned PyTorch), with /tmp
writable for libtorch; the model repository the docs mount serves every model it holds, ready,
on a server that sees no GPU."""
import functools
import gzip
import json
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
DEPLOY_DOC = os.path.join(HERE, "..", "..", "docs", "deploy.md")
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


def dockerfile_stages():
    """{stage name: (the image it starts FROM, its instructions)} in the Dockerfile's order."""
    with open(DOCKERFILE) as f:
        text = f.read()
    stages = {}
    for match in re.finditer(r"(?ms)^FROM (\S+) AS (\S+)$(.*?)(?=^FROM |\Z)", text):
        stages[match.group(2)] = (match.group(1), match.group(3))
    return stages


def documented_builds():
    """{image tag: Dockerfile target} of each `docker build ... --target T -t TAG .` in docs/deploy.md."""
    with open(DEPLOY_DOC) as f:
        text = f.read()
    return {tag: target for target, tag in
            re.findall(r"^docker build -f deploy/Dockerfile --target (\S+) -t (\S+) \.$", text, re.M)}


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
        self.assertRegex(text, r"(?m)^ARG CUDA_VERSION=13\.0\.\d+$")
        stages = dockerfile_stages()
        self.assertEqual(list(stages), ["build", "torch-build", "serve", "serve-torch"])
        self.assertEqual(len(re.findall(r"(?m)^FROM ", text)), len(stages), "every stage is named")
        self.assertEqual(stages["build"][0], "nvidia/cuda:${CUDA_VERSION}-devel-ubuntu24.04")
        self.assertEqual(stages["serve"][0], "nvidia/cuda:${CUDA_VERSION}-runtime-ubuntu24.04")
        users = re.findall(r"(?m)^USER (\S+)", stages["serve"][1])
        self.assertTrue(users and not users[-1].startswith(("0", "root")), users)
        self.assertIsNone(re.search(r"(?m)^USER ", stages["serve-torch"][1]), "serve-torch keeps serve's user")
        self.assertIn("--model-repository", args)
        self.assertEqual(args[args.index("--model-repository") + 1], "/mnt/models")
        self.assertIn('ENTRYPOINT ["/opt/ferry/bin/ferry"]', text)
        self.assertEqual(shlex.split(" ".join(args))[0], "serve")

    def test_the_torch_image_has_the_backend_built_against_a_pinned_pytorch(self):
        _, text = dockerfile_serve_args()
        stages = dockerfile_stages()
        torch_build = stages["torch-build"][1]
        self.assertEqual(stages["torch-build"][0], "build")
        # One exact PyTorch, from its CUDA 13 wheels: the backend and the served packages need the same.
        self.assertRegex(text, r"(?m)^ARG TORCH_VERSION=\d+\.\d+\.\d+$")
        self.assertRegex(text, r"(?m)^ARG TORCH_INDEX_URL=https://download\.pytorch\.org/whl/cu13\d$")
        self.assertIn('"torch==${TORCH_VERSION}"', torch_build)
        self.assertIn("--target ferry_backend_torch", torch_build)
        self.assertIn("-DCMAKE_PREFIX_PATH=/opt/torch/site-packages/torch/share/cmake", torch_build)
        # The torch image is serve's, plus the backend and the libraries it loads, at their build paths.
        self.assertEqual(stages["serve-torch"][0], "serve")
        copied = re.findall(r"(?m)^COPY --from=torch-build (\S+) (\S+)$", stages["serve-torch"][1])
        self.assertIn(("/opt/ferry/lib/ferry/backends/libferry_backend_torch.so", "/opt/ferry/lib/ferry/backends/"),
                      copied)
        for folder in ("/opt/torch/site-packages/torch/lib", "/opt/torch/site-packages/nvidia"):
            self.assertIn((folder, folder), copied)
        self.assertEqual(list(stages)[-1], "serve-torch", "the default target serves torch: models")

    def test_the_manifests_reference_the_image_with_the_torch_backend(self):
        # The example service serves a torch: model; the runtime's image is the one docs/deploy.md
        # builds from the serve-torch stage, tagged with its PyTorch version.
        builds = documented_builds()
        self.assertEqual(builds.get("ferry-serve"), "serve", builds)
        image = container(load_yaml(RUNTIME))["image"]
        self.assertEqual(builds.get(image), "serve-torch", f"{image} is not built so in docs/deploy.md: {builds}")
        _, text = dockerfile_serve_args()
        version = re.search(r"(?m)^ARG TORCH_VERSION=(\S+)$", text).group(1)
        self.assertIn(version, image)
        self.assertIn(f"docker build -f deploy/Dockerfile --target serve-torch -t {image} .", text)

    def test_tmp_is_writable_for_libtorch(self):
        # libtorch unpacks a package into /tmp as it loads it; the container's root is read-only.
        runtime = load_yaml(RUNTIME)
        c = container(runtime)
        self.assertTrue(c["securityContext"]["readOnlyRootFilesystem"])
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        self.assertIn("/tmp", mounts)
        volumes = {v["name"]: v for v in runtime["spec"].get("volumes", [])}
        self.assertIn("emptyDir", volumes[mounts["/tmp"]])


def documented_mounts():
    """{repository folder, relative to the repository's root: where it is shown} of each `docker run
    ... -v "$PWD/FOLDER:/mnt/models..."` in docs/deploy.md and the Dockerfile's header."""
    mounts = {}
    for path in (DEPLOY_DOC, DOCKERFILE):
        with open(path, encoding="utf-8") as f:
            for folder in re.findall(r'-v "\$PWD/([^":]+):/mnt/models', f.read()):
                mounts.setdefault(folder, os.path.basename(path))
    return mounts


class TheDocumentedRepository(unittest.TestCase):
    """The repository the docs mount serves every one of its models: readiness is 200 at once, on
    a server that sees no GPU (the image without one serves the built-in models on the CPU)."""

    def test_the_docs_mount_a_repository(self):
        self.assertIn("deploy.md", documented_mounts().values())

    def test_every_model_of_the_mounted_repository_is_ready_without_a_gpu(self):
        root = os.path.normpath(os.path.join(HERE, "..", ".."))
        for folder, where in documented_mounts().items():
            with self.subTest(folder=folder, shown_in=where):
                repository = os.path.join(root, folder)
                self.assertTrue(os.path.isdir(repository), f"{where} mounts {folder}, which does not exist")
                server = FerryServer(repository=repository, env={"CUDA_VISIBLE_DEVICES": ""})
                try:
                    with urllib.request.urlopen(f"http://{server.http_url}/v2/health/ready") as answer:
                        self.assertEqual(answer.status, 200)
                    request = urllib.request.Request(f"http://{server.http_url}/v2/repository/index", data=b"{}",
                                                     method="POST")
                    with urllib.request.urlopen(request) as answer:
                        index = json.loads(answer.read())
                finally:
                    code = server.stop()
                self.assertEqual(code, 0, "\n".join(server.log))
                models = sorted(name for name in os.listdir(repository)
                                if os.path.isdir(os.path.join(repository, name)))
                self.assertEqual(sorted(m["name"] for m in index), models)
                for model in index:
                    self.assertEqual(model["state"], "READY", f"{folder}/{model['name']}: {model.get('reason')}")


if __name__ == "__main__":
    unittest.main()
