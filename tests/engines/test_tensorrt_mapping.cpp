// The TensorRT backend's pure logic (trt_mapping), which every build has: dtype codes, shapes,
// I/O roles, resolve()'s checks, alignment, plan-file reading and the classifier that turns
// TensorRT's deserialization log lines into one message. The log lines are TensorRT's wording as
// users have reported it in public issues for 8.x and 10.x, except two marked "constructed".
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "engines/tensorrt/trt_mapping.hpp"
#include "ferry/core/error.hpp"

namespace {

using namespace ferry;
using namespace ferry::trt;

constexpr std::string_view engine_name = "trt:model.plan";

// Runs `f`, which must throw E, and returns the message.
template <typename E, typename F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

// ---- dtypes ----------------------------------------------------------------------------------

TEST(TrtMapping, DtypeTableListsEveryTensorRt10CodeOnce) {
  std::set<std::int32_t> codes;
  for (const auto& entry : trt_dtypes) EXPECT_TRUE(codes.insert(entry.code).second) << entry.trt_name;
  EXPECT_EQ(codes.size(), 12U);
  EXPECT_EQ(*codes.begin(), 0);
  EXPECT_EQ(*codes.rbegin(), 11);
}

TEST(TrtMapping, SupportedDtypesMapToFerry) {
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 0), dtype::f32);      // kFLOAT
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 1), dtype::f16);      // kHALF
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 2), dtype::i8);       // kINT8
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 3), dtype::i32);      // kINT32
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 4), dtype::boolean);  // kBOOL
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 5), dtype::u8);       // kUINT8
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 7), dtype::bf16);     // kBF16
  EXPECT_EQ(to_ferry_dtype(engine_name, "x", 8), dtype::i64);      // kINT64
}

TEST(TrtMapping, EveryDtypeCodeMapsOrIsRefusedNamingTheTensor) {
  for (const auto& entry : trt_dtypes) {
    if (entry.ferry) {
      EXPECT_EQ(to_ferry_dtype(engine_name, "t", entry.code), *entry.ferry) << entry.trt_name;
      EXPECT_GT(size_of(*entry.ferry), 0U);
      continue;
    }
    const std::string msg = message_of<unsupported>([&] { (void)to_ferry_dtype(engine_name, "logits", entry.code); });
    EXPECT_TRUE(contains(msg, "'logits'")) << msg;
    EXPECT_TRUE(contains(msg, entry.trt_name)) << msg;
    EXPECT_TRUE(contains(msg, engine_name)) << msg;
  }
}

TEST(TrtMapping, Fp8Int4Fp4AndE8m0AreTheRefusedOnes) {
  std::vector<std::string_view> refused;
  for (const auto& entry : trt_dtypes)
    if (!entry.ferry) refused.push_back(entry.trt_name);
  EXPECT_EQ(refused, (std::vector<std::string_view>{"kFP8", "kINT4", "kFP4", "kE8M0"}));
}

TEST(TrtMapping, UnknownDtypeCodeIsRefusedWithItsNumber) {
  const std::string msg = message_of<unsupported>([] { (void)to_ferry_dtype(engine_name, "future", 42); });
  EXPECT_TRUE(contains(msg, "DataType(42)")) << msg;
  EXPECT_TRUE(contains(msg, "'future'")) << msg;
  EXPECT_THROW((void)to_ferry_dtype(engine_name, "neg", -1), unsupported);
}

// ---- shapes ----------------------------------------------------------------------------------

TEST(TrtMapping, ShapeTranslationMarksDynamicDims) {
  const std::int64_t d[trt_max_dims] = {-1, 3, 224, 224, 0, 0, 0, 0};
  EXPECT_EQ(to_ferry_shape("images", 4, d), (std::vector<std::int64_t>{dynamic_dim, 3, 224, 224}));
  EXPECT_TRUE(to_ferry_shape("scalar", 0, d).empty());
  EXPECT_EQ(volume(std::vector<std::int64_t>{}), 1);
  EXPECT_EQ(volume(std::vector<std::int64_t>{2, 3, 4}), 24);
}

TEST(TrtMapping, ShapeTranslationRefusesWhatTensorRtCannotMean) {
  const std::int64_t d[trt_max_dims] = {2, -7, 0, 0, 0, 0, 0, 0};
  EXPECT_TRUE(contains(message_of<error>([&] { (void)to_ferry_shape("ghost", -1, d); }), "'ghost'"));
  EXPECT_TRUE(contains(message_of<error>([&] { (void)to_ferry_shape("wide", 9, d); }), "'wide'"));
  EXPECT_TRUE(contains(message_of<error>([&] { (void)to_ferry_shape("odd", 2, d); }), "-7"));
}

// ---- roles and layouts -----------------------------------------------------------------------

TEST(TrtMapping, IoModeAndLocationGiveTheRole) {
  EXPECT_EQ(classify_io("a", 1, 0), io_kind::device_input);
  EXPECT_EQ(classify_io("b", 2, 0), io_kind::device_output);
  EXPECT_EQ(classify_io("c", 1, 1), io_kind::host_shape_input);
  EXPECT_EQ(classify_io("d", 2, 1), io_kind::host_shape_output);
  EXPECT_TRUE(contains(message_of<error>([] { (void)classify_io("none", 0, 0); }), "'none'"));
  EXPECT_TRUE(contains(message_of<error>([] { (void)classify_io("where", 1, 5); }), "'where'"));
}

TEST(TrtMapping, OnlyLinearLayoutsAreAccepted) {
  EXPECT_NO_THROW(require_linear_format(engine_name, "x", trt_format_linear));
  const std::string msg = message_of<unsupported>([] { require_linear_format(engine_name, "conv_in", 9); });
  EXPECT_TRUE(contains(msg, "'conv_in'")) << msg;
}

TEST(TrtMapping, ShapeTensorDeclarationsAreIntegerVectorsOfFixedLength) {
  const auto decl = make_shape_tensor_decl(engine_name, "target", dtype::i64, {3});
  EXPECT_EQ(decl.name, "target");
  EXPECT_NO_THROW((void)make_shape_tensor_decl(engine_name, "scalar", dtype::i32, {}));
  EXPECT_TRUE(contains(message_of<unsupported>([] { (void)make_shape_tensor_decl(engine_name, "f", dtype::f32, {2}); }),
                       "'f'"));
  EXPECT_TRUE(contains(message_of<unsupported>([] {
                         (void)make_shape_tensor_decl(engine_name, "m", dtype::i32, {2, 2});
                       }),
                       "'m'"));
  EXPECT_TRUE(contains(
      message_of<unsupported>([] { (void)make_shape_tensor_decl(engine_name, "n", dtype::i32, {dynamic_dim}); }),
      "'n'"));
}

// ---- resolve()'s checks ----------------------------------------------------------------------

input_decl images_input() {
  tensor_spec spec;
  spec.name = "images";
  spec.type = dtype::f16;
  spec.shape = {dynamic_dim, 3, 224, 224};
  return {spec, {1, 3, 224, 224}, {32, 3, 224, 224}};
}

input_decl static_mask() {
  tensor_spec spec;
  spec.name = "mask";
  spec.type = dtype::boolean;
  spec.shape = {1, 8};
  return {spec, {}, {}};
}

struct TrtResolveChecks : ::testing::Test {
  std::vector<input_decl> inputs{images_input(), static_mask()};
  std::vector<shape_tensor_decl> shapes{{"reshape_to", dtype::i32, {2}}};

  input_request check(std::vector<shape_binding> bindings) const {
    return check_input_request(engine_name, inputs, shapes, bindings);
  }
  std::string refusal(std::vector<shape_binding> bindings) const {
    return message_of<invalid_argument>([&] { (void)check(bindings); });
  }
};

TEST_F(TrtResolveChecks, InRangeShapesPassAndStaticInputsFillIn) {
  const auto request = check({{"images", {16, 3, 224, 224}}, {"reshape_to", {16, 150528}}});
  ASSERT_EQ(request.device_shapes.size(), 2U);
  EXPECT_EQ(request.device_shapes[0].dims, (std::vector<std::int64_t>{16, 3, 224, 224}));
  EXPECT_EQ(request.device_shapes[1].name, "mask");
  EXPECT_EQ(request.device_shapes[1].dims, (std::vector<std::int64_t>{1, 8}));
  ASSERT_EQ(request.shape_values.size(), 1U);
  EXPECT_EQ(request.shape_values[0].dims, (std::vector<std::int64_t>{16, 150528}));
  // The profile's bounds themselves are inside.
  EXPECT_NO_THROW((void)check({{"images", {1, 3, 224, 224}}, {"reshape_to", {1, 1}}}));
  EXPECT_NO_THROW((void)check({{"images", {32, 3, 224, 224}}, {"reshape_to", {1, 1}}}));
}

TEST_F(TrtResolveChecks, UnknownNameIsRefusedListingTheValidOnes) {
  const std::string msg = refusal({{"image", {1, 3, 224, 224}}});
  EXPECT_TRUE(contains(msg, "'image'")) << msg;
  EXPECT_TRUE(contains(msg, "'images'")) << msg;
  EXPECT_TRUE(contains(msg, "'reshape_to'")) << msg;
  EXPECT_TRUE(contains(msg, engine_name)) << msg;
}

TEST_F(TrtResolveChecks, DuplicateWrongRankAndStaticMismatchNameTheTensor) {
  EXPECT_TRUE(
      contains(refusal({{"images", {1, 3, 224, 224}}, {"images", {2, 3, 224, 224}}}), "'images' is given twice"));
  const std::string rank = refusal({{"images", {1, 3, 224}}, {"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(rank, "'images' has rank 4")) << rank;
  const std::string fixed = refusal({{"images", {1, 4, 224, 224}}, {"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(fixed, "'images' must have shape [?, 3, 224, 224]")) << fixed;
  const std::string mask = refusal({{"images", {1, 3, 224, 224}}, {"mask", {1, 9}}, {"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(mask, "'mask'")) << mask;
  const std::string zero = refusal({{"images", {0, 3, 224, 224}}, {"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(zero, "'images' needs positive extents")) << zero;
}

TEST_F(TrtResolveChecks, DimsOutsideProfileZeroAreRefusedWithTheRange) {
  const std::string msg = refusal({{"images", {64, 3, 224, 224}}, {"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(msg, "'images' dim 0 is 64")) << msg;
  EXPECT_TRUE(contains(msg, "[1, 32]")) << msg;
  EXPECT_TRUE(contains(msg, "optimization profile 0")) << msg;
}

TEST_F(TrtResolveChecks, DynamicInputWithoutShapeIsRefused) {
  const std::string msg = refusal({{"reshape_to", {1, 1}}});
  EXPECT_TRUE(contains(msg, "'images' has dynamic dims [?, 3, 224, 224]")) << msg;
}

TEST_F(TrtResolveChecks, HostShapeTensorValuesMustBeGivenInTheRightCountAndWidth) {
  const std::string missing = refusal({{"images", {1, 3, 224, 224}}});
  EXPECT_TRUE(contains(missing, "host shape tensor 'reshape_to' needs its 2 value(s)")) << missing;
  const std::string count = refusal({{"images", {1, 3, 224, 224}}, {"reshape_to", {1, 2, 3}}});
  EXPECT_TRUE(contains(count, "'reshape_to'")) << count;
  EXPECT_TRUE(contains(count, "takes 2 value(s), got 3")) << count;
  const std::string wide = refusal({{"images", {1, 3, 224, 224}}, {"reshape_to", {1, 5'000'000'000}}});
  EXPECT_TRUE(contains(wide, "'reshape_to' is INT32")) << wide;
}

TEST(TrtMapping, DataDependentOutputShapesAreUnsupported) {
  EXPECT_NO_THROW(require_static_output(engine_name, "boxes", std::vector<std::int64_t>{16, 4}));
  const std::string msg = message_of<unsupported>([] {
    require_static_output(engine_name, "boxes", std::vector<std::int64_t>{dynamic_dim, 4});
  });
  EXPECT_TRUE(contains(msg, "'boxes'")) << msg;
}

// ---- plan files ------------------------------------------------------------------------------

struct TrtPlanFile : ::testing::Test {
  std::filesystem::path dir;
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() / ("ferry_trt_test_" + std::to_string(::getpid()) + "_" +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string write(const std::string& name, const std::string& bytes) const {
    const auto path = dir / name;
    std::ofstream(path, std::ios::binary) << bytes;
    return path.string();
  }
};

TEST_F(TrtPlanFile, ReadsTheWholeFile) {
  const std::string content("ftrt\0\1\2plan", 11);
  EXPECT_EQ(read_plan_file(write("ok.plan", content)), std::vector<char>(content.begin(), content.end()));
}

TEST_F(TrtPlanFile, MissingEmptyAndDirectoryEachSayWhatIsWrongNamingTheFile) {
  const std::string missing = (dir / "nope.plan").string();
  const std::string m = message_of<invalid_argument>([&] { (void)read_plan_file(missing); });
  EXPECT_TRUE(contains(m, "'" + missing + "' does not exist")) << m;
  const std::string empty = write("empty.plan", "");
  const std::string e = message_of<invalid_argument>([&] { (void)read_plan_file(empty); });
  EXPECT_TRUE(contains(e, "'" + empty + "' is empty")) << e;
  const std::string d = message_of<invalid_argument>([&] { (void)read_plan_file(dir.string()); });
  EXPECT_TRUE(contains(d, "is not a regular file")) << d;
}

TEST_F(TrtPlanFile, UnreadableFileSaysWhy) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const std::string path = write("locked.plan", "x");
  std::filesystem::permissions(path, std::filesystem::perms::none);
  const std::string msg = message_of<invalid_argument>([&] { (void)read_plan_file(path); });
  EXPECT_TRUE(contains(msg, "'" + path + "' cannot be opened")) << msg;
}

// ---- deserialization failures ----------------------------------------------------------------

const plan_load_context h200{"10.16.1", "device 0 (NVIDIA H200, compute 9.0)"};

TEST(TrtPlanErrors, IncompatibleDeviceIsArchitecture) {
  // TensorRT 10.8 and 8.x/10.x with numeric prefixes, each followed by the generic line.
  const std::vector<std::vector<std::string>> cases = {
      {"IRuntime::deserializeCudaEngine: Error Code 6: API Usage Error (The engine plan file is generated on an "
       "incompatible device, expecting compute 8.9 got compute 9.0, please rebuild.)"},
      {"6: The engine plan file is generated on an incompatible device, expecting compute 8.0 got compute 9.0, "
       "please rebuild.",
       "2: [engine.cpp::deserializeEngine::1312] Error Code 2: Internal Error (Assertion engine->deserialize(start, "
       "size, allocator, runtime) failed. )"},
  };
  for (const auto& errors : cases) {
    EXPECT_EQ(classify_plan_errors(errors), plan_problem::wrong_architecture) << errors.front();
    const std::string msg = describe_plan_failure("/models/a.plan", errors, h200);
    EXPECT_TRUE(contains(msg, "plan file '/models/a.plan'")) << msg;
    EXPECT_TRUE(contains(msg, "another GPU architecture")) << msg;
    EXPECT_TRUE(contains(msg, "compute 9.0)")) << msg;
    EXPECT_TRUE(contains(msg, "expecting compute")) << msg;  // TensorRT's own line, not the generic one
  }
}

TEST(TrtPlanErrors, VersionTagAndLibraryVersionAreVersionMismatch) {
  const std::vector<std::vector<std::string>> cases = {
      {"IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion stdVersionRead == "
       "kSERIALIZATION_VERSION failed.Version tag does not match. Note: Current Version: 237, Serialized Engine "
       "Version: 239)"},
      {"1: [stdArchiveReader.cpp::StdArchiveReader::40] Error Code 1: Serialization (Serialization assertion "
       "stdVersionRead == serializationVersion failed.Version tag does not match. Note: Current Version: 213, "
       "Serialized Engine Version: 232)",
       "4: [runtime.cpp::deserializeCudaEngine::50] Error Code 4: Internal Error (Engine deserialization failed.)"},
      {"6: The engine plan file is not compatible with this version of TensorRT, expecting library version 8.5.1.7 "
       "got 8.5.3.1, please rebuild.",
       "4: [runtime.cpp::nvinfer1::Runtime::deserializeCudaEngine::66] Error Code 4: Internal Error (Engine "
       "deserialization failed.)"},
  };
  for (const auto& errors : cases) {
    EXPECT_EQ(classify_plan_errors(errors), plan_problem::version_mismatch) << errors.front();
    const std::string msg = describe_plan_failure("b.plan", errors, h200);
    EXPECT_TRUE(contains(msg, "plan file 'b.plan'")) << msg;
    EXPECT_TRUE(contains(msg, "another TensorRT version")) << msg;
    EXPECT_TRUE(contains(msg, "(10.16.1)")) << msg;
    EXPECT_TRUE(contains(msg, errors.front())) << msg;
  }
}

TEST(TrtPlanErrors, MagicTagAndOtherSerializationAssertionsAreCorrupt) {
  const std::vector<std::vector<std::string>> cases = {
      {"1: [stdArchiveReader.cpp::StdArchiveReader::32] Error Code 1: Serialization (Serialization assertion "
       "magicTagRead == kMAGIC_TAG failed.Magic tag does not match)",
       "4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal Error (Engine deserialization failed.)"},
      {"1: [runtime.cpp::parsePlan::314] Error Code 1: Serialization (Serialization assertion "
       "plan->header.magicTag == rt::kPLAN_MAGIC_TAG failed.)"},
      // constructed: some other serialization assertion, in TensorRT 10's format
      {"IRuntime::deserializeCudaEngine: Error Code 1: Serialization (Serialization assertion sizeRead == size "
       "failed.)"},
  };
  for (const auto& errors : cases) {
    EXPECT_EQ(classify_plan_errors(errors), plan_problem::corrupt) << errors.front();
    const std::string msg = describe_plan_failure("model.onnx", errors, h200);
    EXPECT_TRUE(contains(msg, "plan file 'model.onnx' is not a valid TensorRT plan")) << msg;
  }
}

TEST(TrtPlanErrors, AnythingElseKeepsTensorRtsWords) {
  // constructed: an allocation failure while deserializing
  const std::vector<std::string> oom = {
      "1: [defaultAllocator.cpp::allocate::31] Error Code 1: Cuda Runtime (out of memory)",
      "4: [runtime.cpp::deserializeCudaEngine::65] Error Code 4: Internal Error (Engine deserialization failed.)"};
  EXPECT_EQ(classify_plan_errors(oom), plan_problem::other);
  const std::string msg = describe_plan_failure("c.plan", oom, h200);
  EXPECT_TRUE(contains(msg, "could not deserialize plan file 'c.plan'")) << msg;
  EXPECT_TRUE(contains(msg, "out of memory")) << msg;

  EXPECT_EQ(classify_plan_errors({}), plan_problem::other);
  EXPECT_TRUE(contains(describe_plan_failure("d.plan", {}, h200), "TensorRT logged no error"));
}

TEST(TrtPlanErrors, MostSpecificLineWinsWhateverTheOrder) {
  const std::vector<std::string> lines = {
      "Serialization assertion magicTagRead == kMAGIC_TAG failed.Magic tag does not match",
      "The engine plan file is not compatible with this version of TensorRT, expecting library version 10.3.0 got "
      "10.16.1, please rebuild.",
      "The engine plan file is generated on an incompatible device, expecting compute 8.6 got compute 9.0, please "
      "rebuild."};
  EXPECT_EQ(classify_plan_errors(lines), plan_problem::wrong_architecture);
  EXPECT_EQ(classify_plan_errors(std::vector<std::string>(lines.begin(), lines.begin() + 2)),
            plan_problem::version_mismatch);
}

TEST(TrtPlanErrors, LibraryVersionIsFormatted) {
  EXPECT_EQ(format_trt_version(101601), "10.16.1");
  EXPECT_EQ(format_trt_version(100000), "10.0.0");
  EXPECT_EQ(format_trt_version(110100), "11.1.0");
}

// ---- logging ---------------------------------------------------------------------------------

TEST(TrtLogging, ErrorsAreKeptWarningsPrintedInfoDroppedUnlessVerbose) {
  const auto quiet = trt_verbosity::quiet;
  const auto verbose = trt_verbosity::verbose;
  EXPECT_EQ(route_log(0, quiet), log_route::keep_error);  // kINTERNAL_ERROR
  EXPECT_EQ(route_log(1, quiet), log_route::keep_error);  // kERROR
  EXPECT_EQ(route_log(2, quiet), log_route::print);       // kWARNING
  EXPECT_EQ(route_log(3, quiet), log_route::drop);        // kINFO
  EXPECT_EQ(route_log(4, quiet), log_route::drop);        // kVERBOSE
  EXPECT_EQ(route_log(1, verbose), log_route::keep_and_print_error);
  EXPECT_EQ(route_log(3, verbose), log_route::print);
  EXPECT_EQ(route_log(4, verbose), log_route::print);
  EXPECT_EQ(route_log(9, quiet), log_route::print);
  EXPECT_EQ(log_line("Using an engine plan file across different models of devices is not recommended"),
            "ferry: TensorRT: Using an engine plan file across different models of devices is not recommended");
}

TEST(TrtLogging, VerboseEnvironmentVariable) {
  EXPECT_EQ(verbosity_from_env(nullptr), trt_verbosity::quiet);
  EXPECT_EQ(verbosity_from_env(""), trt_verbosity::quiet);
  EXPECT_EQ(verbosity_from_env("0"), trt_verbosity::quiet);
  EXPECT_EQ(verbosity_from_env("1"), trt_verbosity::verbose);
  EXPECT_EQ(verbosity_from_env("yes"), trt_verbosity::verbose);
}

TEST(TrtLogging, ErrorHistoryKeepsTheNewestAndIsBounded) {
  error_history history;
  EXPECT_EQ(history.last_or("none"), "none");
  for (std::size_t i = 0; i < error_history::capacity + 5; ++i) history.add("e" + std::to_string(i));
  EXPECT_EQ(history.messages().size(), error_history::capacity);
  EXPECT_EQ(history.messages().front(), "e5");
  EXPECT_EQ(history.last_or("none"), "e" + std::to_string(error_history::capacity + 4));
  history.clear();
  EXPECT_TRUE(history.empty());
}

}  // namespace
