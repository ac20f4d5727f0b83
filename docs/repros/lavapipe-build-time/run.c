/* Times lavapipe's build of muladd.spv (one straight-line f16 x f16 + f32 MulAdd, M x N x K as
 * specialization constants) at several sizes, and prints a table: for each size, a fresh pipeline's
 * vkCreateComputePipelines, then its first and its second vkQueueSubmit + vkQueueWaitIdle of the one
 * dispatch. llvmpipe compiles the shader at the first dispatch, not at pipeline creation, so the
 * build is create + (first - second). The result is checked too: A and B all ones, C zero, so every
 * element of D must be K.
 *
 * Sizes are MxNxK arguments (multiples of 8, lavapipe's flexible-dimension granularity, at most 64
 * each: the buffers' size); without any, 16x16x16 32x32x16 32x64x16 (P = M*N*K/512 = 8, 32, 64 pieces
 * of 8x8x8). It disables Mesa's on-disk shader cache (MESA_SHADER_CACHE_DISABLE=true unless already
 * set), so every build is cold.
 *
 * With --zero-first, each size's pipeline is first submitted in a dispatch of zero workgroups (no
 * invocation runs: the valid usage bounds the counts only from above), timed in its own column: on
 * lavapipe that submission is the build, and the first real dispatch costs what the second does. It is
 * how ctsgen's Vulkan backend measures and bounds a build (docs/validation.md, "lavapipe build time").
 *
 * It links no Vulkan library: it opens the loader (libvulkan.so.1) at run time, so it builds with any C
 * compiler and glibc, needing only Vulkan headers that know VK_NV_cooperative_matrix2 (1.3.301 or
 * later; Debian 12's are 1.3.239): lavapipe's prefix has them (.ci/lavapipe.sh PREFIX).
 *
 *   cc -O2 -I PREFIX/usr/include -o run run.c -ldl && PREFIX/run ./run muladd.spv
 *   PREFIX/run ./run --zero-first muladd.spv 16x16x16 32x32x16
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    X(vkQueueWaitIdle) X(vkDeviceWaitIdle) X(vkDestroyDevice)
#define DECLARE(name) static PFN_##name name;
DECLARE(vkCreateInstance)
INSTANCE_COMMANDS(DECLARE)

#define MAX_DIM 64
#define BUFFERS 4
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

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static VkDevice device;
static VkQueue queue;
static VkCommandBuffer cmd;

/* Record cmd: bind pipeline and set, dispatch groups x 1 x 1, then make the writes visible to the host. */
static void record(VkPipeline pipeline, VkPipelineLayout layout, VkDescriptorSet set, uint32_t groups)
{
    CHECK(vkResetCommandBuffer(cmd, 0));
    VkCommandBufferBeginInfo begin = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO };
    CHECK(vkBeginCommandBuffer(cmd, &begin));
    vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
    vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
    vkCmdDispatch(cmd, groups, 1, 1);
    VkMemoryBarrier barrier = { .sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER, .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                                .dstAccessMask = VK_ACCESS_HOST_READ_BIT };
    vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &barrier,
                         0, NULL, 0, NULL);
    CHECK(vkEndCommandBuffer(cmd));
}

/* One submit of cmd and the wait for it, in seconds. */
static double submit_and_wait(void)
{
    VkSubmitInfo submit = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd };
    double start = now_s();
    CHECK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));
    return now_s() - start;
}

int main(int argc, char **argv)
{
    static const char *default_sizes[] = { "16x16x16", "32x32x16", "32x64x16" };
    int zero_first = argc > 1 && strcmp(argv[1], "--zero-first") == 0;
    argc -= zero_first;
    argv += zero_first;
    if (argc < 2) { fprintf(stderr, "usage: %s [--zero-first] muladd.spv [MxNxK ...]\n", argv[0]); return 2; }
    const char **sizes = argc > 2 ? (const char **)argv + 2 : default_sizes;
    int nsizes = argc > 2 ? argc - 2 : 3;
    uint32_t dims[64][3];
    if (nsizes > 64) { fprintf(stderr, "at most 64 sizes\n"); return 2; }
    for (int i = 0; i < nsizes; i++) {
        char tail;
        if (sscanf(sizes[i], "%ux%ux%u%c", &dims[i][0], &dims[i][1], &dims[i][2], &tail) != 3) {
            fprintf(stderr, "%s: a size is MxNxK, e.g. 32x64x16\n", sizes[i]); return 2; }
        for (int j = 0; j < 3; j++)
            if (dims[i][j] == 0 || dims[i][j] % 8 || dims[i][j] > MAX_DIM) {
                fprintf(stderr, "%s: each dimension is a multiple of 8 from 8 to %d\n", sizes[i], MAX_DIM); return 2; }
    }
    setenv("MESA_SHADER_CACHE_DISABLE", "true", 0);  /* cold builds, unless the caller says otherwise */

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
    printf("device: %s; MESA_SHADER_CACHE_DISABLE=%s\n", props.deviceName, getenv("MESA_SHADER_CACHE_DISABLE"));

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
    CHECK(vkCreateDevice(phys, &dci, NULL, &device));
    vkGetDeviceQueue(device, family, 0, &queue);

    /* one host-visible, coherent allocation holding A, B (float16) and C, D (float32), each MAX_DIM^2 */
    const VkDeviceSize bytes = MAX_DIM * MAX_DIM * sizeof(float);
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
    for (int i = 0; i < MAX_DIM * MAX_DIM; i++) { a[i] = b[i] = 0x3c00; /* float16 1.0 */ c[i] = 0.0f; }

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
    CHECK(vkAllocateCommandBuffers(device, &cbai, &cmd));

    printf("| M x N x K | P = MNK/512 | vkCreateComputePipelines |%s 1st submit+wait | 2nd submit+wait | "
           "build = create +%s 1st - 2nd | D |\n", zero_first ? " 0-workgroup submit+wait |" : "",
           zero_first ? " 0-workgroup +" : "");
    printf("|---|---|---|%s---|---|---|---|\n", zero_first ? "---|" : "");
    int failed = 0;
    for (int s = 0; s < nsizes; s++) {
        uint32_t m = dims[s][0], nn = dims[s][1], k = dims[s][2];
        VkSpecializationMapEntry entries[3];
        for (uint32_t j = 0; j < 3; j++) entries[j] = (VkSpecializationMapEntry){ j, j * 4, 4 };
        VkSpecializationInfo spec = { .mapEntryCount = 3, .pMapEntries = entries, .dataSize = 12, .pData = dims[s] };
        VkComputePipelineCreateInfo cpci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .layout = layout,
            .stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                       .module = module, .pName = "main", .pSpecializationInfo = &spec } };
        VkPipeline pipeline;
        double start = now_s();
        CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));
        double create = now_s() - start;

        double zero = 0.0;
        char zero_column[32] = "";
        if (zero_first) {
            record(pipeline, layout, set, 0);
            zero = submit_and_wait();
            snprintf(zero_column, sizeof zero_column, " %.3f s |", zero);
        }
        record(pipeline, layout, set, 1);
        for (int i = 0; i < MAX_DIM * MAX_DIM; i++) d[i] = -1.0f;
        double first = submit_and_wait();
        double second = submit_and_wait();
        int wrong = 0;
        for (uint32_t i = 0; i < m * nn; i++) wrong += d[i] != (float)k;
        failed |= wrong != 0;
        char verdict[48];
        if (wrong) snprintf(verdict, sizeof verdict, "%d of %u wrong", wrong, m * nn);
        else snprintf(verdict, sizeof verdict, "all %u", k);
        printf("| %ux%ux%u | %u | %.3f s |%s %.3f s | %.3f s | %.2f s | %s |\n", m, nn, k, m * nn * k / 512, create,
               zero_column, first, second, create + zero + first - second, verdict);
        fflush(stdout);
        CHECK(vkDeviceWaitIdle(device));
        vkDestroyPipeline(device, pipeline, NULL);
    }
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return failed;
}
