// The backend loader (ferry/engines/backend.hpp, ferry/engines/model_engine.hpp, src/engines/plugin) against real
// plugins: the example backend (examples/backend, plain C), `seam` (built-ins exported through the
// C++ side the torch and TensorRT backends use) and broken ones (tests/backends). No GPU needed:
// models load for the CPU, and the example computes there.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "ferry/core/device_fault.hpp"
#include "ferry/core/error.hpp"
#include "ferry/engines/backend.hpp"
#include "ferry/engines/backend_api.h"
#include "ferry/engines/builtin.hpp"
#include "ferry/engines/model_engine.hpp"
#include "support/backend_test_paths.hpp"

namespace {

namespace fs = std::filesystem;

const fs::path example_dir = ferry::test::example_backend_dir();
const fs::path test_dir = ferry::test::test_backend_dir();
const std::string example_model = ferry::test::example_model().string();

ferry::model_engine_options on_host(std::vector<fs::path> dirs = {example_dir, test_dir}) {
  return {.device = -1, .max_concurrency = 1, .backend_directories = std::move(dirs)};
}

// The message of what `load` throws as `Error`, or a failure.
template <class Error, class Load>
std::string message_of(Load&& load) {
  try {
    load();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw another type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "did not throw";
  return {};
}

fs::path write_model(const std::string& name, const std::string& text) {
  const fs::path file = fs::temp_directory_path() / ("ferry_backend_test_" + name);
  std::ofstream(file) << text;
  return file;
}

bool loaded_now(const fs::path& file) {
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);
  return true;
}

std::vector<float> compute_on_host(const ferry::host_reference_engine& e, const std::vector<float>& x,
                                   std::size_t out) {
  std::vector<float> y(out);
  const std::span<const std::byte> in[] = {std::as_bytes(std::span(x))};
  const std::span<std::byte> outs[] = {std::as_writable_bytes(std::span(y))};
  e.run_on_host(in, outs);
  return y;
}

TEST(BackendPlugins, TheExampleDescribesItsModelThroughTheCAbi) {
  const auto e = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
  EXPECT_EQ(e->name(), "scale2");
  ASSERT_EQ(e->io().size(), 2U);
  EXPECT_EQ(e->io()[0].name, "x");
  EXPECT_EQ(e->io()[0].role, ferry::tensor_role::input);
  EXPECT_EQ(e->io()[0].type, ferry::dtype::f32);
  EXPECT_EQ(e->io()[0].shape, (std::vector<std::int64_t>{ferry::dynamic_dim, 1024}));
  EXPECT_EQ(e->io()[1].name, "y");
  EXPECT_EQ(e->io()[1].role, ferry::tensor_role::output);

  const ferry::shape_binding batch16[] = {{"x", {16, 1024}}};
  const auto concrete = e->resolve(batch16);
  EXPECT_EQ(concrete[0].shape, (std::vector<std::int64_t>{16, 1024}));
  EXPECT_EQ(concrete[1].shape, (std::vector<std::int64_t>{16, 1024}));
  EXPECT_EQ(e->input_bytes_read(concrete[0]), 16U * 1024 * 4);  // not exported: every byte
}

TEST(BackendPlugins, ErrorsInsideACallComeBackAsTheirKindWithTheBackendsMessage) {
  const auto e = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
  const ferry::shape_binding too_big[] = {{"x", {65, 1024}}};
  auto text = message_of<ferry::invalid_argument>([&] { (void)e->resolve(too_big); });
  EXPECT_NE(text.find("backend 'affine'"), std::string::npos) << text;
  EXPECT_NE(text.find("batch must be in [1, 64], got 65"), std::string::npos) << text;
  const ferry::shape_binding unknown[] = {{"images", {1, 1024}}};
  text = message_of<ferry::invalid_argument>([&] { (void)e->resolve(unknown); });
  EXPECT_NE(text.find("no input 'images'"), std::string::npos) << text;

  text = message_of<ferry::invalid_argument>(
      [&] { (void)ferry::load_model_engine_on_host("affine:/nonexistent/m.affine", on_host()); });
  EXPECT_NE(text.find("'/nonexistent/m.affine' cannot be opened"), std::string::npos) << text;
  const auto corrupt = write_model("corrupt.affine", "width 8\nmax_batch 2\nscale 1\nbias 0\n");
  text = message_of<ferry::invalid_argument>(
      [&] { (void)ferry::load_model_engine_on_host("affine:" + corrupt.string(), on_host()); });
  EXPECT_NE(text.find("is not an affine model"), std::string::npos) << text;
  const auto nan = write_model("nan.affine", "format ferry-affine/1\nwidth 8\nmax_batch 2\nscale nan\nbias 0\n");
  text = message_of<ferry::invalid_argument>(
      [&] { (void)ferry::load_model_engine_on_host("affine:" + nan.string(), on_host()); });
  EXPECT_NE(text.find("scale must be a finite number"), std::string::npos) << text;
}

TEST(BackendPlugins, TheExampleOnTheCpuMatchesTheInProcessTouchBitForBit) {
  // scale 2, bias 1 is what the built-in touch computes, each with one fused multiply-add.
  const auto plugin = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
  const auto touch = ferry::make_builtin_engine("touch", {.input_bytes = 3 * 1024 * 4, .batch = 1});
  std::vector<float> x(3 * 1024);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.37F * static_cast<float>(i) - 511.3F;
  EXPECT_EQ(compute_on_host(*plugin, x, x.size()), compute_on_host(*touch, x, x.size()));
  // The batch is read off the input's size; a size that is no whole number of rows is named.
  x.push_back(1.0F);
  const auto text = message_of<ferry::invalid_argument>([&] { (void)compute_on_host(*plugin, x, x.size()); });
  EXPECT_NE(text.find("no whole number of 4096-byte rows"), std::string::npos) << text;
}

TEST(BackendPlugins, SeveralThreadsComputeAtOnceEachItsOwnAnswer) {
  const auto e = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
  std::vector<std::thread> threads;
  std::vector<int> wrong(8, 0);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const std::size_t rows = 1 + static_cast<std::size_t>((t + round) % 8);
        std::vector<float> x(rows * 1024, static_cast<float>(t * 1000 + round));
        const auto y = compute_on_host(*e, x, x.size());
        for (const float v : y) wrong[static_cast<std::size_t>(t)] += v != 2.0F * x[0] + 1.0F;
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(8, 0));
}

TEST(BackendPlugins, ALibraryStaysLoadedWhileAModelLivesAndUnloadsAfterAndReloads) {
  const fs::path file = example_dir / ferry::backend_file_name("affine");
  ASSERT_FALSE(loaded_now(file));
  {
    auto first = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
    auto second = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
    EXPECT_TRUE(loaded_now(file));
    first.reset();
    EXPECT_TRUE(loaded_now(file));  // the second model holds it
    EXPECT_EQ(compute_on_host(*second, std::vector<float>(1024, 3.0F), 1024)[5], 7.0F);
  }
  EXPECT_FALSE(loaded_now(file));
  const auto again = ferry::load_model_engine_on_host("affine:" + example_model, on_host());
  EXPECT_TRUE(loaded_now(file));
  EXPECT_EQ(compute_on_host(*again, std::vector<float>(1024, -1.0F), 1024)[0], -1.0F);
}

TEST(BackendPlugins, AMissingBackendNamesWhereItLooked) {
  const auto text = message_of<ferry::unsupported>([] {
    (void)ferry::load_model_engine("nosuch:model.bin", {.backend_directories = {"/opt/a", "/opt/b"}});
  });
  EXPECT_NE(text.find("no backend 'nosuch'"), std::string::npos) << text;
  EXPECT_NE(text.find("libferry_backend_nosuch.so"), std::string::npos) << text;
  EXPECT_NE(text.find("/opt/a, /opt/b"), std::string::npos) << text;
}

TEST(BackendPlugins, ABrokenBackendIsRefusedWithOneClearMessage) {
  auto text = message_of<ferry::unsupported>([] { (void)ferry::load_model_engine("oldapi:m", on_host()); });
  const std::string newer = "built for backend API version " + std::to_string(FERRY_BACKEND_API_VERSION + 1) +
                            " and this ferry speaks versions 1 to " + std::to_string(FERRY_BACKEND_API_VERSION);
  EXPECT_NE(text.find(newer), std::string::npos) << text;
  text = message_of<ferry::unsupported>([] { (void)ferry::load_model_engine("partial:m", on_host()); });
  EXPECT_NE(text.find("lacks the required functions"), std::string::npos) << text;
  EXPECT_NE(text.find("'ferry_backend_model_load'"), std::string::npos) << text;
  EXPECT_NE(text.find("'ferry_backend_context_enqueue'"), std::string::npos) << text;
  text = message_of<ferry::unsupported>([] { (void)ferry::load_model_engine("unresolved:m", on_host()); });
  EXPECT_NE(text.find("cannot be loaded"), std::string::npos) << text;
  EXPECT_NE(text.find("ferry_test_missing_dependency"), std::string::npos) << text;  // dlerror's text
  text = message_of<ferry::unsupported>([] { (void)ferry::load_model_engine("junk:m", on_host()); });
  EXPECT_NE(text.find("libferry_backend_junk.so' cannot be loaded"), std::string::npos) << text;
  text = message_of<ferry::unsupported>([] { (void)ferry::load_model_engine("misnamed:m", on_host()); });
  EXPECT_NE(text.find("calls itself 'affine', not 'misnamed'"), std::string::npos) << text;
}

TEST(BackendPlugins, TheCxxSeamExportsAnEngineAndItsErrors) {
  const auto e = ferry::load_model_engine("seam:reduce", on_host());
  const auto reference = ferry::make_builtin_engine("reduce", {.input_bytes = std::size_t{1} << 20, .batch = 16});
  ASSERT_EQ(e->io().size(), reference->io().size());
  for (std::size_t i = 0; i < e->io().size(); ++i) {
    EXPECT_EQ(e->io()[i].name, reference->io()[i].name);
    EXPECT_EQ(e->io()[i].shape, reference->io()[i].shape);
    EXPECT_EQ(e->io()[i].type, reference->io()[i].type);
  }
  EXPECT_EQ(e->resolve({})[1].shape, reference->resolve({})[1].shape);
  // An error thrown inside the backend crosses as its kind and first line.
  const auto text =
      message_of<ferry::invalid_argument>([] { (void)ferry::load_model_engine("seam:nonsense", on_host()); });
  EXPECT_NE(text.find("backend 'seam': loading 'nonsense': engine 'nonsense': unknown workload"), std::string::npos)
      << text;
  // Engines exported from C++ compute on a GPU only.
  const auto host =
      message_of<ferry::unsupported>([] { (void)ferry::load_model_engine_on_host("seam:touch", on_host()); });
  EXPECT_NE(host.find("backend 'seam' cannot compute on the CPU"), std::string::npos) << host;
}

// Version 1 of the ABI had no graph functions: such a backend loads and computes, and the loader
// looks none of the version 2 functions up in it.
TEST(BackendPlugins, ABackendOfTheFirstApiVersionStillLoadsAndComputes) {
  const auto e = ferry::load_model_engine_on_host("apiv1:" + example_model, on_host());
  EXPECT_EQ(compute_on_host(*e, std::vector<float>(1024, 3.0F), 1024)[7], 7.0F);
}

// The context calls of version 2 cross the C ABI both ways (backend_export.cpp, then the loader):
// a context that captures graphs of its own accepts, a count below 0 is refused on ferry's side.
TEST(BackendPlugins, GraphsOfTheContextsOwnCrossTheCAbi) {
  const auto e = ferry::load_model_engine("seam:own-graphs", on_host());
  const auto context = e->make_context(e->resolve({}));
  EXPECT_EQ(context->capture_refusal(), "it stands for an engine that allocates while it runs");
  EXPECT_FALSE(context->use_own_graphs(4));
  EXPECT_FALSE(context->own_graphs_failure());
  EXPECT_FALSE(context->use_own_graphs(0));
  const auto text = message_of<ferry::invalid_argument>([&] { (void)context->use_own_graphs(-2); });
  EXPECT_NE(text.find("at least 0 graphs of its own, not -2"), std::string::npos) << text;
}

TEST(BackendPlugins, ListedWithTheirVersionsFirstFolderWinning) {
  const auto listed = ferry::list_backends({example_dir, test_dir, example_dir});
  std::map<std::string, ferry::backend_info> by_name;
  for (const auto& b : listed) by_name[b.name] = b;
  ASSERT_TRUE(by_name.contains("affine"));
  EXPECT_EQ(by_name["affine"].version, "1.0 (example, C)");
  EXPECT_EQ(by_name["affine"].api_version, FERRY_BACKEND_API_VERSION);
  EXPECT_TRUE(by_name["affine"].computes_on_host);
  EXPECT_EQ(by_name["affine"].file, example_dir / "libferry_backend_affine.so");
  EXPECT_TRUE(by_name["affine"].problem.empty());
  ASSERT_TRUE(by_name.contains("seam"));
  EXPECT_FALSE(by_name["seam"].computes_on_host);
  ASSERT_TRUE(by_name.contains("oldapi"));
  EXPECT_NE(by_name["oldapi"].problem.find("API version " + std::to_string(FERRY_BACKEND_API_VERSION + 1)),
            std::string::npos);
  // A backend built against version 1 of the header is still taken.
  ASSERT_TRUE(by_name.contains("apiv1"));
  EXPECT_EQ(by_name["apiv1"].api_version, 1U);
  EXPECT_TRUE(by_name["apiv1"].problem.empty()) << by_name["apiv1"].problem;
  EXPECT_TRUE(by_name["oldapi"].version.empty());
}

TEST(BackendPlugins, SearchedInTheFlagsFolderThenTheEnvironmentsThenBesideTheProgram) {
  ::setenv("FERRY_BACKEND_PATH", "/env/one::/env/two", 1);
  const auto dirs = ferry::backend_directories("/flag");
  ::unsetenv("FERRY_BACKEND_PATH");
  ASSERT_EQ(dirs.size(), 4U);
  EXPECT_EQ(dirs[0], "/flag");
  EXPECT_EQ(dirs[1], "/env/one");
  EXPECT_EQ(dirs[2], "/env/two");
  // Beside the program as an installation lays it out: <prefix>/bin/ferry finds
  // <prefix>/<libdir>/ferry/backends (this test program sits in build/tests, beside build/bin).
  const auto program = fs::read_symlink("/proc/self/exe");
  EXPECT_EQ(dirs[3], (program.parent_path() / FERRY_BACKEND_DIR_FROM_BIN).lexically_normal());
  EXPECT_TRUE(dirs[3].string().ends_with("ferry/backends")) << dirs[3];
  EXPECT_EQ(ferry::backend_directories(), std::vector<fs::path>{dirs[3]});
}

TEST(BackendPlugins, SpecsNameABackendUnlessTheyNameABuiltIn) {
  EXPECT_TRUE(ferry::is_model_engine_spec("torch:/m.pt2"));
  EXPECT_TRUE(ferry::is_model_engine_spec("trt:/m.plan"));
  EXPECT_TRUE(ferry::is_model_engine_spec("affine:m.affine"));
  EXPECT_FALSE(ferry::is_model_engine_spec("reduce"));
  EXPECT_FALSE(ferry::is_model_engine_spec("reduce:4"));
  EXPECT_FALSE(ferry::is_model_engine_spec("mlp:2x256"));
  EXPECT_FALSE(ferry::is_model_engine_spec("Torch:/m.pt2"));
  const auto text = message_of<ferry::invalid_argument>([] { (void)ferry::load_model_engine("torch:", {}); });
  EXPECT_NE(text.find("no model file after 'torch:'"), std::string::npos) << text;
}

}  // namespace

namespace {

const std::string lookup_text = "format ferry-lookup/1\nrows 10\nwidth 4\ndim 2\nmax_batch 2\ndeclare_bound yes\n";

TEST(BackendPlugins, AnIndexInputCarriesItsBoundThroughTheCAbi) {
  const auto e =
      ferry::load_model_engine_on_host("lookup:" + write_model("bound.lookup", lookup_text).string(), on_host());
  ASSERT_EQ(e->io().size(), 2U);
  EXPECT_EQ(e->io()[0].type, ferry::dtype::i64);
  EXPECT_EQ(e->io()[0].index_bound, std::optional<std::int64_t>(10));
  const auto bare = ferry::load_model_engine_on_host(
      "lookup:" + write_model("bare.lookup",
                              "format ferry-lookup/1\nrows 10\nwidth 4\ndim 2\nmax_batch 2\n"
                              "declare_bound no\n")
                      .string(),
      on_host());
  EXPECT_FALSE(bare->io()[0].index_bound.has_value());
}

// The user's bounds where a model file gives none (a bare package): --index-bound, "index_bounds".
TEST(BackendPlugins, IndexBoundsTheFileDoesNotGiveComeFromTheUser) {
  const auto bare = write_model("user.lookup",
                                "format ferry-lookup/1\nrows 10\nwidth 4\ndim 2\nmax_batch 2\n"
                                "declare_bound no\n")
                        .string();
  auto options = on_host();
  options.index_bounds = {ferry::parse_index_bound("ids=10")};
  const auto e = ferry::load_model_engine_on_host("lookup:" + bare, options);
  EXPECT_EQ(e->io()[0].index_bound, std::optional<std::int64_t>(10));
  const ferry::shape_binding one[] = {{"ids", {1, 4}}};
  EXPECT_EQ(e->resolve(one)[0].index_bound, std::optional<std::int64_t>(10));  // concrete I/O keeps it
  options.index_bounds = {{"tokens", 10}};
  auto text =
      message_of<ferry::invalid_argument>([&] { (void)ferry::load_model_engine_on_host("lookup:" + bare, options); });
  EXPECT_NE(text.find("has no input 'tokens' to bound; its inputs are: ids"), std::string::npos) << text;
  options.index_bounds = {{"x", 10}};
  text = message_of<ferry::invalid_argument>(
      [&] { (void)ferry::load_model_engine_on_host("affine:" + example_model, options); });
  EXPECT_NE(text.find("input 'x' is FP32; an index bound is for INT32 and INT64 inputs"), std::string::npos) << text;
  for (const char* bad : {"ids", "=3", "ids=", "ids=0", "ids=x"})
    EXPECT_THROW((void)ferry::parse_index_bound(bad), ferry::invalid_argument) << bad;
}

// A backend's device fault is ferry's device_fault, noted process-wide: in a child process, since
// a fault is permanent.
TEST(BackendPluginsDeathTest, ABackendsDeviceFaultIsNotedAndThrownAsOne) {
  const auto model = write_model("fault.lookup", lookup_text).string();
  const auto fault_on_host = [&model] {
    const auto e = ferry::load_model_engine_on_host("lookup:" + model, on_host());
    const ferry::shape_binding one[] = {{"ids", {1, 4}}};
    (void)e->resolve(one);
    std::vector<std::int64_t> ids = {1, 2, 99, 3};
    std::vector<float> out(8);
    const std::span<const std::byte> in[] = {std::as_bytes(std::span(ids))};
    const std::span<std::byte> outs[] = {std::as_writable_bytes(std::span(out))};
    try {
      e->run_on_host(in, outs);
    } catch (const ferry::device_fault& fault) {
      const std::string text = fault.what();
      std::exit(ferry::device_faulted() && text.find("index out of bounds: 0 <= 99 < 10") != std::string::npos ? 0 : 1);
    }
    std::exit(2);
  };
  EXPECT_EXIT(fault_on_host(), ::testing::ExitedWithCode(0), "");
}

}  // namespace
