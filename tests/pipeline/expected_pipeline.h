// The steps compile_to_source runs for an MSL target, in its order: one list for every test
// that checks the order, so a new pipeline step changes one line here.
#pragma once

#include <string>
#include <vector>

namespace metile {

inline const std::vector<std::string> kPipelineSteps = {"verify",
                                                        "apply_math_mode",
                                                        "canonicalize",
                                                        "rebase_carried_pointers",
                                                        "form_descriptor_matmul",
                                                        "match_async_gemm",
                                                        "expand_tensor_access",
                                                        "cse",
                                                        "merge_online_reductions",
                                                        "dce",
                                                        "derive_induction_values",
                                                        "prefetch_dot_operands",
                                                        "peel_complete_iterations",
                                                        "eliminate_redundant_conversions",
                                                        "check_ownership",
                                                        "check_matrix_barriers",
                                                        "check_device_tiles",
                                                        "plan_threads",
                                                        "plan_schedule",
                                                        "check_resources",
                                                        "lower_to_metal",
                                                        "verify_scratch",
                                                        "verify_software_pipeline",
                                                        "verify_async_pipeline",
                                                        "canonicalize",
                                                        "cse",
                                                        "group_vector_accesses",
                                                        "cse",
                                                        "dce",
                                                        "verify_vector_accesses",
                                                        "emit_msl"};

}  // namespace metile
