// The shape of HIP's threadIdx (its amd_detail headers), for
// swap-kernels-hip.test: built with -nogpuinc, no HIP SDK. Empty constant
// members of __HIP_Coordinates<F>, defined out of class as weak objects
// (C++14: that is their definition, so clang emits them as HIP's headers do).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
template <typename F> struct __HIP_Coordinates {
  struct __X {
    __device__ operator unsigned() const noexcept { return F::call(0); }
  };
  struct __Y {
    __device__ operator unsigned() const noexcept { return F::call(1); }
  };
  struct __Z {
    __device__ operator unsigned() const noexcept { return F::call(2); }
  };
  static constexpr __X x{};
  static constexpr __Y y{};
  static constexpr __Z z{};
};
// Defined out of class, weak, as HIP's headers do (C++14: the definition).
template <typename F>
__attribute__((weak)) constexpr
    typename __HIP_Coordinates<F>::__X __HIP_Coordinates<F>::x;
template <typename F>
__attribute__((weak)) constexpr
    typename __HIP_Coordinates<F>::__Y __HIP_Coordinates<F>::y;
template <typename F>
__attribute__((weak)) constexpr
    typename __HIP_Coordinates<F>::__Z __HIP_Coordinates<F>::z;
struct __HIP_ThreadIdx {
  __device__ static unsigned call(unsigned I) {
    return I == 0   ? __builtin_amdgcn_workitem_id_x()
           : I == 1 ? __builtin_amdgcn_workitem_id_y()
                    : __builtin_amdgcn_workitem_id_z();
  }
};
static constexpr __HIP_Coordinates<__HIP_ThreadIdx> threadIdx{};
