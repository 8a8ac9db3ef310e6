//===- HsaHeaders.h - ROCr's headers, as Debian installs them ---*- C++ -*-===//
//
// hsa_api_trace.h includes "inc/hsa_ext_image.h" and friends unless
// AMD_INTERNAL_BUILD is defined; Debian's libhsa-runtime-dev (ROCm 5.2)
// installs those headers beside it in /usr/include/hsa, with no inc/. The
// build puts that directory on the include path and defines
// AMD_INTERNAL_BUILD (CMakeLists.txt), so every file includes the headers
// through this one.
//
//===----------------------------------------------------------------------===//

#ifndef HOTSWAP_COUNTERS_RT_HSAHEADERS_H
#define HOTSWAP_COUNTERS_RT_HSAHEADERS_H

#include "hsa.h"
#include "hsa_api_trace.h"
#include "hsa_ven_amd_loader.h"

#endif // HOTSWAP_COUNTERS_RT_HSAHEADERS_H
