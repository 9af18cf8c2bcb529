// The half / bfloat conversions live in metile/support so that the runtime shares them.
// In the source tree this file forwards there; the embedded bundle (CMakeLists.txt) holds
// the support header itself under this name, so the bundle needs nothing outside it.
#pragma once

#include "../../../support/half_bfloat.h"
