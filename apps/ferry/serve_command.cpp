// `ferry serve`: a KServe v2 server over a model repository (src/serve). Unlike info and bench it
// also starts without a GPU: built-in models then run on the CPU, which it says on one line.
// --devices picks the GPUs as ferry bench's does; without a GPU only its default, all, starts.
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <sys/resource.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "ferry/core/byte_size.hpp"
#include "ferry/core/error.hpp"
#include "serve/admission/memory_release.hpp"
#include "serve/server.hpp"
#include "serve_allocator.hpp"

namespace ferry::cli {
namespace {

// Request and response tensors are megabytes each, allocated and freed with every request. glibc
// gives blocks that large back to the kernel when they are freed (its mmap threshold starts at
// 128 KiB, and the heap top is trimmed past 128 KiB), so every request faulted its pages in again
// and the kernel cleared them: 4.8 MB in and out through HTTP on the development machine spent 30%
// of the server's CPU in page faults, and took 17.8 ms end to end against 10.1 ms with the
// blocks kept (compute_input 3.8 -> 1.1 ms, compute_output 1.9 -> 0.7 ms, CPU reference models).
// So the server keeps freed memory for the next request while load lasts: blocks up to glibc's
// largest mmap threshold (32 MiB) come from the heap, and up to 1 GiB of free heap stays mapped.
// Once the server is idle it gives that memory back with malloc_trim (serve/memory_release.hpp),
// which releases the free pages of every arena but the top of a thread's own arena: with one
// arena, idle memory came back to within 1 MiB of its level before a load, against 120 MiB above
// it with glibc's default arenas (docs/RESULTS.md, `ferry serve` under hostile load). One arena
// costs small requests their rate on a many-core host, hence jemalloc where it is installed
// (serve_allocator.hpp); these settings are for glibc only. Settings the user gives glibc through
// its environment variables win.
void keep_freed_tensor_memory() {
  if (serve::running_on_jemalloc()) return;
#if defined(__GLIBC__)
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) (void)mallopt(M_MMAP_THRESHOLD, 32 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) (void)mallopt(M_TRIM_THRESHOLD, 1 << 30);
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) (void)mallopt(M_ARENA_MAX, 1);
#endif
}

// Every HTTP connection and every registered system shared-memory region holds a file descriptor.
// The server's own limits (connections, regions) are what should refuse clients, with a message
// naming them, not the soft limit of 1024 descriptors that many systems start processes with. So
// the soft limit is raised to the hard one, as servers commonly do.
void raise_open_file_limit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &files);
  }
}

// --http-min-transfer-rate: a byte size a second, or 0 for no minimum rate.
std::size_t transfer_rate_of(const std::string& text) { return text == "0" ? 0 : parse_byte_size(text); }

// CLI11's check for an option that takes a byte size (e.g. 2GiB): empty when it parses, else why not.
std::string a_byte_size(const std::string& text) {
  try {
    (void)parse_byte_size(text);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto options = std::make_shared<serve::server_options>();
  auto request_timeout_ms = std::make_shared<std::int64_t>(options->request_timeout.count());
  auto receive_timeout_ms = std::make_shared<std::int64_t>(options->http.request_timeout.count());
  auto header_timeout_ms = std::make_shared<std::int64_t>(options->http.header_timeout.count());
  auto inflight_bytes = std::make_shared<std::string>();
  auto peer_inflight_bytes = std::make_shared<std::string>();
  auto control_mode = std::make_shared<std::string>("none");
  auto poll_secs = std::make_shared<std::int64_t>(options->repository_poll.count());
  auto drain_secs = std::make_shared<std::int64_t>(options->drain_timeout.count());
  auto control_secs = std::make_shared<std::int64_t>(
      std::chrono::duration_cast<std::chrono::seconds>(options->model_control_timeout).count());
  auto transfer_rate = std::make_shared<std::string>("128KiB");
  auto transfer_grace_ms = std::make_shared<std::int64_t>(options->http.transfer_grace.count());
  auto* cmd = app.add_subcommand("serve", "serve a model repository over the KServe v2 protocol (HTTP/REST and gRPC)");
  cmd->add_option("--model-repository", options->model_repository,
                  "folder with one sub-folder per model, each holding a config.json")
      ->required()
      ->check(CLI::ExistingDirectory);
  cmd->add_option("--http-port", options->http.port, "HTTP/REST port (0: any free port, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--grpc-port", options->grpc.port, "gRPC port (0: any free port, printed at start)")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  cmd->add_option("--host", options->http.host,
                  "address to listen on, HTTP and gRPC (127.0.0.1: this machine only; 0.0.0.0: every interface "
                  "of this machine, as the container image does); the interfaces are named at start")
      ->capture_default_str();
  cmd->add_option("--strict-readiness", options->strict_readiness,
                  "the server is ready only when every model loaded (Triton's default); false: only the models "
                  "that failed are not ready")
      ->default_str("true");
  cmd->add_option("--http-threads", options->http.threads,
                  "threads decoding HTTP request bodies and encoding answers (no thread waits for a model; 0: one "
                  "per CPU core, at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--http-io-threads", options->http.io_threads,
                  "threads running the HTTP sockets (reading requests, writing answers, decoding inference bodies "
                  "of a few KiB; they never wait); 0: a quarter of the CPU cores, 2 to 8")
      ->capture_default_str()
      ->check(CLI::Range(0, 64));
  cmd->add_option("--grpc-threads", options->grpc.threads,
                  "threads parsing gRPC inference requests and encoding answers (0: one per CPU core, at least 2)")
      ->capture_default_str()
      ->check(CLI::Range(0, 256));
  cmd->add_option("--http-max-connections", options->http.max_connections,
                  "HTTP connections served at once; one more is answered 503 and closed")
      ->capture_default_str()
      ->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--http-max-connections-per-peer", options->http.max_connections_per_peer,
                  "HTTP connections served at once from one client network (--http-peer-prefix-ipv4/-ipv6); one "
                  "more is answered 503 and closed (0: a quarter of --http-max-connections). The last tenth of "
                  "--http-max-connections is kept for networks holding fewer than 4")
      ->capture_default_str()
      ->check(CLI::Range(0, 1'000'000));
  cmd->add_option("--http-peer-prefix-ipv4", options->http.peer_prefix_ipv4,
                  "IPv4 addresses sharing this many leading bits are one client for the per-client connection "
                  "cap (32: each address)")
      ->capture_default_str()
      ->check(CLI::Range(0, 32));
  cmd->add_option("--http-peer-prefix-ipv6", options->http.peer_prefix_ipv6,
                  "IPv6 addresses sharing this many leading bits are one client for the per-client connection "
                  "cap (128: each address)")
      ->capture_default_str()
      ->check(CLI::Range(0, 128));
  cmd->add_option("--http-min-transfer-rate", *transfer_rate,
                  "bytes a second a request body and an answer must move at on average, once "
                  "--http-transfer-grace-ms has passed (e.g. 128KiB); a body slower than that is answered 408 and "
                  "gives its share of the in-flight budget back, an answer slower than that closes its connection "
                  "(0: no minimum)")
      ->capture_default_str()
      ->check([](const std::string& text) {
        try {
          (void)transfer_rate_of(text);
          return std::string();
        } catch (const std::exception& e) {
          return std::string(e.what());
        }
      });
  cmd->add_option("--http-transfer-grace-ms", *transfer_grace_ms,
                  "how long a request body or an answer may move slower than --http-min-transfer-rate at first, and "
                  "the longest it may pause")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{3600} * 1000));
  cmd->add_option("--http-header-timeout-ms", *header_timeout_ms,
                  "longest an HTTP request's headers may take to arrive from its first byte (408 past it)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{24} * 3600 * 1000));
  cmd->add_option("--max-inflight-bytes", *inflight_bytes,
                  "memory the inference requests in flight may hold at once, over HTTP and gRPC together (e.g. "
                  "2GiB); a request that does not fit is refused from its headers, unread (HTTP 503 with "
                  "Retry-After, gRPC RESOURCE_EXHAUSTED). Default: an eighth of the machine's memory (or of the "
                  "cgroup's limit), printed at start")
      ->check(a_byte_size);
  cmd->add_option("--max-inflight-bytes-per-peer", *peer_inflight_bytes,
                  "memory the HTTP inference requests of one client network (--http-peer-prefix-ipv4/-ipv6) may hold "
                  "at once (e.g. 512MiB), so one network cannot take the whole in-flight budget; a larger request "
                  "from it is refused 413. Default: a quarter of what requests are admitted into (the budget less "
                  "gRPC's part)")
      ->check(a_byte_size);
  cmd->add_option("--model-control-mode", *control_mode,
                  "which models load when: none (every model at start; the API may not load or unload), explicit "
                  "(only --load-model at start, then POST /v2/repository/models/NAME/load and /unload), poll "
                  "(every model at start, then added, changed and removed folders every --repository-poll-secs)")
      ->capture_default_str()
      ->check(CLI::IsMember({"none", "explicit", "poll"}));
  cmd->add_option("--load-model", options->load_models,
                  "with --model-control-mode explicit: a model loaded at start (repeatable)");
  cmd->add_option("--repository-poll-secs", *poll_secs,
                  "with --model-control-mode poll: seconds between scans of the model repository")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{24} * 3600));
  cmd->add_option("--drain-timeout-secs", *drain_secs,
                  "on the first SIGTERM/SIGINT, the longest the server waits for requests in flight before it "
                  "exits 1 without them (0: no limit); keep it below the pod's terminationGracePeriodSeconds")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{24} * 3600));
  cmd->add_option("--max-model-threads", options->model_limits.max_model_threads,
                  "threads one model may run (instances_per_gpu x inflight workers on each GPU, and one); a model "
                  "asking for more is unavailable, saying so")
      ->capture_default_str()
      ->check(CLI::Range(2, 65536));
  cmd->add_option("--max-total-model-threads", options->model_limits.max_total_threads,
                  "threads every loaded model may run together; a model that would pass it is unavailable")
      ->capture_default_str()
      ->check(CLI::Range(2, 1 << 20));
  cmd->add_option("--model-control-timeout-secs", *control_secs,
                  "longest a load or unload call waits for its outcome (they run one at a time on a thread of "
                  "their own); past it the call is answered 504 / DEADLINE_EXCEEDED, and one that started goes "
                  "on (the repository index shows LOADING or UNLOADING)")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{24} * 3600));
  cmd->add_flag("--allow-repository-symlinks", options->allow_repository_symlinks,
                "serve model folders and config files that are symbolic links leading outside the repository, "
                "and model files named by a relative path that climbs out of it");
  cmd->add_option("--http-receive-timeout-ms", *receive_timeout_ms,
                  "longest an HTTP request's headers and body may take to arrive from its first byte (408 past "
                  "it), and its answer to be sent")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{24} * 3600 * 1000));
  cmd->add_option("--request-timeout-ms", *request_timeout_ms,
                  "longest a request waits in its model's queue for a worker; past it, it is answered 504 (gRPC "
                  "DEADLINE_EXCEEDED) and never run (0: no limit). A request's own timeout parameter "
                  "(microseconds) may shorten it")
      ->capture_default_str()
      ->check(CLI::Range(std::int64_t{0}, std::int64_t{24} * 3600 * 1000));
  cmd->add_option("--devices", options->devices,
                  "GPUs to run models on: 0,1 or all (every GPU; the CPU on a machine without one); a request "
                  "whose input is in a CUDA shared-memory region runs on that region's GPU")
      ->capture_default_str();
  cmd->add_option("--backend-directory", options->backend_directory,
                  "folder searched first for model files' backends (libferry_backend_NAME.so for \"NAME:PATH\" "
                  "engines), before FERRY_BACKEND_PATH and the folder beside ferry");
  cmd->add_option("--profile", options->profile,
                  "models with \"strategy\": \"auto\" or \"inflight\": \"auto\" pick from this profile (ferry "
                  "calibrate) instead of the first GPU's own in $XDG_CACHE_HOME/ferry/profiles");
  auto* client_shm = cmd->add_option("--allow-client-shm", options->client_shm_key_prefix,
                                     "let clients on this machine register shared-memory regions and point tensors "
                                     "at them: the server then reads and writes, with its own rights, objects of "
                                     "the client's user. =PREFIX (e.g. =ferry-): only system shared-memory keys "
                                     "starting with it (docs/USAGE.md, Client shared memory)")
                         ->expected(0, 1);
  cmd->add_option("--max-shm-regions", options->max_shm_regions,
                  "system shared-memory regions registered at once; more are refused (HTTP 429)")
      ->capture_default_str()
      ->check(CLI::Range(1, 32768));  // each a mapping: half the kernel's default 65,530
  cmd->add_option("--max-cuda-shm-regions", options->max_cuda_shm_regions,
                  "CUDA shared-memory regions registered at once; more are refused (HTTP 429)")
      ->capture_default_str()
      ->check(CLI::Range(1, 32768));  // each a mapping: half the kernel's default 65,530
  cmd->callback([cmd, options, request_timeout_ms, receive_timeout_ms, header_timeout_ms, inflight_bytes,
                 peer_inflight_bytes, control_mode, poll_secs, drain_secs, control_secs, transfer_rate,
                 transfer_grace_ms, client_shm] {
    options->allow_client_shm = client_shm->count() > 0;
    options->model_control_timeout = std::chrono::seconds(*control_secs);
    options->http.min_transfer_rate = transfer_rate_of(*transfer_rate);
    options->http.transfer_grace = std::chrono::milliseconds(*transfer_grace_ms);
    options->model_control = *serve::parse_model_control_mode(*control_mode);
    // Flags of another mode are refused, not ignored: they say the user expects what will not happen.
    if (!options->load_models.empty() && options->model_control != serve::model_control_mode::explicit_load)
      throw invalid_argument("--load-model is for --model-control-mode explicit (with " + *control_mode +
                             " the repository decides which models load)");
    if (cmd->count("--repository-poll-secs") > 0 && options->model_control != serve::model_control_mode::poll)
      throw invalid_argument("--repository-poll-secs is for --model-control-mode poll (with " + *control_mode +
                             " the repository is never rescanned)");
    options->repository_poll = std::chrono::seconds(*poll_secs);
    options->drain_timeout = std::chrono::seconds(*drain_secs);
    options->grpc.host = options->http.host;
    options->request_timeout = std::chrono::milliseconds(*request_timeout_ms);
    options->http.request_timeout = std::chrono::milliseconds(*receive_timeout_ms);
    options->http.header_timeout = std::chrono::milliseconds(*header_timeout_ms);
    if (!inflight_bytes->empty()) options->max_inflight_bytes = parse_byte_size(*inflight_bytes);
    if (!peer_inflight_bytes->empty()) options->max_inflight_bytes_per_peer = parse_byte_size(*peer_inflight_bytes);
    run_on_jemalloc_where_installed();  // returns only where the server stays on glibc
    keep_freed_tensor_memory();
    raise_open_file_limit();
    serve::run_server(*options);
  });
}

}  // namespace ferry::cli
