// Offscreen graphics pieces shared by the suite programs that draw (offscreen_render,
// fusion_hazards' graphics_mix, narrow_barriers' graphics_after): a 2D colour image with its
// memory and view, a one-attachment render pass, its framebuffer, and the flat-colour pipeline
// of render.vert/render.frag (vertices: vec2 position in pixels, vec4 colour; push constants:
// 4 floats for the vertex stage). Plain Vulkan, no layer knowledge.
#pragma once

#include "vk_app.h"

namespace offscreen {

struct Image {
    VkImage image = VK_NULL_HANDLE;
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkImageView view = VK_NULL_HANDLE;
};

// A w x h optimal-tiling image (device-local memory where there is some), UNDEFINED layout,
// with a colour view of its one level and layer.
inline Image create_image(vkapp::Context& ctx, VkFormat format, uint32_t w, uint32_t h, VkImageUsageFlags usage) {
    Image img;
    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = format;
    ici.extent = {w, h, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_OPTIMAL;
    ici.usage = usage;
    ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VK_CHECK(vkCreateImage(ctx.device, &ici, nullptr, &img.image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(ctx.device, img.image, &req);
    int type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits, VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits, 0);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = uint32_t(type);
    VK_CHECK(vkAllocateMemory(ctx.device, &mai, nullptr, &img.memory));
    VK_CHECK(vkBindImageMemory(ctx.device, img.image, img.memory, 0));
    VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vci.image = img.image;
    vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vci.format = format;
    vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VK_CHECK(vkCreateImageView(ctx.device, &vci, nullptr, &img.view));
    return img;
}

inline void destroy_image(vkapp::Context& ctx, Image& img) {
    vkDestroyImageView(ctx.device, img.view, nullptr);
    vkDestroyImage(ctx.device, img.image, nullptr);
    vkFreeMemory(ctx.device, img.memory, nullptr);
    img = Image{};
}

// Which external subpass dependencies the render pass declares.
enum class Dependencies {
    implicit_only,  // none: nothing in the render pass orders it against other work
    transfer,       // a transfer (the previous frame's copy) before the clear's write, and the
                    // colour writes before a transfer read after the render pass
};

// One colour attachment, cleared and stored, one graphics subpass, left in `final_layout`.
inline VkRenderPass create_render_pass(vkapp::Context& ctx, VkFormat format, VkImageLayout final_layout,
                                       Dependencies dependencies) {
    VkAttachmentDescription att{};
    att.format = format;
    att.samples = VK_SAMPLE_COUNT_1_BIT;
    att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att.finalLayout = final_layout;
    VkAttachmentReference color_ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color_ref;
    VkSubpassDependency deps[2] = {};
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[0].srcAccessMask = 0;
    deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].srcSubpass = 0;
    deps[1].dstSubpass = VK_SUBPASS_EXTERNAL;
    deps[1].srcStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[1].srcAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    deps[1].dstStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[1].dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT;
    VkRenderPassCreateInfo rpci{VK_STRUCTURE_TYPE_RENDER_PASS_CREATE_INFO};
    rpci.attachmentCount = 1;
    rpci.pAttachments = &att;
    rpci.subpassCount = 1;
    rpci.pSubpasses = &subpass;
    if (dependencies == Dependencies::transfer) {
        rpci.dependencyCount = 2;
        rpci.pDependencies = deps;
    }
    VkRenderPass render_pass;
    VK_CHECK(vkCreateRenderPass(ctx.device, &rpci, nullptr, &render_pass));
    return render_pass;
}

inline VkFramebuffer create_framebuffer(vkapp::Context& ctx, VkRenderPass render_pass, VkImageView view,
                                        VkExtent2D extent) {
    VkFramebufferCreateInfo fci{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fci.renderPass = render_pass;
    fci.attachmentCount = 1;
    fci.pAttachments = &view;
    fci.width = extent.width;
    fci.height = extent.height;
    fci.layers = 1;
    VkFramebuffer framebuffer;
    VK_CHECK(vkCreateFramebuffer(ctx.device, &fci, nullptr, &framebuffer));
    return framebuffer;
}

// Bytes of one vertex: vec2 position, vec4 colour.
constexpr uint32_t kVertexStride = 6 * sizeof(float);

// The pipeline layout: no sets, 4 floats of vertex-stage push constants.
inline VkPipelineLayout create_pipeline_layout(vkapp::Context& ctx) {
    VkPushConstantRange pcr{VK_SHADER_STAGE_VERTEX_BIT, 0, 4 * sizeof(float)};
    VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &pcr;
    VkPipelineLayout layout;
    VK_CHECK(vkCreatePipelineLayout(ctx.device, &plci, nullptr, &layout));
    return layout;
}

// Triangle lists, no culling, no blending, subpass 0 of `render_pass`. With `static_extent`
// the viewport and scissor are baked in; without, they are dynamic state (see begin()).
inline VkPipeline create_pipeline(vkapp::Context& ctx, const uint32_t* vert, size_t vert_bytes, const uint32_t* frag,
                                  size_t frag_bytes, VkPipelineLayout layout, VkRenderPass render_pass,
                                  const VkExtent2D* static_extent = nullptr) {
    VkShaderModule vs = vkapp::create_shader_module(ctx, vert, vert_bytes);
    VkShaderModule fs = vkapp::create_shader_module(ctx, frag, frag_bytes);
    VkPipelineShaderStageCreateInfo stages[2] = {{VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO},
                                                 {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO}};
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vs;
    stages[0].pName = "main";
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = fs;
    stages[1].pName = "main";
    VkVertexInputBindingDescription vb{0, kVertexStride, VK_VERTEX_INPUT_RATE_VERTEX};
    VkVertexInputAttributeDescription va[2] = {{0, 0, VK_FORMAT_R32G32_SFLOAT, 0},
                                               {1, 0, VK_FORMAT_R32G32B32A32_SFLOAT, 2 * sizeof(float)}};
    VkPipelineVertexInputStateCreateInfo vi{VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    vi.vertexBindingDescriptionCount = 1;
    vi.pVertexBindingDescriptions = &vb;
    vi.vertexAttributeDescriptionCount = 2;
    vi.pVertexAttributeDescriptions = va;
    VkPipelineInputAssemblyStateCreateInfo ia{VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkViewport viewport{};
    VkRect2D scissor{};
    VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    vp.viewportCount = 1;
    vp.scissorCount = 1;
    if (static_extent) {
        viewport = {0, 0, float(static_extent->width), float(static_extent->height), 0, 1};
        scissor = {{0, 0}, *static_extent};
        vp.pViewports = &viewport;
        vp.pScissors = &scissor;
    }
    VkPipelineRasterizationStateCreateInfo rs{VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    rs.polygonMode = VK_POLYGON_MODE_FILL;
    rs.cullMode = VK_CULL_MODE_NONE;
    rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    rs.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo ms{VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState cba{};
    cba.colorWriteMask =
        VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT | VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    VkPipelineColorBlendStateCreateInfo cb_state{VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
    cb_state.attachmentCount = 1;
    cb_state.pAttachments = &cba;
    VkDynamicState dyn_states[2] = {VK_DYNAMIC_STATE_VIEWPORT, VK_DYNAMIC_STATE_SCISSOR};
    VkPipelineDynamicStateCreateInfo dyn{VK_STRUCTURE_TYPE_PIPELINE_DYNAMIC_STATE_CREATE_INFO};
    dyn.dynamicStateCount = 2;
    dyn.pDynamicStates = dyn_states;
    VkGraphicsPipelineCreateInfo gpci{VK_STRUCTURE_TYPE_GRAPHICS_PIPELINE_CREATE_INFO};
    gpci.stageCount = 2;
    gpci.pStages = stages;
    gpci.pVertexInputState = &vi;
    gpci.pInputAssemblyState = &ia;
    gpci.pViewportState = &vp;
    gpci.pRasterizationState = &rs;
    gpci.pMultisampleState = &ms;
    gpci.pColorBlendState = &cb_state;
    gpci.pDynamicState = static_extent ? nullptr : &dyn;
    gpci.layout = layout;
    gpci.renderPass = render_pass;
    gpci.subpass = 0;
    VkPipeline pipeline;
    VK_CHECK(vkCreateGraphicsPipelines(ctx.device, VK_NULL_HANDLE, 1, &gpci, nullptr, &pipeline));
    vkDestroyShaderModule(ctx.device, vs, nullptr);
    vkDestroyShaderModule(ctx.device, fs, nullptr);
    return pipeline;
}

// Begins the render pass over the whole of `framebuffer` cleared to `clear` and binds
// `pipeline`; with `dynamic_viewport`, also sets the viewport and scissor to the whole extent.
inline void begin(VkCommandBuffer cb, VkRenderPass render_pass, VkFramebuffer framebuffer, VkExtent2D extent,
                  const VkClearValue& clear, VkPipeline pipeline, bool dynamic_viewport) {
    VkRenderPassBeginInfo rpbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
    rpbi.renderPass = render_pass;
    rpbi.framebuffer = framebuffer;
    rpbi.renderArea = {{0, 0}, extent};
    rpbi.clearValueCount = 1;
    rpbi.pClearValues = &clear;
    vkCmdBeginRenderPass(cb, &rpbi, VK_SUBPASS_CONTENTS_INLINE);
    vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
    if (dynamic_viewport) {
        VkViewport viewport{0, 0, float(extent.width), float(extent.height), 0, 1};
        VkRect2D scissor{{0, 0}, extent};
        vkCmdSetViewport(cb, 0, 1, &viewport);
        vkCmdSetScissor(cb, 0, 1, &scissor);
    }
}

// Copies the whole colour image (level 0, layer 0) to `buffer` at `offset`, tightly packed.
inline void copy_to_buffer(VkCommandBuffer cb, VkImage image, VkImageLayout layout, VkBuffer buffer, uint32_t w,
                           uint32_t h, VkDeviceSize offset = 0) {
    VkBufferImageCopy region{};
    region.bufferOffset = offset;
    region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
    region.imageExtent = {w, h, 1};
    vkCmdCopyImageToBuffer(cb, image, layout, buffer, 1, &region);
}

}  // namespace offscreen
