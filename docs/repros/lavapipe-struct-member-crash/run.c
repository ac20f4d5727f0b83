/* Runs each SPIR-V module given, one workgroup of 8 invocations (one subgroup on lavapipe), each in a
 * child process of its own, so that a driver crash is reported and the next module still runs.
 *
 * Every module copies one cooperative matrix: binding 0 (readonly) to binding 1, loaded with
 * OpCooperativeMatrixLoadKHR and stored with OpCooperativeMatrixStoreKHR, the same layout and stride,
 * so the first bytes of binding 1 must come back equal to binding 0's. Binding 0 holds a byte pattern
 * and binding 1 starts as its complement (every byte differs), so the child counts the leading bytes
 * copied and checks that the rest of binding 1 is untouched. The parent prints, for each module,
 * "copied N bytes: pass", or what was wrong, or "crashed with signal S (name)" where the child died
 * of a signal; exit status 1 if any module did not pass, 0 if all did, 2 on a usage or Vulkan error
 * (a file that is not SPIR-V is one: it is checked before Vulkan sees it).
 *
 * It links no Vulkan library: it opens the loader (libvulkan.so.1) at run time, so it builds with any C
 * compiler and glibc, needing only Vulkan headers that know VK_NV_cooperative_matrix2 (1.3.301 or
 * later; Debian 12's are 1.3.239): lavapipe's prefix has them (.ci/lavapipe.sh PREFIX). It enables
 * VK_NV_cooperative_matrix2's cooperativeMatrixFlexibleDimensions: lavapipe lists 8 x 8 (x 8) alone
 * through VK_KHR_cooperative_matrix, and larger matrices only as flexible sizes (granularity 8).
 *
 *   cc -O2 -I PREFIX/usr/include -o run run.c -ldl && PREFIX/run ./run control.spv crash.spv
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

/* Every Vulkan command used, taken from the loader through vkGetInstanceProcAddr. */
#define INSTANCE_COMMANDS(X) X(vkEnumeratePhysicalDevices) X(vkGetPhysicalDeviceProperties) \
    X(vkGetPhysicalDeviceQueueFamilyProperties) X(vkGetPhysicalDeviceMemoryProperties) X(vkCreateDevice) \
    X(vkDestroyInstance) X(vkGetDeviceQueue) X(vkCreateBuffer) X(vkGetBufferMemoryRequirements) \
    X(vkAllocateMemory) X(vkBindBufferMemory) X(vkMapMemory) X(vkCreateShaderModule) \
    X(vkCreateDescriptorSetLayout) X(vkCreatePipelineLayout) X(vkCreateComputePipelines) X(vkDestroyPipeline) \
    X(vkCreateDescriptorPool) X(vkAllocateDescriptorSets) X(vkUpdateDescriptorSets) X(vkCreateCommandPool) \
    X(vkAllocateCommandBuffers) X(vkBeginCommandBuffer) X(vkCmdBindPipeline) X(vkCmdBindDescriptorSets) \
    X(vkCmdDispatch) X(vkCmdPipelineBarrier) X(vkEndCommandBuffer) X(vkQueueSubmit) X(vkQueueWaitIdle) \
    X(vkDestroyCommandPool) X(vkDestroyDescriptorPool) X(vkDestroyPipelineLayout) \
    X(vkDestroyDescriptorSetLayout) X(vkDestroyShaderModule) X(vkDestroyBuffer) X(vkFreeMemory) X(vkDestroyDevice)
#define DECLARE(name) static PFN_##name name;
DECLARE(vkCreateInstance)
INSTANCE_COMMANDS(DECLARE)

#define BYTES 4096 /* each buffer: room for a 32 x 32 float32 matrix */
#define BUFFERS 2  /* the module's bindings 0 (in) and 1 (out) */
#define CHECK(call) do { VkResult r_ = (call); if (r_ != VK_SUCCESS) { \
    printf("  %s failed: %d\n", #call, r_); exit(2); } } while (0)

static uint32_t *read_spirv(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) { perror(path); exit(2); }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint32_t *code = malloc(*size ? *size : 1);
    if (fread(code, 1, *size, f) != *size) { perror(path); exit(2); }
    fclose(f);
    if (*size == 0 || *size % 4 || code[0] != 0x07230203u) { /* vkCreateShaderModule's valid usage */
        printf("  %s: not a SPIR-V module (no magic number, or not whole words)\n", path); exit(2); }
    return code;
}

static unsigned char pattern(int i) { return (unsigned char)(i * 7 + 3); }

/* The child: the whole Vulkan run of one module; exit 0 if the copy is right, 1 if not, 2 on an error. */
static int run_module(const char *path)
{
    size_t size;
    uint32_t *code = read_spirv(path, &size);
    void *loader = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!loader) { printf("  no Vulkan loader: %s\n", dlerror()); return 2; }
    PFN_vkGetInstanceProcAddr get = (PFN_vkGetInstanceProcAddr)dlsym(loader, "vkGetInstanceProcAddr");
    if (!get || !(vkCreateInstance = (PFN_vkCreateInstance)get(VK_NULL_HANDLE, "vkCreateInstance"))) {
        printf("  libvulkan.so.1 has no vkGetInstanceProcAddr\n"); return 2; }
    VkApplicationInfo app = { .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO, .apiVersion = VK_API_VERSION_1_3 };
    VkInstanceCreateInfo ici = { .sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app };
    VkInstance instance;
    CHECK(vkCreateInstance(&ici, NULL, &instance));
#define LOAD(name) if (!(name = (PFN_##name)get(instance, #name))) { printf("  no %s\n", #name); return 2; }
    INSTANCE_COMMANDS(LOAD)
    uint32_t n = 1;
    VkPhysicalDevice phys;
    VkResult enumerated = vkEnumeratePhysicalDevices(instance, &n, &phys);
    if ((enumerated != VK_SUCCESS && enumerated != VK_INCOMPLETE) || n == 0) { printf("  no device\n"); return 2; }
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(phys, &props);
    printf("  device: %s, driver version %u.%u.%u\n", props.deviceName, VK_VERSION_MAJOR(props.driverVersion),
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

    /* one host-visible, coherent allocation holding both buffers */
    VkBuffer buffers[BUFFERS];
    for (int i = 0; i < BUFFERS; i++) {
        VkBufferCreateInfo bci = { .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = BYTES,
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
    unsigned char *mapped;
    CHECK(vkMapMemory(device, memory, 0, VK_WHOLE_SIZE, 0, (void **)&mapped));
    unsigned char *in = mapped, *out = mapped + stride;
    for (int i = 0; i < BYTES; i++) { in[i] = pattern(i); out[i] = (unsigned char)~pattern(i); }

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

    printf("  vkCreateComputePipelines\n");
    fflush(stdout);
    VkComputePipelineCreateInfo cpci = { .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, .layout = layout,
        .stage = { .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                   .module = module, .pName = "main" } };
    VkPipeline pipeline;
    CHECK(vkCreateComputePipelines(device, VK_NULL_HANDLE, 1, &cpci, NULL, &pipeline));

    VkCommandPoolCreateInfo cpoolci = { .sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                        .queueFamilyIndex = family };
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
    printf("  vkQueueSubmit of one workgroup (llvmpipe compiles the shader here)\n");
    fflush(stdout);
    VkSubmitInfo submit = { .sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cmd };
    CHECK(vkQueueSubmit(queue, 1, &submit, VK_NULL_HANDLE));
    CHECK(vkQueueWaitIdle(queue));

    int copied = 0;
    while (copied < BYTES && out[copied] == in[copied]) copied++;
    int untouched = 0;
    for (int i = copied; i < BYTES; i++) untouched += out[i] == (unsigned char)~pattern(i);
    int ok = copied > 0 && untouched == BYTES - copied;
    if (ok) printf("  copied %d bytes, the rest untouched: pass\n", copied);
    else printf("  copied %d leading bytes, %d of the other %d untouched: FAIL\n", copied, untouched, BYTES - copied);

    /* everything destroyed, so that a run under VK_LAYER_KHRONOS_validation reports nothing */
    vkDestroyPipeline(device, pipeline, NULL);
    vkDestroyCommandPool(device, cpool, NULL);
    vkDestroyDescriptorPool(device, pool, NULL);
    vkDestroyPipelineLayout(device, layout, NULL);
    vkDestroyDescriptorSetLayout(device, set_layout, NULL);
    vkDestroyShaderModule(device, module, NULL);
    for (int i = 0; i < BUFFERS; i++) vkDestroyBuffer(device, buffers[i], NULL);
    vkFreeMemory(device, memory, NULL);
    vkDestroyDevice(device, NULL);
    vkDestroyInstance(instance, NULL);
    free(code);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) { fprintf(stderr, "usage: %s MODULE.spv [MODULE.spv ...]\n", argv[0]); return 2; }
    int worst = 0;
    for (int i = 1; i < argc; i++) {
        printf("%s:\n", argv[i]);
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) { perror("fork"); return 2; }
        if (child == 0) {
            int status = run_module(argv[i]);
            fflush(stdout);
            _exit(status);
        }
        int status;
        if (waitpid(child, &status, 0) != child) { perror("waitpid"); return 2; }
        int result;
        if (WIFSIGNALED(status)) {
            printf("  crashed with signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
            result = 1;
        } else {
            result = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
        }
        fflush(stdout);
        if (result == 2) return 2;
        worst |= result;
    }
    return worst;
}
