// The caller's input names from an AOTInductor package's call spec (src/engines/torch/call_spec.hpp),
// on TreeSpecs as torch.utils._pytree.treespec_dumps writes them.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engines/torch/call_spec.hpp"
#include "ferry/core/error.hpp"

namespace {

using ferry::aoti::caller_input_names;

constexpr const char* leaf = R"({"type": null, "context": null, "children_spec": []})";

std::string node(const std::string& type, const std::string& context, const std::vector<std::string>& children) {
  std::string list;
  for (const auto& c : children) list += (list.empty() ? "" : ", ") + c;
  return R"({"type": ")" + type + R"(", "context": )" + context + R"(, "children_spec": [)" + list + "]}";
}

// model(input_ids=..., attention_mask=...), as a transformers model is exported.
TEST(CallSpec, KeywordArgumentsGiveTheirNames) {
  const std::string kwargs = node("builtins.dict", R"("[\"input_ids\", \"attention_mask\"]")", {leaf, leaf});
  const std::string spec =
      "[1, " + node("builtins.tuple", "\"null\"", {node("builtins.tuple", "\"null\"", {}), kwargs}) + "]";
  EXPECT_EQ(caller_input_names(spec), (std::vector<std::string>{"input_ids", "attention_mask"}));
}

TEST(CallSpec, PositionalArgumentsHaveNoNameAndNestedOnesAPath) {
  const std::string args = node("builtins.tuple", "\"null\"", {leaf});
  const std::string pair = node("builtins.tuple", "\"null\"", {leaf, leaf});
  const std::string kwargs = node("builtins.dict", R"("[\"pair\"]")", {pair});
  const std::string spec = "[1, " + node("builtins.tuple", "\"null\"", {args, kwargs}) + "]";
  EXPECT_EQ(caller_input_names(spec), (std::vector<std::string>{"", "pair.0", "pair.1"}));
}

TEST(CallSpec, NamesApplyOnlyWhenEveryInputHasOneOfItsOwn) {
  ferry::aoti::compiled_io io;
  io.inputs = {{.name = "arg73_1"}, {.name = "arg74_1"}};
  const std::vector<std::string> positional{"", "mask"};
  EXPECT_FALSE(ferry::aoti::apply_caller_names(io, positional));
  EXPECT_EQ(io.inputs[0].name, "arg73_1");
  const std::vector<std::string> named{"input_ids", "attention_mask"};
  EXPECT_TRUE(ferry::aoti::apply_caller_names(io, named));
  EXPECT_EQ(io.inputs[1].name, "attention_mask");
  const std::vector<std::string> one{"input_ids"};
  EXPECT_FALSE(ferry::aoti::apply_caller_names(io, one));  // another count: not this package's spec
}

TEST(CallSpec, TextThatIsNoSpecIsRefused) {
  EXPECT_THROW((void)caller_input_names("not json"), ferry::invalid_argument);
  EXPECT_THROW((void)caller_input_names(R"([1, {"type": "builtins.tuple"}])"), ferry::invalid_argument);
}

}  // namespace
