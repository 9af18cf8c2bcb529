// The default rendering of mpp_matmul2d: Metal 4's MetalPerformancePrimitives matmul2d over
// tensor_inline views of device memory, with a cooperative destination tensor that the
// epilogue visits element by element (which thread holds which element stays opaque).
//
// Spelled after Apple's public sources: the MetalPerformancePrimitives header
// MPPTensorOpsMatMul2d.h (its usage comment: matmul2d_descriptor(M, N, dynamic_extent),
// matmul2d<desc, execution_simdgroups<4>>, tensor slices per threadgroup, run(a, b, c));
// WWDC25 session 262, "Combine Metal 4 machine learning and graphics" (<metal_tensor>, the
// descriptor's transpose and reduced-precision flags, op.run); and MLX's Metal 4 kernels
// (ml-explore/mlx, get_destination_cooperative_tensor<decltype(a), decltype(b), T>(),
// get_capacity(), is_valid_element(i), store()). Views list extents and strides innermost
// dimension first: a row-major [rows, columns] matrix is dextents(columns, rows) with strides
// {1, row stride}, and slice(column, row) starts a view at (row, column) with the extents
// left, so reads past them are 0 and stores past them are dropped.
#include "metile/codegen/dialect.h"

namespace metile::codegen {

MppMatmul2dText CDialect::mpp_matmul2d(const MppMatmul2dCall& call, Prelude& prelude) const {
  prelude.add_type("metal_tensor",
                   "#include <metal_tensor>\n"
                   "#include <MetalPerformancePrimitives/MetalPerformancePrimitives.h>\n");
  const std::string& p = call.prefix;
  const std::array<std::string, 11>& o = call.operands;
  const std::string operand(scalar_type(call.operand_dtype));
  const std::string output(scalar_type(call.output_dtype));
  const std::string extents = "metal::dextents<int32_t, 2>";
  const auto view = [&](const std::string& name, const std::string& type, const std::string& ptr,
                        const std::string& columns, const std::string& rows,
                        const std::string& stride) {
    return "metal::tensor<device " + type + ", " + extents + ", metal::tensor_inline> " + p + name +
           "(const_cast<device " + type + "*>(" + ptr + "), " + extents + "(" + columns + ", " +
           rows + "), metal::array<int32_t, 2>({1, " + stride + "}));";
  };
  MppMatmul2dText text;
  text.setup = {
      "constexpr auto " + p + "descriptor = mpp::tensor_ops::matmul2d_descriptor(" +
          std::to_string(call.m) + ", " + std::to_string(call.n) +
          ", static_cast<int>(metal::dynamic_extent), false, false, " +
          (call.reduced_precision ? "true" : "false") +
          ", mpp::tensor_ops::matmul2d_descriptor::mode::multiply);",
      "mpp::tensor_ops::matmul2d<" + p + "descriptor, metal::execution_simdgroups<" +
          std::to_string(call.simdgroups) + ">> " + p + "op;",
      view("a", operand, o[0], o[5], o[3], o[6]),
      view("b", operand, o[1], o[4], o[5], o[7]),
      view("c", output, o[2], o[4], o[3], o[8]),
      "auto " + p + "a_tile = " + p + "a.slice(0, " + o[9] + ");",
      "auto " + p + "b_tile = " + p + "b.slice(" + o[10] + ", 0);",
      "auto " + p + "c_tile = " + p + "c.slice(" + o[10] + ", " + o[9] + ");",
      "auto " + p + "acc = " + p + "op.template get_destination_cooperative_tensor<decltype(" + p +
          "a_tile), decltype(" + p + "b_tile), float>();",
      p + "op.run(" + p + "a_tile, " + p + "b_tile, " + p + "acc);",
  };
  // An f32 output takes the epilogue's values in place; another dtype gets its own
  // destination of that element type.
  const bool in_place = call.output_dtype == ir::DType::f32;
  const std::string destination = in_place ? p + "acc" : p + "out";
  if (!in_place)
    text.setup.push_back("auto " + destination + " = " + p +
                         "op.template get_destination_cooperative_tensor<decltype(" + p +
                         "a_tile), decltype(" + p + "b_tile), " + output + ">();");
  text.index = p + "element";
  text.capacity = p + "acc.get_capacity()";
  text.is_valid = p + "acc.is_valid_element(" + text.index + ")";
  text.element = p + "acc[" + text.index + "]";
  text.result = destination + "[" + text.index + "]";
  text.finish = {destination + ".store(" + p + "c_tile);"};
  return text;
}

}  // namespace metile::codegen
