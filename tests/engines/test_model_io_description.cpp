// Model-file I/O descriptions (ferry.io/1) and the .pt2 package checks: every bad model file and
// every bad shape gets one message that names the file or the tensor.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "engines/io_description.hpp"
#include "engines/torch/aoti_package.hpp"
#include "ferry/core/error.hpp"

namespace {

using ferry::invalid_argument;
using ferry::shape_binding;

const char* const resnet = R"({
  "format": "ferry.io/1", "name": "resnet50",
  "exported_with": {"torch": "2.11.0+cu130", "cuda_arch": "sm_90"},
  "symbols": {"batch": {"min": 1, "max": 64}},
  "inputs":  [{"name": "images", "dtype": "float16", "shape": ["batch", 3, 224, 224]}],
  "outputs": [{"name": "logits", "dtype": "float16", "shape": ["batch", 1000]}]})";

const char* const encoder = R"({
  "format": "ferry.io/1", "name": "encoder",
  "symbols": {"batch": {"min": 1, "max": 32}, "seq": {"min": 8, "max": 512}},
  "inputs":  [{"name": "tokens", "dtype": "int64", "shape": ["batch", "seq"], "index_bound": 30522},
              {"name": "mask", "dtype": "bool", "shape": ["batch", "seq"]}],
  "outputs": [{"name": "hidden", "dtype": "float16", "shape": ["batch", "seq", 768]}]})";

std::string message_of(auto&& f) {
  try {
    f();
  } catch (const invalid_argument& e) {
    return e.what();
  }
  return "(no invalid_argument thrown)";
}

TEST(IoDescription, ParsesTensorsSymbolsAndProvenance) {
  const auto d = ferry::parse_io_description(resnet, "resnet.io.json");
  EXPECT_EQ(d.name, "resnet50");
  EXPECT_EQ(d.cuda_arch, "sm_90");
  ASSERT_EQ(d.tensors.size(), 2U);
  EXPECT_EQ(d.tensors[0].name, "images");
  EXPECT_EQ(d.tensors[0].type, ferry::dtype::f16);
  EXPECT_EQ(d.tensors[0].shape, (std::vector<std::int64_t>{ferry::dynamic_dim, 3, 224, 224}));
  EXPECT_EQ(d.tensors[1].role, ferry::tensor_role::output);
  EXPECT_EQ(d.symbols.at("batch").max, 64);
}

TEST(IoDescription, OutputsTakeTheInputsSymbols) {
  const auto d = ferry::parse_io_description(encoder, "enc");
  const std::vector<shape_binding> shapes{{"tokens", {4, 128}}, {"mask", {4, 128}}};
  const auto io = ferry::resolve_io(d, shapes);
  ASSERT_EQ(io.size(), 3U);
  EXPECT_EQ(io[2].shape, (std::vector<std::int64_t>{4, 128, 768}));
  EXPECT_EQ(io[2].bytes(), 4U * 128 * 768 * 2);
  EXPECT_EQ(io[0].type, ferry::dtype::i64);
  EXPECT_EQ(io[0].index_bound, 30522);
  EXPECT_FALSE(io[1].index_bound.has_value());
  EXPECT_EQ(io[1].type, ferry::dtype::boolean);
}

TEST(IoDescription, BadShapesNameTheTensorAndTheDim) {
  const auto d = ferry::parse_io_description(encoder, "enc");
  const std::vector<shape_binding> disagree{{"tokens", {4, 128}}, {"mask", {4, 64}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(d, disagree); }).find("'mask' dim 1 ('seq') is 64"),
            std::string::npos);
  const std::vector<shape_binding> too_long{{"tokens", {4, 1024}}, {"mask", {4, 1024}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(d, too_long); }).find("outside the exported range [8, 512]"),
            std::string::npos);
  const std::vector<shape_binding> rank{{"tokens", {4}}, {"mask", {4, 64}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(d, rank); }).find("input 'tokens' has rank 2"), std::string::npos);
  const std::vector<shape_binding> unknown{{"token", {4, 64}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(d, unknown); }).find("unknown input tensor 'token'"),
            std::string::npos);
  const std::vector<shape_binding> missing{{"tokens", {4, 64}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(d, missing); }).find("input 'mask' has dynamic dims"),
            std::string::npos);
  const auto r = ferry::parse_io_description(resnet, "r");
  const std::vector<shape_binding> fixed{{"images", {2, 3, 256, 224}}};
  EXPECT_NE(message_of([&] { (void)ferry::resolve_io(r, fixed); }).find("'images' dim 2 is fixed at 224, not 256"),
            std::string::npos);
}

TEST(IoDescription, MalformedDescriptionsSayWhere) {
  EXPECT_NE(message_of([] { (void)ferry::parse_io_description("{", "x.io.json"); }).find("x.io.json: not valid JSON"),
            std::string::npos);
  EXPECT_NE(
      message_of([] { (void)ferry::parse_io_description(R"({"format":"other"})", "x"); }).find("not a ferry.io/1"),
      std::string::npos);
  EXPECT_NE(
      message_of([] {
        (void)ferry::parse_io_description(
            R"({"format":"ferry.io/1","inputs":[{"name":"a","dtype":"float16","shape":["n"]}],"outputs":[{"name":"b","dtype":"float16","shape":[1]}]})",
            "x");
      }).find("uses symbol 'n'"),
      std::string::npos);
  EXPECT_NE(message_of([] { (void)ferry::parse_dtype_name("complex64"); }).find("unsupported dtype 'complex64'"),
            std::string::npos);
  EXPECT_EQ(ferry::parse_dtype_name("torch.bfloat16"), ferry::dtype::bf16);
}

// Found by fuzzing (tests/fuzz): the JSON library's own conversion took 2.5 as 2, wrapped
// 2^64-1 to -1, and converted 1e30 with undefined behaviour.
TEST(IoDescription, IntegerFieldsAreTakenOnlyAsWritten) {
  const auto described = [](const std::string& symbols, const std::string& input) {
    return message_of([&] {
      (void)ferry::parse_io_description(R"({"format":"ferry.io/1","symbols":{)" + symbols + R"(},"inputs":[)" + input +
                                            R"(],"outputs":[{"name":"b","dtype":"float16","shape":[1]}]})",
                                        "x.io.json");
    });
  };
  const std::string a = R"({"name":"a","dtype":"int64","shape":)";
  for (const std::string dim : {"1e30", "2.5", "18446744073709551615", "true"})
    EXPECT_NE(
        described("", a + "[" + dim + "]}").find("x.io.json: tensor 'a': dim 0 must be an integer in int64's range"),
        std::string::npos)
        << dim;
  EXPECT_NE(described("", a + R"([1], "index_bound": 1e30})").find("tensor 'a': index_bound must be an integer"),
            std::string::npos);
  EXPECT_NE(described(R"("n": {"min": 1.5, "max": 8})", a + R"(["n"]})").find("symbol 'n': min must be an integer"),
            std::string::npos);
  EXPECT_NE(described(R"("n": {"min": 1, "max": 1e30})", a + R"(["n"]})").find("symbol 'n': max must be an integer"),
            std::string::npos);
  // What is written as an integer still parses.
  EXPECT_EQ(ferry::parse_io_description(encoder, "enc").tensors[0].index_bound, 30522);
}

class PackageFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("ferry-pt2-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path write(const std::string& name, const std::string& bytes) {
    const auto p = dir_ / name;
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::filesystem::path dir_;
};

TEST_F(PackageFiles, EveryBadFileGetsItsOwnMessage) {
  EXPECT_NE(message_of([&] { ferry::aoti::check_package_file(dir_ / "absent.pt2"); }).find("does not exist"),
            std::string::npos);
  EXPECT_NE(message_of([&] { ferry::aoti::check_package_file(dir_); }).find("is not a regular file"),
            std::string::npos);
  EXPECT_NE(message_of([&] { ferry::aoti::check_package_file(write("empty.pt2", "")); }).find("is empty"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              ferry::aoti::check_package_file(write("text.pt2", "not a model at all"));
            }).find("not a .pt2 package (not a zip archive)"),
            std::string::npos);
  EXPECT_NO_THROW(ferry::aoti::check_package_file(write("zip.pt2", std::string("PK\x03\x04rest", 8))));
}

TEST_F(PackageFiles, DescriptionComesFromMetadataElseTheSidecar) {
  const auto package = write("m.pt2", std::string("PK\x03\x04", 4));
  EXPECT_FALSE(ferry::aoti::find_io_description(package, std::nullopt).has_value());
  write("m.pt2.io.json", resnet);
  EXPECT_EQ(ferry::aoti::find_io_description(package, std::nullopt)->name, "resnet50");
  EXPECT_EQ(ferry::aoti::find_io_description(package, std::string(encoder))->name, "encoder");
  write("m.pt2.io.json", "{");
  EXPECT_NE(message_of([&] {
              (void)ferry::aoti::find_io_description(package, std::nullopt);
            }).find("m.pt2.io.json: not valid JSON"),
            std::string::npos);
}

TEST_F(PackageFiles, WithoutADescriptionTheMessageSaysWhatIsMissingAndWhy) {
  const auto message = ferry::aoti::no_description_message(dir_ / "m.pt2", "no generated code in the package");
  for (const char* part : {"has no I/O description", "metadata 'ferry.io'", "m.pt2.io.json",
                           "no generated code in the package", "scripts/export_model.py", "ferry.io/1"})
    EXPECT_NE(message.find(part), std::string::npos) << part << " in: " << message;
}

TEST(PackageCompatibility, WrongArchitectureAndVersionAreNamed) {
  const auto d = ferry::parse_io_description(resnet, "r");
  EXPECT_FALSE(ferry::aoti::incompatibility(d, 9, 0, "2.11.0").has_value());
  const auto arch = ferry::aoti::incompatibility(d, 8, 0, "2.11.0");
  ASSERT_TRUE(arch.has_value());
  EXPECT_NE(arch->find("compiled for sm_90 and this GPU is sm_80"), std::string::npos);
  const auto version = ferry::aoti::incompatibility(d, 9, 0, "2.10.1");
  ASSERT_TRUE(version.has_value());
  EXPECT_NE(version->find("exported with PyTorch 2.11.0+cu130 and ferry runs libtorch 2.10.1"), std::string::npos);
}

}  // namespace
