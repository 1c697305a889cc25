/* Forwards the eight cuBLAS entry points libfaiss (faiss-gpu-cu12) imports, under the
   version name libcublas.so.12, to the CUDA 13 cuBLAS that the device image carries. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
static void *lib;
static void *sym(const char *name) {
  if (!lib) {
    lib = dlopen("libcublas.so.13", RTLD_NOW | RTLD_GLOBAL);
    if (!lib) { fprintf(stderr, "cublas shim: %s\n", dlerror()); abort(); }
  }
  void *p = dlsym(lib, name);
  if (!p) { fprintf(stderr, "cublas shim: no %s\n", name); abort(); }
  return p;
}
#define FWD(name, params, args) \
  int name params { static int (*f) params; if (!f) f = (int (*) params) sym(#name); return f args; }
FWD(cublasCreate_v2, (void **h), (h))
FWD(cublasDestroy_v2, (void *h), (h))
FWD(cublasSetStream_v2, (void *h, void *s), (h, s))
FWD(cublasGetMathMode, (void *h, int *m), (h, m))
FWD(cublasSetMathMode, (void *h, int m), (h, m))
FWD(cublasSgemmEx, (void *h, int ta, int tb, int m, int n, int k, const float *al,
    const void *A, int At, int lda, const void *B, int Bt, int ldb, const float *be,
    void *C, int Ct, int ldc), (h, ta, tb, m, n, k, al, A, At, lda, B, Bt, ldb, be, C, Ct, ldc))
FWD(cublasGemmEx, (void *h, int ta, int tb, int m, int n, int k, const void *al,
    const void *A, int At, int lda, const void *B, int Bt, int ldb, const void *be,
    void *C, int Ct, int ldc, int ct, int algo),
    (h, ta, tb, m, n, k, al, A, At, lda, B, Bt, ldb, be, C, Ct, ldc, ct, algo))
FWD(cublasGemmStridedBatchedEx, (void *h, int ta, int tb, int m, int n, int k, const void *al,
    const void *A, int At, int lda, long long sA, const void *B, int Bt, int ldb, long long sB,
    const void *be, void *C, int Ct, int ldc, long long sC, int batch, int ct, int algo),
    (h, ta, tb, m, n, k, al, A, At, lda, sA, B, Bt, ldb, sB, be, C, Ct, ldc, sC, batch, ct, algo))
