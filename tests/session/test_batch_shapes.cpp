// The batch sizes a session runs at, resolved and checked without a GPU (session/batch_shapes.hpp).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ferry/core/error.hpp"
#include "session/batch_shapes.hpp"
#include "support/own_graph_engine.hpp"

namespace {

using ferry::detail::resolve_batch_shapes;

// An engine whose output does not lead with the batch (a pooled [256] whatever the batch).
class pooled_engine final : public ferry::engine {
 public:
  [[nodiscard]] std::string_view name() const override { return "pooled"; }
  [[nodiscard]] const std::vector<ferry::tensor_spec>& io() const override { return io_; }
  [[nodiscard]] std::vector<ferry::tensor_spec> resolve(std::span<const ferry::shape_binding> inputs) const override {
    auto io = io_;
    if (!inputs.empty()) io[0].shape = inputs[0].dims;
    return io;
  }
  [[nodiscard]] std::unique_ptr<ferry::engine_context> make_context(const std::vector<ferry::tensor_spec>&) override {
    return nullptr;
  }

 private:
  std::vector<ferry::tensor_spec> io_{{.name = "x", .shape = {16, 256}, .role = ferry::tensor_role::input},
                                      {.name = "pooled", .shape = {256}, .role = ferry::tensor_role::output}};
};

std::vector<std::int64_t> rows_of(const std::vector<ferry::detail::batch_shape>& shapes) {
  std::vector<std::int64_t> rows;
  for (const auto& s : shapes) rows.push_back(s.rows);
  return rows;
}

TEST(BatchShapes, EachSizeIsResolvedByTheEngineAndTheFullBatchComesLast) {
  ferry::test::own_graph_engine eng(false);
  const auto full = eng.resolve({});
  const std::int64_t sizes[] = {1, 4, 16};
  const auto shapes = resolve_batch_shapes(eng, full, sizes);
  ASSERT_EQ(rows_of(shapes), (std::vector<std::int64_t>{1, 4, 16}));
  EXPECT_EQ(shapes[1].io[0].shape, (std::vector<std::int64_t>{4, 256}));
  EXPECT_EQ(shapes[1].io[1].shape, (std::vector<std::int64_t>{4, 256}));
  EXPECT_EQ(shapes[1].io[1].bytes() * 4, full[1].bytes());  // the first 4 of 16 rows
  EXPECT_EQ(shapes[2].io[0].shape, full[0].shape);
}

TEST(BatchShapes, WithoutSizesOnlyTheFullBatchRuns) {
  ferry::test::own_graph_engine eng(false);
  const auto shapes = resolve_batch_shapes(eng, eng.resolve({}), {});
  EXPECT_EQ(rows_of(shapes), (std::vector<std::int64_t>{16}));
  const std::int64_t only_full[] = {16};
  EXPECT_EQ(rows_of(resolve_batch_shapes(eng, eng.resolve({}), only_full)), (std::vector<std::int64_t>{16}));
}

TEST(BatchShapes, SizesOutOfOrderOrOutsideTheBatchAreRefusedNamingThem) {
  ferry::test::own_graph_engine eng(false);
  const auto full = eng.resolve({});
  const auto message = [&](std::vector<std::int64_t> sizes) {
    try {
      (void)resolve_batch_shapes(eng, full, sizes);
    } catch (const ferry::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message({4, 2}).find("ascending"), std::string::npos);
  EXPECT_NE(message({2, 2}).find("ascending"), std::string::npos);
  EXPECT_NE(message({0}).find("outside 1..16"), std::string::npos);
  EXPECT_NE(message({17}).find("outside 1..16"), std::string::npos);
}

TEST(BatchShapes, ATensorThatDoesNotLeadWithTheBatchIsNamed) {
  pooled_engine eng;
  const std::int64_t sizes[] = {4};
  try {
    (void)resolve_batch_shapes(eng, eng.io(), sizes);
    FAIL() << "accepted an output that does not lead with the batch";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'pooled'"), std::string::npos) << e.what();
  }
}

TEST(BatchShapes, ASizeTheEngineRefusesSaysWhichSize) {
  ferry::test::own_graph_engine eng(false);
  auto full = eng.resolve({});
  full[0].shape[0] = full[1].shape[0] = 32;  // beyond the engine's 16
  const std::int64_t sizes[] = {20};
  try {
    (void)resolve_batch_shapes(eng, full, sizes);
    FAIL() << "accepted a size the engine refuses";
  } catch (const ferry::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("batch size 20"), std::string::npos) << e.what();
  }
}

}  // namespace
