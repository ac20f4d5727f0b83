# A/B on one machine: the same single-process fuzz (same seed, same examples, no persistent
# pipeline cache) with and without starting a variant's build in the strategy (ca74238).
. bench/device/setup.sh >/dev/null 2>&1
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 CTSGEN_PIPELINE_CACHE=0 __GL_SHADER_DISK_CACHE=0
rm -rf /tmp/b && cp -r . /tmp/b && cp .ab/loop_before.py /tmp/b/ctsgen/fuzz/loop.py
fams="--family cm2-convert --family cm2-elementwise --family cm2-gemm --family cm2-program --family cm2-reduce --family coopvec --family coopvec-program --family decode --family tensor-layout --family tensor-view"
for v in before after before after; do
  d=$PWD; [ $v = before ] && d=/tmp/b
  echo "== $v: ctsgen fuzz --backend vulkan (10 families) --max-examples ${1:-150} --seed 4500 --database none --expect-deviation setdimension-floor"
  (cd $d && PYTHONPATH=/tmp/site:$d timeout 200 python3 -m ctsgen fuzz --backend vulkan $fams --max-examples ${1:-150} --seed 4500 \
     --database none --expect-deviation setdimension-floor --repro-dir /tmp/rp-$v 2>&1 | grep -v "^fuzzing" | grep -E "fuzzed|draw |data|pipeline |ahead|failure")
done
