#!/usr/bin/env bash
# Runs `python -m perf.gpu_check` (and the kernel tests on CUDA) on a lent GPU machine whose
# image has torch (CUDA 13) but no FAISS. Only faiss-gpu 1.15.1 has sm_90 kernels
# (faiss-gpu-cu12 1.14 stops at sm_80: "no kernel image is available"), and it links CUDA 12's
# libcudart (a 1 MB wheel, carried) and libcublas (a 600 MB wheel, too big to carry). The
# image's CUDA 13 cuBLAS answers instead, through a forwarding library built there from
# perf/gpu_shim/ (the eight cuBLAS calls FAISS makes, under the CUDA 12 names).
#
# Prepare, here, in the repository root (ignored by git):
#   printf '/.whl/\n/.chunk/\n' >> .git/info/exclude
#   pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#       --platform manylinux_2_28_x86_64 --platform manylinux2014_x86_64 \
#       -d .whl nvidia-cuda-runtime-cu12==12.8.90 msgspec faiss-gpu==1.15.1
# The faiss-gpu wheel (135 MB) is over a call's 64 MiB: move it out of .whl, `split -b 45M`
# it, and send each part in its own call on the same warm machine (carry .chunk holding one
# part; command `mkdir -p /tmp/parts && cp .chunk/* /tmp/parts/`), then, carrying .whl:
#   cat /tmp/parts/part-* > .whl/faiss_gpu-1.15.1-cp310-abi3-manylinux_2_27_x86_64.manylinux_2_28_x86_64.whl
#   bash perf/gpu_check_device.sh        # figures to $OUT/gpu_check.json and $OUT/log
set -uo pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT" /tmp/site /tmp/shim
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
(cd perf/gpu_shim && gcc -O2 -shared -fPIC -Wl,-soname,libcublas.so.12 \
    -Wl,--version-script=cublas.map cublas12_shim.c -ldl -o /tmp/shim/libcublas.so.12 &&
 gcc -O2 -shared -fPIC -Wl,-soname,libcublasLt.so.12 -Wl,--version-script=lt.map lt.c \
    -o /tmp/shim/libcublasLt.so.12) || { echo "cannot build the cuBLAS shim (gcc?)"; exit 1; }
cublas13=$(find /opt /usr/local /usr/lib -name 'libcublas.so.13*' 2>/dev/null | head -1)
echo "CUDA 13 cuBLAS: ${cublas13:-not found}"
cu13=$(dirname "${cublas13:-/x/x}")
# faiss-gpu 1.15 preloads the CUDA 12 wheels from nvidia/<name>/lib: put the shims there, and
# CUDA 13's libcurand.so.10 (same soname; FAISS links none of it) or an empty stand-in
mkdir -p /tmp/site/nvidia/cublas/lib /tmp/site/nvidia/curand/lib
cp /tmp/shim/libcublas*.so.12 /tmp/site/nvidia/cublas/lib/
if [ -e "$cu13/libcurand.so.10" ]; then ln -sf "$cu13/libcurand.so.10" /tmp/site/nvidia/curand/lib/
else cp /tmp/shim/libcublasLt.so.12 /tmp/site/nvidia/curand/lib/libcurand.so.10; fi
export LD_LIBRARY_PATH="/tmp/shim:/tmp/site/nvidia/cuda_runtime/lib:$cu13:${LD_LIBRARY_PATH:-}"
export PYTHONPATH="/tmp/site:$PWD"
export _FAISS_WHEEL_DISABLE_CUDA_PRELOAD=1   # its preloader looks for the cu12 wheels by name
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
python3 -m pytest -q -p no:cacheprovider --noconftest -o addopts="" tests/kernels/test_topk.py 2>&1 | tail -5
python3 -m perf.gpu_check --json "$OUT/gpu_check.json" "$@" 2>&1 | tee "$OUT/log"
