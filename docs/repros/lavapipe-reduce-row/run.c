/* Runs reduce.spv (a Row reduction, sum, of a 16x24 int matrix of ones) on device 0 and prints
 * the 16x24 result, which must be 24 everywhere (SPV_NV_cooperative_matrix2, "Cooperative Matrix
 * Reduce Mode": Row combines the elements of each row). Exit status 1 if any element differs.
 *
 * It links no Vulkan library: it opens the loader (libvulkan.so.1) at run time, so it builds with any C
 * compiler and glibc, needing only Vulkan headers that know VK_NV_cooperative_matrix2 (1.3.301 or
 * later; Debian 12's are 1.3.239): lavapipe's prefix has them (.ci/lavapipe.sh PREFIX).
 *
 *   cc -O2 -I PREFIX/usr/include -o run run.c -ldl && PREFIX/run ./run reduce.spv
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
    X(vkCreateDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkCreateComputePipelines) \
    X(vkCreateDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) \
    X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) \
    X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkEndCommandBuffer) X(vkQueueSubmit) X(vkQueueWaitIdle) \
    X(vkDestroyDevice)
#define DECLARE(name) static PFN_##name name;
DECLARE(vkCreateInstance)
INSTANCE_COMMANDS(DECLARE)

#define ROWS 16
#define COLS 24
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

int main(int argc, char **argv)
{
    if (argc != 2) { fprintf(stderr, "usage: %s reduce.spv\n", argv[0]); return 2; }
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
    printf("device: %s\n", props.deviceName);

    uint32_t nq = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, NULL);
    VkQueueFamilyProperties qf[16];
    nq = nq > 16 ? 16 : nq;
    vkGetPhysicalDeviceQueueFamilyProperties(phys, &nq, qf);
    uint32_t family = 0;
    while (family < nq && !(qf[family].queueFlags & VK_QUEUE_COMPUTE_BIT)) family++;

    VkPhysicalDeviceCooperativeMatrix2FeaturesNV cm2 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_2_FEATURES_NV,
        .cooperativeMatrixFlexibleDimensions = VK_TRUE, .cooperativeMatrixReductions = VK_TRUE };
    VkPhysicalDeviceCooperativeMatrixFeaturesKHR cm = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_KHR, .pNext = &cm2,
        .cooperativeMatrix = VK_TRUE };
    VkPhysicalDeviceVulkan12Features v12 = {
        .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES, .pNext = &cm,
        .vulkanMemoryModel = VK_TRUE };
    const char *extensions[] = { VK_KHR_COOPERATIVE_MATRIX_EXTENSION_NAME, VK_NV_COOPERATIVE_MATRIX_2_EXTENSION_NAME };
    float priority = 1.0f;
    VkDeviceQueueCreateInfo qci = { .sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                    .queueFamilyIndex = family, .queueCount = 1, .pQueuePriorities = &priority };
    VkDeviceCreateInfo dci = { .sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .pNext = &v12,
                               .queueCreateInfoCount = 1, .pQueueCreateInfos = &qci,
                               .enabledExtensionCount = 2, .ppEnabledExtensionNames = extensions };
    VkDevice device;
    CHECK(vkCreateDevice(phys, &dci, NULL, &device));
    VkQueue queue;
    vkGetDeviceQueue(device, family, 0, &queue);

    /* one host-visible, coherent allocation holding both buffers */
    const VkDeviceSize bytes = ROWS * COLS * sizeof(int32_t);
    VkBuffer buffers[2];
    for (int i = 0; i < 2; i++) {
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
    VkMemoryAllocateInfo mai = { .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = 2 * stride,
                                 .memoryTypeIndex = type };
    VkDeviceMemory memory;
    CHECK(vkAllocateMemory(device, &mai, NULL, &memory));
    for (int i = 0; i < 2; i++) CHECK(vkBindBufferMemory(device, buffers[i], memory, i * stride));
    char *mapped;
    CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped));
    int32_t *src = (int32_t *)mapped, *dst = (int32_t *)(mapped + stride);
    for (int i = 0; i < ROWS * COLS; i++) { src[i] = 1; dst[i] = -1; }

    size_t size;
    uint32_t *code = read_spirv(argv[1], &size);
    VkShaderModuleCreateInfo smci = { .sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, .codeSize = size,
                                      .pCode = code };
    VkShaderModule module;
    CHECK(vkCreateShaderModule(device, &smci, NULL, &module));
    VkDescriptorSetLayoutBinding bindings[2];
    for (uint32_t i = 0; i < 2; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){ .binding = i, .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                      .descriptorCount = 1, .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT };
    VkDescriptorSetLayoutCreateInfo dslci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                              .bindingCount = 2, .pBindings = bindings };
    VkDescriptorSetLayout set_layout;
    CHECK(vkCreateDescriptorSetLayout(device, &dslci, NULL, &set_layout));
    VkPipelineLayoutCreateInfo plci = { .sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                        .setLayoutCount = 1, .pSetLayouts = &set_layout };
    VkPipelineLayout layout;
    CHECK(vkCreatePipelineLayout(device, &plci, NULL, &layout));
    VkComputePipelineCreateInfo cpci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .layout = layout,
        .stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                   .module = module, .pName = "main" } };
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));

    VkDescriptorPoolSize pool_size = { VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2 };
    VkDescriptorPoolCreateInfo dpci = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, .maxSets = 1,
                                        .poolSizeCount = 1, .pPoolSizes = &pool_size };
    VkDescriptorPool pool;
    CHECK(vkCreateDescriptorPool(device, &dpci, NULL, &pool));
    VkDescriptorSetAllocateInfo dsai = { .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                         .descriptorPool = pool, .descriptorSetCount = 1, .pSetLayouts = &set_layout };
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(device, &dsai, &set));
    VkDescriptorBufferInfo infos[2] = { { buffers[0], 0, VK_WHOLE_SIZE }, { buffers[1], 0, VK_WHOLE_SIZE } };
    VkWriteDescriptorSet writes[2];
    for (uint32_t i = 0; i < 2; i++)
        writes[i] = (VkWriteDescriptorSet){ .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstSet = set,
                                            .dstBinding = i, .descriptorCount = 1,
                                            .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                            .pBufferInfo = &infos[i] };
    vkUpdateDescriptorSets(device, 2, writes, 0, NULL);

    VkCommandPoolCreateInfo cpoolci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, .queueFamilyIndex = family };
    VkCommandPool cpool;
    CHECK(vkCreateCommandPool(device, &cpoolci, NULL, &cpool));
    VkCommandBufferAllocateInfo cbai = { .sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, .commandPool = cpool,
                                         .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY, .commandBufferCount = 1 };
    VkCommandBuffer cmd;
    CHECK(vkAllocateCommandBuffers(device, &cbai, &cmd));
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

    int wrong = 0;
    for (int r = 0; r < ROWS; r++) {
        printf("row %2d:", r);
        for (int c = 0; c < COLS; c++) {
            printf(" %d", dst[r * COLS + c]);
            wrong += dst[r * COLS + c] != COLS;
        }
        printf("\n");
    }
    printf("%d of %d elements differ from %d\n", wrong, ROWS * COLS, COLS);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    return wrong ? 1 : 0;
}
