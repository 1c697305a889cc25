void cublaslt12_shim_unused(void) {}
