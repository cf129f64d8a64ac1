#include "targets/cublas/cuda_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "frontend/errors.h"

namespace disco {

namespace {

// The C ABI of the few entry points used (cuda.h and cublas_api.h, CUDA 11-13).
using CUresult = int;
using CUdevice = int;
using CUcontext = void *;
using CUdeviceptr = unsigned long long;
using cublasStatus_t = int;
using cublasHandle_t = void *;

constexpr int kAttrComputeMajor = 75, kAttrComputeMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_*

std::string cublas_status_name(cublasStatus_t s) {
  switch (s) {
    case 1: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case 3: return "CUBLAS_STATUS_ALLOC_FAILED";
    case 7: return "CUBLAS_STATUS_INVALID_VALUE";
    case 8: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case 11: return "CUBLAS_STATUS_MAPPING_ERROR";
    case 13: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case 14: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case 15: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "cuBLAS status " + std::to_string(s);
  }
}

// The driver's stub (the toolkit's link-time libcuda) has no cuGetErrorName that works.
const char *cu_error_fallback(int r) {
  switch (r) {
    case 2: return "CUDA_ERROR_OUT_OF_MEMORY";
    case 3: return "CUDA_ERROR_NOT_INITIALIZED";
    case 34: return "CUDA_ERROR_STUB_LIBRARY";
    case 35: return "CUDA_ERROR_INSUFFICIENT_DRIVER";
    case 100: return "CUDA_ERROR_NO_DEVICE";
    case 101: return "CUDA_ERROR_INVALID_DEVICE";
    default: return "CUDA error";
  }
}

std::string env(const char *name) {
  const char *v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

struct CudaDevice::Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDriverGetVersion)(int *);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  cublasStatus_t (*cublasCreate)(cublasHandle_t *);
  cublasStatus_t (*cublasDestroy)(cublasHandle_t);
  cublasStatus_t (*cublasGetVersion)(cublasHandle_t, int *);
  cublasStatus_t (*cublasSgemm)(cublasHandle_t, int, int, int, int, int, const float *, const float *, int,
                                const float *, int, const float *, float *, int);
  cublasStatus_t (*cublasSgemmStridedBatched)(cublasHandle_t, int, int, int, int, int, const float *, const float *,
                                              int, long long, const float *, int, long long, const float *, float *,
                                              int, long long, int);

  // "CUDA_ERROR_NO_DEVICE (100)"
  std::string cu_error(CUresult r) const {
    const char *name = nullptr;
    if (cuGetErrorName && cuGetErrorName(r, &name) == 0 && name) return std::string(name) + " (" + std::to_string(r) + ")";
    return std::string(cu_error_fallback(r)) + " (" + std::to_string(r) + ")";
  }
  void check(CUresult r, const char *step, const char *hint = "") const {
    DISCO_CHECK(r == 0, "cuda: ", step, " failed: ", cu_error(r), hint);
  }
  void check_blas(cublasStatus_t s, const char *step) const {
    DISCO_CHECK(s == 0, "cuda: ", step, " failed: ", cublas_status_name(s));
  }
};

namespace {

template <typename F>
void bind(void *lib, const char *lib_name, const char *symbol, F *fn) {
  *fn = reinterpret_cast<F>(dlsym(lib, symbol));
  DISCO_CHECK(*fn, "cuda: ", lib_name, " has no ", symbol, " (too old a version?)");
}

void *open_first(const std::vector<std::string> &candidates, std::string *opened, std::string *errors) {
  for (const auto &c : candidates) {
    if (void *h = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      *opened = c;
      return h;
    }
    const char *e = dlerror();
    *errors += (errors->empty() ? "" : "; ") + std::string(e ? e : c + ": not found");
  }
  return nullptr;
}

std::vector<std::string> default_cublas_candidates() {
  if (std::string lib = env("DISCO_CUBLAS_LIBRARY"); !lib.empty()) return {lib};
  const std::vector<std::string> names = {"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"};
  std::vector<std::string> out = names;
  for (const std::string &dir : {env("DISCO_CUDA_LIB_DIR"), std::string("/usr/local/cuda/lib64")})
    if (!dir.empty())
      for (const auto &n : names) out.push_back(dir + "/" + n);
  return out;
}

}  // namespace

CudaDevice::CudaDevice(const CudaLibraryPaths &paths) : api_(new Api{}) {
  try {
    // 1. The driver.
    const std::string driver = !paths.driver.empty() ? paths.driver
                               : !env("DISCO_CUDA_DRIVER").empty() ? env("DISCO_CUDA_DRIVER")
                                                                   : "libcuda.so.1";
    std::string opened, errors;
    driver_lib_ = open_first({driver}, &opened, &errors);
    DISCO_CHECK(driver_lib_, "cuda: cannot load the CUDA driver library ", driver,
                " (no NVIDIA driver on this machine?): ", errors);
    Api &a = *api_;
    bind(driver_lib_, "the CUDA driver", "cuGetErrorName", &a.cuGetErrorName);
    bind(driver_lib_, "the CUDA driver", "cuInit", &a.cuInit);
    bind(driver_lib_, "the CUDA driver", "cuDriverGetVersion", &a.cuDriverGetVersion);
    bind(driver_lib_, "the CUDA driver", "cuDeviceGetCount", &a.cuDeviceGetCount);
    bind(driver_lib_, "the CUDA driver", "cuDeviceGet", &a.cuDeviceGet);
    bind(driver_lib_, "the CUDA driver", "cuDeviceGetName", &a.cuDeviceGetName);
    bind(driver_lib_, "the CUDA driver", "cuDeviceGetAttribute", &a.cuDeviceGetAttribute);
    bind(driver_lib_, "the CUDA driver", "cuDevicePrimaryCtxRetain", &a.cuDevicePrimaryCtxRetain);
    bind(driver_lib_, "the CUDA driver", "cuDevicePrimaryCtxRelease_v2", &a.cuDevicePrimaryCtxRelease);
    bind(driver_lib_, "the CUDA driver", "cuCtxSetCurrent", &a.cuCtxSetCurrent);
    bind(driver_lib_, "the CUDA driver", "cuMemAlloc_v2", &a.cuMemAlloc);
    bind(driver_lib_, "the CUDA driver", "cuMemFree_v2", &a.cuMemFree);
    bind(driver_lib_, "the CUDA driver", "cuMemcpyHtoD_v2", &a.cuMemcpyHtoD);
    bind(driver_lib_, "the CUDA driver", "cuMemcpyDtoH_v2", &a.cuMemcpyDtoH);

    // 2. A device and its primary context (the one cuBLAS's runtime shares).
    a.check(a.cuInit(0), "cuInit", " (no CUDA device, or not a real driver?)");
    int count = 0;
    a.check(a.cuDeviceGetCount(&count), "cuDeviceGetCount");
    DISCO_CHECK(count > 0, "cuda: no CUDA device (cuDeviceGetCount is 0)");
    CUdevice dev = 0;
    a.check(a.cuDeviceGet(&dev, 0), "cuDeviceGet(0)");
    device_ = dev;
    a.check(a.cuDevicePrimaryCtxRetain(&context_, dev), "cuDevicePrimaryCtxRetain");
    a.check(a.cuCtxSetCurrent(context_), "cuCtxSetCurrent");

    // 3. cuBLAS.
    std::vector<std::string> candidates = paths.cublas.empty() ? default_cublas_candidates() : paths.cublas;
    std::string cublas_name;
    errors.clear();
    cublas_lib_ = open_first(candidates, &cublas_name, &errors);
    DISCO_CHECK(cublas_lib_, "cuda: cannot load cuBLAS (set DISCO_CUBLAS_LIBRARY or DISCO_CUDA_LIB_DIR): ", errors);
    bind(cublas_lib_, cublas_name.c_str(), "cublasCreate_v2", &a.cublasCreate);
    bind(cublas_lib_, cublas_name.c_str(), "cublasDestroy_v2", &a.cublasDestroy);
    bind(cublas_lib_, cublas_name.c_str(), "cublasGetVersion_v2", &a.cublasGetVersion);
    bind(cublas_lib_, cublas_name.c_str(), "cublasSgemm_v2", &a.cublasSgemm);
    bind(cublas_lib_, cublas_name.c_str(), "cublasSgemmStridedBatched", &a.cublasSgemmStridedBatched);
    a.check_blas(a.cublasCreate(&handle_), "cublasCreate");

    char name[256] = {0};
    int major = 0, minor = 0, driver_version = 0, blas_version = 0;
    a.cuDeviceGetName(name, sizeof(name) - 1, dev);
    a.cuDeviceGetAttribute(&major, kAttrComputeMajor, dev);
    a.cuDeviceGetAttribute(&minor, kAttrComputeMinor, dev);
    a.cuDriverGetVersion(&driver_version);
    a.cublasGetVersion(handle_, &blas_version);
    description_ = std::string(name) + " (compute " + std::to_string(major) + "." + std::to_string(minor) +
                   "), cuBLAS " + std::to_string(blas_version) + " (" + cublas_name + "), driver " +
                   std::to_string(driver_version);
  } catch (...) {
    if (context_) api_->cuDevicePrimaryCtxRelease(device_);
    if (cublas_lib_) dlclose(cublas_lib_);
    if (driver_lib_) dlclose(driver_lib_);
    delete api_;
    throw;
  }
}

CudaDevice::~CudaDevice() {
  if (handle_) api_->cublasDestroy(handle_);
  if (context_) api_->cuDevicePrimaryCtxRelease(device_);
  // The libraries stay loaded: cuBLAS registers exit handlers of its own.
  delete api_;
}

CudaDevice &CudaDevice::shared() {
  static std::mutex mu;
  static CudaDevice *device = nullptr;
  static std::string error;
  std::lock_guard<std::mutex> lock(mu);
  if (device) return *device;
  if (!error.empty()) throw Error(error);
  try {
    device = new CudaDevice(CudaLibraryPaths{});
  } catch (const Error &e) {
    error = e.what();
    throw;
  }
  return *device;
}

void CudaDevice::make_current() { api_->check(api_->cuCtxSetCurrent(context_), "cuCtxSetCurrent"); }

CudaDevice::DevicePtr CudaDevice::alloc(size_t bytes) {
  CUdeviceptr p = 0;
  const CUresult r = api_->cuMemAlloc(&p, bytes);
  DISCO_CHECK(r == 0, "cuda: cuMemAlloc of ", bytes, " bytes failed: ", api_->cu_error(r));
  return p;
}

void CudaDevice::free(DevicePtr p) noexcept {
  if (!p) return;
  api_->cuCtxSetCurrent(context_);  // a kernel may be destroyed on another thread; errors at exit are moot
  api_->cuMemFree(p);
}

void CudaDevice::upload(DevicePtr dst, const void *src, size_t bytes) {
  if (bytes) api_->check(api_->cuMemcpyHtoD(dst, src, bytes), "copying to the device (cuMemcpyHtoD)");
}

void CudaDevice::download(void *dst, DevicePtr src, size_t bytes) {
  if (bytes) api_->check(api_->cuMemcpyDtoH(dst, src, bytes), "copying from the device (cuMemcpyDtoH)");
}

void CudaDevice::sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, DevicePtr a, int lda, int64_t stride_a,
                       DevicePtr b, int ldb, int64_t stride_b, float beta, DevicePtr c, int ldc, int64_t stride_c,
                       int batch) {
  auto f = [](DevicePtr p) { return reinterpret_cast<float *>(static_cast<uintptr_t>(p)); };
  if (batch == 1) {
    api_->check_blas(
        api_->cublasSgemm(handle_, op_a, op_b, m, n, k, &alpha, f(a), lda, f(b), ldb, &beta, f(c), ldc), "cublasSgemm");
    return;
  }
  api_->check_blas(api_->cublasSgemmStridedBatched(handle_, op_a, op_b, m, n, k, &alpha, f(a), lda, stride_a, f(b), ldb,
                                                   stride_b, &beta, f(c), ldc, stride_c, batch),
                   "cublasSgemmStridedBatched");
}

DeviceBuffer::~DeviceBuffer() {
  if (dev_) dev_->free(ptr_);
}

CudaDevice::DevicePtr DeviceBuffer::ensure(CudaDevice &dev, size_t bytes) {
  if (dev_ == &dev && bytes_ >= bytes && ptr_) return ptr_;
  if (dev_) dev_->free(ptr_);
  dev_ = &dev;
  ptr_ = 0;
  bytes_ = 0;
  ptr_ = dev.alloc(bytes ? bytes : 4);
  bytes_ = bytes;
  return ptr_;
}

}  // namespace disco
