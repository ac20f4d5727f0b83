# Source this on the device machine (repo root): Vulkan loader + glvnd from the
# carried .gl/*.deb, vulkan_py from the carried .whl/, PYTHONPATH for ctsgen, the carried
# tools on PATH, the carried glslang library and a SPIR-V cache under /tmp.
# The NVIDIA ICD needs libglvnd: with libvulkan1 alone vkCreateInstance fails
# with VK_ERROR_INCOMPATIBLE_DRIVER (bench/results/vulkan_smoke.txt).
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
    export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
fi
export PATH=$PWD/.carry/bin:$PATH CTSGEN_GLSLANG_LIBRARY=$(ls $PWD/.carry/glslang/libslang-glslang-*.so)
export CTSGEN_CACHE_DIR=/tmp/ctsgen-cache
