/* Runs muladd.spv (D = A x B + C, then D and the same C value stored) on device 0 for each K given
 * (default 8 16 24), with A and B all ones and C all zeros, 16 x 16 x K, one subgroup of 8.
 * D must be K everywhere, and the stored C must be 0 everywhere: OpCooperativeMatrixStoreKHR stores
 * the value of its Object operand, the one passed to OpCooperativeMatrixMulAddKHR as C, and a SPIR-V
 * value never changes once defined. Exit status 1 if any element of either differs.
 *
 * It links no Vulkan library: it opens the loader (libvulkan.so.1) at run time, so it builds with any C
 * compiler and glibc, needing only Vulkan headers that know VK_NV_cooperative_matrix2 (1.3.301 or
 * later; Debian 12's are 1.3.239): lavapipe's prefix has them (.ci/lavapipe.sh PREFIX). It enables
 * VK_NV_cooperative_matrix2's cooperativeMatrixFlexibleDimensions: lavapipe lists 8 x 8 x 8 alone
 * through VK_KHR_cooperative_matrix, and 16 x 16 x K only as a flexible size (granularity 8).
 *
 *   cc -O2 -I PREFIX/usr/include -o run run.c -ldl && PREFIX/run ./run muladd.spv [K ...]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* Every Vulkan command used, taken from the loader through vkGetInstanceProcAddr. */
#define INSTANCE_COMMANDS(X) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) \
    X(vkDestroyInstance) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkGetBufferMemoryRequirements) \
    X(vkAllocateMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkCreateShaderModule) \
    X(vkCreateDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline) \
    X(vkCreateDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) \
    X(vkAllocateCommandBuffers) X(vkResetCommandBuffer) X(vkBeginCommandBuffer) X(vkCmdBindPipeline) \
    X(vkCmdBindDescriptorSets) X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkEndCommandBuffer) X(vkQueueSubmit) \
    X(vkQueueWaitIdle) X(vkDestroyCommandPool) X(vkDestroyDescriptorPool) X(vkDestroyPipelineLayout) \
    X(vkDestroyDescriptorSetLayout) X(vkDestroyShaderModule) X(vkDestroyBuffer) X(vkFreeMemory) X(vkDestroyDevice)
#define DECLARE(name) static PFN_##name name;
DECLARE(vkCreateInstance)
INSTANCE_COMMANDS(DECLARE)

#define M 16
#define N 16
#define MAX_K 64
#define BUFFERS 5 /* A, B, C, D, C out: the module's bindings 0-4 */
#define CHECK(call) do { VkResult r_ = (call); if (r_ != VK_SUCCESS) { \
    fprintf(stderr, "%s failed: %d\n", #call, r_); exit(2); } } while (0)

static uint32_t *read_spirv(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *code = malloc(*size);
    if (fread(code, 1, *size, f) != *size) { perror(path); exit(2); }
    fclose(f);
    return code;
}

/* Print row 0 and row 15 of a 16 x 16 result, then how many elements differ from want. */
static int report(const char *name, const float *m, float want)
{
    int wrong = 0;
    for (int i = 0; i < M * N; i++) wrong += m[i] != want;
    for (int r = 0; r < M; r += M - 1) {
        printf("  %s row %2d:", name, r);
        for (int c = 0; c < N; c++) printf(" %g", m[r * N + c]);
        printf("\n");
    }
    printf("  %s: %d of %d elements differ from %g\n", name, wrong, M * N, want);
    return wrong;
}

int main(int argc, char **argv)
{
    static const char *default_ks[] = { "8", "16", "24" };
    if (argc < 2) { fprintf(stderr, "usage: %s muladd.spv [K ...]\n", argv[0]); return 2; }
    const char **ks = argc > 2 ? (const char **)argv + 2 : default_ks;
    int nks = argc > 2 ? argc - 2 : 3;
    uint32_t kvals[64];
    if (nks > 64) { fprintf(stderr, "at most 64 values of K\n"); return 2; }
    for (int i = 0; i < nks; i++) {
        char tail;
        if (sscanf(ks[i], "%u%c", &kvals[i], &tail) != 1 || kvals[i] == 0 || kvals[i] % 8 || kvals[i] > MAX_K) {
            fprintf(stderr, "%s: K is a multiple of 8 from 8 to %d\n", ks[i], MAX_K); return 2; }
    }

    void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader) { fprintf(stderr, "no Vulkan loader: %s\n", dlerror()); return 2; }
    PFN_vkGetInstanceProcAddr get = (PFN_vkGetInstanceProcAddr)dlsym(loader, "vkGetInstanceProcAddr");
    if (!get || !(vkCreateInstance = (PFN_vkCreateInstance)get(VK_NULL_HANDLE, "vkCreateInstance"))) {
        fprintf(stderr, "libvulkan.so.1 has no vkGetInstanceProcAddr\n"); return 2; }
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkInstance instance;
    CHECK(vkCreateInstance(&ici, NULL, &instance));
#define LOAD(name) if (!(name = (PFN_##name)get(instance, #name))) { fprintf(stderr, "no %s\n", #name); return 2; }
    INSTANCE_COMMANDS(LOAD)
    uint32_t n = 1;
    VkPhysicalDevice phys;
    VkResult enumerated = vkEnumeratePhysicalDevices(instance, &n, &phys);
    if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || n == 0) { fprintf(stderr, "no device\n"); return 2; }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys, &props);
    printf("device: %s, driver version %u.%u.%u\n", props.deviceName, VK_VERSION_MAJOR(props.driverVersion),
           VK_VERSION_MINOR(props.driverVersion), VK_VERSION_PATCH(props.driverVersion));

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    nq = nq > 16 ? 16 : nq;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
    uint32_t family = 0;
    while (family < nq && !(qf[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) family++;

    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
        .cooperativeMatrixFlexibleDimensions = VK_TRUE };
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, .pNext = &cm2,
        .cooperativeMatrix = VK_TRUE };
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &cm,
        .vulkanMemoryModel = VK_TRUE, .shaderFloat16 = VK_TRUE };
    VkPhysicalDeviceVulkan11Features v11 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES, .pNext = &v12,
        .storageBuffer16BitAccess = VK_TRUE };
    const char *extensions[] = { VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME };
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                    .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &priority };
    VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &v11,
                               .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                               .enabledExtensionCount = 2, .ppEnabledExtensionNames = extensions };
    VkDevice device;
    CHECK(vkCreateDevice(phys, &dci, NULL, &device));
    VkQueue queue;
    vkGetDeviceQueue(device, family, 0, &queue);

    /* one host-visible, coherent allocation holding A, B (float16, up to 16 x 64 and 64 x 16) and
     * C, D, C out (float32, 16 x 16) */
    const VkDeviceSize bytes = M * MAX_K * sizeof(float);
    VkBuffer buffers[BUFFERS];
    for (int i = 0; i < BUFFERS; i++) {
        VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = bytes,
                                   .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT };
        CHECK(vkCreateBuffer(device, &bci, NULL, &buffers[i]));
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(device, buffers[0], &req);
    VkDeviceSize stride = (req.size + req.alignment - 1) / req.alignment * req.alignment;
    VkPhysicalDeviceMemoryProperties mem;
    vkGetPhysicalDeviceMemoryProperties(phys, &mem);
    const VkMemoryPropertyFlags want = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
    uint32_t type = 0;
    while (type < mem.memoryTypeCount &&
           !((req.memoryTypeBits & (1u << type)) && (mem.memoryTypes[type].propertyFlags & want) == want)) type++;
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = BUFFERS * stride,
                                 .memoryTypeIndex = type };
    VkDeviceMemory memory;
    CHECK(vkAllocateMemory(device, &mai, NULL, &memory));
    for (int i = 0; i < BUFFERS; i++) CHECK(vkBindBufferMemory(device, buffers[i], memory, i * stride));
    char *mapped;
    CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped));
    uint16_t *a = (uint16_t *)mapped, *b = (uint16_t *)(mapped + stride);
    float *c = (float *)(mapped + 2 * stride), *d = (float *)(mapped + 3 * stride);
    float *c_out = (float *)(mapped + 4 * stride);

    size_t size;
    uint32_t *code = read_spirv(argv[1], &size);
    VkShaderModuleCreateInfo smci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size,
                                      .pCode = code };
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &smci, NULL, &module));
    VkDescriptorSetLayoutBinding bindings[BUFFERS];
    for (uint32_t i = 0; i < BUFFERS; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){ .binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                      .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
    VkDescriptorSetLayoutCreateInfo dslci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                              .bindingCount = BUFFERS, .pBindings = bindings };
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &dslci, NULL, &set_layout));
    VkPipelineLayoutCreateInfo plci = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                        .setLayoutCount = 1, .pSetLayouts = &set_layout };
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &plci, NULL, &layout));

    VkDescriptorPoolSize pool_size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, BUFFERS };
    VkDescriptorPoolCreateInfo dpci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                        .poolSizeCount = 1, .pPoolSizes = &pool_size };
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(device, &dpci, NULL, &pool));
    VkDescriptorSetAllocateInfo dsai = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                         .descriptorPool = pool, .descriptorSetCount = 1, .pSetLayouts = &set_layout };
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &dsai, &set));
    VkDescriptorBufferInfo infos[BUFFERS];
    VkWriteDescriptorSet writes[BUFFERS];
    for (uint32_t i = 0; i < BUFFERS; i++) {
        infos[i] = (VkDescriptorBufferInfo){ buffers[i], 0, VK_WHOLE_SIZE };
        writes[i] = (VkWriteDescriptorSet){ .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set,
                                            .dstBinding = i, .descriptorCount = 1,
                                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                            .pBufferInfo = &infos[i] };
    }
    vkUpdateDescriptorSets(device, BUFFERS, writes, 0, NULL);

    VkCommandPoolCreateInfo cpoolci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                        .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                        .queueFamilyIndex = family };
    VkCommandPool cpool;
    CHECK(vkCreateCommandPool(device, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = cpool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
    VkCommandBuffer cmd;
    CHECK(vkAllocateCommandBuffers(device, &cbai, &cmd));

    int failed = 0;
    for (int s = 0; s < nks; s++) {
        uint32_t k = kvals[s];
        for (int i = 0; i < M * MAX_K; i++) { a[i] = b[i] = 0x3c00; /* float16 1.0 */ }
        for (int i = 0; i < M * N; i++) { c[i] = 0.0f; d[i] = c_out[i] = -1.0f; }
        VkSpecializationMapEntry entry = { 0, 0, 4 }; /* SpecId 0: K */
        VkSpecializationInfo spec = { .mapEntryCount = 1, .pMapEntries = &entry, .dataSize = 4, .pData = &k };
        VkComputePipelineCreateInfo cpci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .layout = layout,
            .stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                       .module = module, .pName = "main", .pSpecializationInfo = &spec } };
        VkPipeline pipeline;
        CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
        CHECK(vkResetCommandBuffer(cmd, 0));
        VkCommandBufferBeginInfo begin = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
        CHECK(vkBeginCommandBuffer(cmd, &begin));
        vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
        vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
        vkCmdDispatch(cmd, 1, 1, 1);
        VkMemoryBarrier barrier = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                    .dstAccessMask = VK_ACCESS_HOST_READ_BIT };
        vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier,
                             0, NULL, 0, NULL);
        CHECK(vkEndCommandBuffer(cmd));
        VkSubmitInfo submit = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd };
        CHECK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
        CHECK(vkQueueWaitIdle(queue));
        vkDestroyPipeline(device, pipeline, NULL);

        printf("M x N x K = %d x %d x %u (A = B = 1, C = 0): D must be %u, stored C must be 0\n", M, N, k, k);
        int wrong_d = report("D", d, (float)k);
        int wrong_c = report("C", c_out, 0.0f);
        int all_partial = k > 8;
        for (int i = 0; i < M * N; i++) all_partial &= c_out[i] == (float)(k - 8);
        if (all_partial)
            printf("  C came back as %u everywhere: 0 + A[:, 0:%u] x B[0:%u, :], the product over every 8-wide K granule but the last\n",
                   k - 8, k - 8, k - 8);
        printf("  %s\n", wrong_d || wrong_c ? "FAIL" : "pass");
        failed |= wrong_d || wrong_c;
    }
    /* everything destroyed, so that a run under VK_LAYER_KHRONOS_validation reports nothing */
    vkDestroyCommandPool(device, cpool, NULL);
    vkDestroyDescriptorPool(device, pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkDestroyShaderModule(device, module, NULL);
    for (int i = 0; i < BUFFERS; i++) vkDestroyBuffer(device, buffers[i], NULL);
    vkFreeMemory(device, memory, NULL);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return failed;
}
