// The header name MSL sources include for mpp::tensor_ops; metal_stdlib already declares the
// emulated subset (../../msl/mpp_tensor_ops.h).
#pragma once
#include "../../metal_stdlib.h"
