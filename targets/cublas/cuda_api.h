// The CUDA driver and cuBLAS, loaded with dlopen at first use.
//
// disco builds and runs without the CUDA toolkit: nothing here links against
// CUDA, and the few entry points the cuBLAS backend needs are looked up by
// name (their C ABI has not changed from CUDA 11 to 13). Memory and the
// context come from the driver (libcuda.so.1, installed with the NVIDIA
// driver; never the toolkit's stub), GEMMs from libcublas, whichever of
// versions 13, 12 or 11 the machine has (PyTorch's wheels ship one).
//
// Every failure is a disco::Error that names the step that failed (loading a
// library, cuInit, finding a device, cublasCreate, a copy, a GEMM) and the
// CUDA or cuBLAS status, never an abort: a machine without a GPU gets
// "no CUDA device" as an error code and a message.
#pragma once
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace disco {

// Where to look. Empty fields take the defaults: $DISCO_CUDA_DRIVER, else
// libcuda.so.1; $DISCO_CUBLAS_LIBRARY, else libcublas.so.{13,12,11} on the
// loader's path, then in $DISCO_CUDA_LIB_DIR and /usr/local/cuda/lib64.
struct CudaLibraryPaths {
  std::string driver;
  std::vector<std::string> cublas;
};

// One device (ordinal 0) with its primary context and a cuBLAS handle.
class CudaDevice {
 public:
  using DevicePtr = uint64_t;
  enum Op { N = 0, T = 1 };  // cublasOperation_t

  // Loads both libraries, initializes the driver, takes device 0 and creates a
  // cuBLAS handle; throws disco::Error naming the step that failed.
  explicit CudaDevice(const CudaLibraryPaths &paths);
  ~CudaDevice();
  CudaDevice(const CudaDevice &) = delete;
  CudaDevice &operator=(const CudaDevice &) = delete;

  // The process's device, made at first use with the default paths and kept
  // (never destroyed, so kernels may free memory during static destruction).
  // A failure is remembered: every later call throws the same error.
  static CudaDevice &shared();

  // "NVIDIA H200 (compute 9.0), cuBLAS 130000, driver 13000"
  const std::string &description() const { return description_; }

  // Held by a kernel for its whole run: one handle, one stream, one caller at a time.
  std::mutex &mutex() { return mu_; }
  // Binds the device's context to the calling thread (runs may move threads).
  void make_current();
  DevicePtr alloc(size_t bytes);
  void free(DevicePtr p) noexcept;
  void upload(DevicePtr dst, const void *src, size_t bytes);
  void download(void *dst, DevicePtr src, size_t bytes);

  // Column-major C[m, n] = alpha * op(A) op(B) + beta * C, as cuBLAS sees it;
  // `batch` > 1 runs cublasSgemmStridedBatched with the given element strides.
  void sgemm(Op op_a, Op op_b, int m, int n, int k, float alpha, DevicePtr a, int lda, int64_t stride_a,
             DevicePtr b, int ldb, int64_t stride_b, float beta, DevicePtr c, int ldc, int64_t stride_c, int batch);

 private:
  struct Api;
  Api *api_ = nullptr;
  void *driver_lib_ = nullptr, *cublas_lib_ = nullptr;
  void *context_ = nullptr, *handle_ = nullptr;
  int device_ = 0;
  std::string description_;
  std::mutex mu_;
};

// Device memory that grows on demand and is kept across runs.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  // At least `bytes` (contents not kept when it grows).
  CudaDevice::DevicePtr ensure(CudaDevice &dev, size_t bytes);
  CudaDevice::DevicePtr ptr() const { return ptr_; }

 private:
  CudaDevice *dev_ = nullptr;
  CudaDevice::DevicePtr ptr_ = 0;
  size_t bytes_ = 0;
};

}  // namespace disco
