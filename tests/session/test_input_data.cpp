// What ferry writes into inputs it makes itself (ferry/session/input_data.hpp): never garbage in an
// integer input, random values only where a bound says which, a user's file read and checked
// against the engine's shapes, dtypes and bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#ifdef FERRY_HAVE_LIBZIP
#include <zip.h>
#endif

#include "ferry/core/error.hpp"
#include "ferry/session/input_data.hpp"

namespace {

using ferry::dtype;
using ferry::input_data;
using ferry::input_fill;
using ferry::tensor_role;
using ferry::tensor_spec;

tensor_spec input(std::string name, dtype type, std::vector<std::int64_t> shape,
                  std::optional<std::int64_t> bound = std::nullopt) {
  return {.name = std::move(name),
          .type = type,
          .shape = std::move(shape),
          .role = tensor_role::input,
          .index_bound = bound};
}

template <class T>
std::vector<T> filled(const input_data& data, const tensor_spec& spec, std::uint64_t request) {
  std::vector<T> values(spec.elements());
  data.fill(std::as_writable_bytes(std::span(values)), 0, spec, request);
  return values;
}

// A scratch folder per test, removed afterwards.
class InputDataFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::temp_directory_path() /
              ("ferry_input_data_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(folder_);
  }
  void TearDown() override { std::filesystem::remove_all(folder_); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    const auto path = folder_ / name;
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path folder_;
};

std::string message_of(const std::function<void()>& body) {
  try {
    body();
  } catch (const ferry::invalid_argument& e) {
    return e.what();
  }
  return "(no invalid_argument thrown)";
}

TEST(InputData, AutomaticNeverPutsGarbageInIntegers) {
  const input_data automatic;
  const auto ids = input("input_ids", dtype::i64, {16, 128});
  const auto mask = input("attention_mask", dtype::i32, {16, 128});
  const auto flags = input("flags", dtype::boolean, {64});
  EXPECT_EQ(automatic.fill_for(ids), input_fill::zeros);
  EXPECT_EQ(automatic.fill_for(flags), input_fill::zeros);
  for (const auto v : filled<std::int64_t>(automatic, ids, 7)) ASSERT_EQ(v, 0);
  for (const auto v : filled<std::int32_t>(automatic, mask, 7)) ASSERT_EQ(v, 0);
  for (const auto v : filled<std::uint8_t>(automatic, flags, 7)) ASSERT_EQ(v, 0);
  EXPECT_EQ(automatic.describe(ids), "input_ids: zeros (INT64 with no index_bound)");
  EXPECT_EQ(automatic.describe(flags), "flags: false");
}

TEST(InputData, IndicesStayInsideTheirBoundAndChangePerRequest) {
  for (const input_data& data : {input_data{}, input_data::random()}) {
    const auto ids = input("input_ids", dtype::i64, {16, 128}, 30522);
    EXPECT_EQ(data.fill_for(ids), input_fill::random_indices);
    const auto first = filled<std::int64_t>(data, ids, 1);
    const auto second = filled<std::int64_t>(data, ids, 2);
    EXPECT_NE(first, second);
    std::set<std::int64_t> distinct;
    for (const auto v : first) {
      ASSERT_GE(v, 0);
      ASSERT_LT(v, 30522);
      distinct.insert(v);
    }
    EXPECT_GT(distinct.size(), 1000U);  // spread over the table, not one id
    const auto small = input("rows", dtype::i32, {4096}, 3);
    for (const auto v : filled<std::int32_t>(data, small, 9)) ASSERT_TRUE(v >= 0 && v < 3);
    EXPECT_EQ(data.describe(ids), "input_ids: random in [0, 30522)");
  }
}

TEST(InputData, FloatsAreFiniteAndModerate) {
  const auto x = input("x", dtype::f32, {1000});
  const auto values = filled<float>(input_data::random(), x, 3);
  for (const float v : values) ASSERT_TRUE(std::isfinite(v) && v >= -0.5F && v < 0.5F);
  EXPECT_NE(values, filled<float>(input_data::random(), x, 4));
}

TEST(InputData, RandomRefusesAnIntegerWithNoBoundSayingHowToGiveOne) {
  const auto ids = input("input_ids", dtype::i64, {2, 8});
  const std::string text = message_of([&] { (void)input_data::random().fill_for(ids); });
  EXPECT_NE(text.find("input 'input_ids' is INT64 with no index_bound"), std::string::npos) << text;
  EXPECT_NE(text.find("\"index_bound\""), std::string::npos) << text;
  EXPECT_NE(text.find("--input-data zero"), std::string::npos) << text;
  const tensor_spec io[] = {ids};
  EXPECT_THROW((void)input_data::random().bound_to(io), ferry::invalid_argument);
  // Bytes take any value (pixels), booleans random.
  EXPECT_EQ(input_data::random().fill_for(input("image", dtype::u8, {8})), input_fill::random_bytes);
  EXPECT_EQ(input_data::random().fill_for(input("mask", dtype::boolean, {8})), input_fill::random_booleans);
}

TEST(InputData, ZeroIsZeroForEveryDtype) {
  for (const dtype t :
       {dtype::f32, dtype::f16, dtype::bf16, dtype::i8, dtype::u8, dtype::i32, dtype::i64, dtype::boolean}) {
    const auto spec = input("t", t, {37}, t == dtype::i64 ? std::optional<std::int64_t>(5) : std::nullopt);
    std::vector<std::byte> bytes(spec.bytes(), std::byte{0x7F});
    input_data::zeros().fill(bytes, 0, spec, 11);
    for (const auto b : bytes) ASSERT_EQ(b, std::byte{0});
  }
}

TEST(InputData, PiecesGiveTheSameBytesAsOneFill) {
  for (const auto& spec : {input("a", dtype::f32, {1001}), input("b", dtype::f16, {1001}),
                           input("c", dtype::i64, {1001}, 77), input("d", dtype::u8, {1001})}) {
    std::vector<std::byte> whole(spec.bytes()), pieces(spec.bytes());
    input_data{}.fill(whole, 0, spec, 5);
    for (std::size_t offset = 0; offset < pieces.size(); offset += 64)
      input_data{}.fill(std::span(pieces).subspan(offset, std::min<std::size_t>(64, pieces.size() - offset)), offset,
                        spec, 5);
    EXPECT_EQ(whole, pieces) << spec.name;
  }
}

TEST(InputData, ParseNamesTheKinds) {
  EXPECT_EQ(input_data::parse("auto").source(), ferry::input_source::automatic);
  EXPECT_EQ(input_data::parse("zero").source(), ferry::input_source::zero);
  EXPECT_EQ(input_data::parse("random").source(), ferry::input_source::random);
  const std::string text = message_of([] { (void)input_data::parse("/no/such/file.json"); });
  EXPECT_NE(text.find("no such file"), std::string::npos) << text;
  const auto text_file = std::filesystem::temp_directory_path() / "ferry_input_data.txt";
  std::ofstream(text_file) << "1 2 3\n";
  EXPECT_NE(message_of([&] { (void)input_data::parse(text_file.string()); }).find(".json or .npz"), std::string::npos);
  std::filesystem::remove(text_file);
}

TEST_F(InputDataFiles, JsonInPerfAnalyzersFormIsBoundToTheEngine) {
  const auto path = write("in.json", R"({"data": [
      {"ids": [[1, 2, 3], [4, 5, 6]], "scale": {"content": [0.5, 1.5], "shape": [2]}},
      {"ids": [7, 8, 9, 10, 11, 12], "scale": [2.0, 3.0]}]})");
  const auto ids = input("ids", dtype::i64, {2, 3}, 100);
  const auto scale = input("scale", dtype::f16, {2});
  const tensor_spec io[] = {ids, scale};
  const input_data data = input_data::from_file(path).bound_to(io);
  EXPECT_EQ(filled<std::int64_t>(data, ids, 0), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(filled<std::int64_t>(data, ids, 1), (std::vector<std::int64_t>{7, 8, 9, 10, 11, 12}));
  EXPECT_EQ(filled<std::int64_t>(data, ids, 2), (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6}));  // in turn
  EXPECT_NE(data.describe(ids).find("2 samples"), std::string::npos) << data.describe(ids);
}

TEST_F(InputDataFiles, JsonThatCannotFeedTheEngineIsRefusedNamingTheProblem) {
  const auto ids = input("ids", dtype::i64, {2, 3}, 100);
  const tensor_spec io[] = {ids};
  const auto bind = [&](const std::string& text) {
    return message_of([&] { (void)input_data::from_file(write("x.json", text)).bound_to(io); });
  };
  EXPECT_NE(bind(R"({"ids": [[1, 2], [3, 4]]})").find("the file gives shape [2, 2], the engine takes [2, 3]"),
            std::string::npos);
  EXPECT_NE(bind(R"({"ids": [1, 2, 3]})").find("holds 3 values"), std::string::npos);
  EXPECT_NE(bind(R"({"other": [1, 2, 3, 4, 5, 6]})").find("has no values for input 'ids'"), std::string::npos);
  EXPECT_NE(bind(R"({"ids": [1, 2, 3, 4, 5, 6], "extra": [1]})").find("which the engine does not have"),
            std::string::npos);
  EXPECT_NE(bind(R"({"ids": [1, 2, 3, 4, 5, 1.5]})").find("is not an integer"), std::string::npos);
  EXPECT_NE(bind(R"({"ids": [1, 2, 3, 4, 5, 100]})").find("value 100 at [1, 2] is outside [0, 100)"),
            std::string::npos);
  EXPECT_NE(bind(R"({"ids": [[1, 2, 3], [4, 5]]})").find("ragged"), std::string::npos);
  EXPECT_NE(bind("{not json").find("not valid JSON"), std::string::npos);
}

#ifdef FERRY_HAVE_LIBZIP
// An .npz as np.savez writes it: one NAME.npy member per array, stored or deflated.
std::vector<std::byte> npy(const std::string& descr, const std::string& shape, const void* data, std::size_t bytes) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(header.size() & 0xFF);
  out += static_cast<char>(header.size() >> 8);
  out += header;
  std::vector<std::byte> result(reinterpret_cast<const std::byte*>(out.data()),
                                reinterpret_cast<const std::byte*>(out.data()) + out.size());
  result.insert(result.end(), static_cast<const std::byte*>(data), static_cast<const std::byte*>(data) + bytes);
  return result;
}

void write_npz(const std::filesystem::path& path,
               const std::vector<std::pair<std::string, std::vector<std::byte>>>& arrays, bool deflate) {
  int error = 0;
  zip_t* archive = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &error);
  ASSERT_NE(archive, nullptr);
  for (const auto& [name, bytes] : arrays) {
    zip_source_t* source = zip_source_buffer(archive, bytes.data(), bytes.size(), 0);
    const auto index = zip_file_add(archive, (name + ".npy").c_str(), source, ZIP_FL_OVERWRITE);
    ASSERT_GE(index, 0);
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0);
  }
  ASSERT_EQ(zip_close(archive), 0);
}

TEST_F(InputDataFiles, NpzArraysOfOneOrSeveralSamples) {
  const std::int64_t ids[2][2][3] = {{{1, 2, 3}, {4, 5, 6}}, {{7, 8, 9}, {10, 11, 12}}};
  const bool mask[2][3] = {{true, false, true}, {false, true, false}};
  for (const bool deflate : {false, true}) {
    const auto path = folder_ / "in.npz";
    write_npz(path, {{"ids", npy("<i8", "2, 2, 3", ids, sizeof ids)}, {"mask", npy("|b1", "2, 3", mask, sizeof mask)}},
              deflate);
    const auto ids_spec = input("ids", dtype::i64, {2, 3}, 13);
    const auto mask_spec = input("mask", dtype::boolean, {2, 3});
    const tensor_spec io[] = {ids_spec, mask_spec};
    const input_data data = input_data::from_file(path).bound_to(io);
    EXPECT_EQ(filled<std::int64_t>(data, ids_spec, 1), (std::vector<std::int64_t>{7, 8, 9, 10, 11, 12}));
    EXPECT_EQ(filled<std::uint8_t>(data, mask_spec, 1), (std::vector<std::uint8_t>{1, 0, 1, 0, 1, 0}));
  }
}

TEST_F(InputDataFiles, NpzThatCannotFeedTheEngineIsRefused) {
  const float x[4] = {1, 2, 3, 4};
  const auto path = folder_ / "in.npz";
  const auto ids = input("ids", dtype::i64, {2, 2}, 10);
  const tensor_spec io[] = {ids};
  write_npz(path, {{"ids", npy("<f4", "2, 2", x, sizeof x)}}, false);
  std::string text = message_of([&] { (void)input_data::from_file(path).bound_to(io); });
  EXPECT_NE(text.find("the file's array is FP32, the engine takes INT64"), std::string::npos) << text;
  const std::int64_t wide[6] = {};
  write_npz(path, {{"ids", npy("<i8", "3, 2", wide, sizeof wide)}}, false);
  text = message_of([&] { (void)input_data::from_file(path).bound_to(io); });
  EXPECT_NE(text.find("has shape [3, 2]; the engine takes [2, 2]"), std::string::npos) << text;
  write_npz(path, {{"ids", npy(">i8", "2, 2", wide, 32)}}, false);
  text = message_of([&] { (void)input_data::from_file(path); });
  EXPECT_NE(text.find("dtype '>i8' is not one ferry takes"), std::string::npos) << text;
  std::ofstream(folder_ / "broken.npz") << "not a zip archive";
  text = message_of([&] { (void)input_data::from_file(folder_ / "broken.npz"); });
  EXPECT_NE(text.find("not a readable .npz archive"), std::string::npos) << text;
}
#endif

}  // namespace
