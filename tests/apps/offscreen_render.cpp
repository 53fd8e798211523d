// offscreen_render: a render pass with a vertex and a fragment shader draws rectangles and
// a slanted triangle (vertex buffer, flat colours, no blending) into an offscreen
// R8G8B8A8_UNORM image, which is copied to a host-visible buffer and read back. Two frames,
// each its own command buffer and submission, with a different clear colour and offset.
//
// Every pixel is checked against a CPU rasterization: rectangle edges lie on pixel
// boundaries, so their coverage is exact; pixels within 1.5 px of a slanted triangle edge
// are skipped (rasterization rules there are the driver's business, and the same
// whatever the layer does). A few known pixels are also checked by value.
#include "suite_util.h"
#include "vk_app.h"

#include "render_frag.h"
#include "render_vert.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace {

constexpr uint32_t kWidth = 160, kHeight = 120, kFrames = 2;

struct Vertex {
    float x, y, r, g, b, a;
};

struct Rgba {
    uint8_t r, g, b, a;
    bool operator==(const Rgba& o) const { return r == o.r && g == o.g && b == o.b && a == o.a; }
};

struct Rect {
    float x0, y0, x1, y1;
    Rgba color;
};

struct Triangle {
    float x[3], y[3];
    Rgba color;
};

// Drawn in this order: rectangles, then the triangle on top.
const Rect kRects[] = {
    {10, 10, 70, 50, {255, 0, 0, 255}},
    {40, 30, 120, 90, {0, 200, 50, 255}},
    {100, 5, 150, 25, {30, 60, 240, 128}},
};
const Triangle kTriangle = {{15, 70, 5}, {60, 110, 115}, {255, 255, 0, 255}};
const Rgba kClear[kFrames] = {{16, 32, 48, 255}, {200, 100, 0, 64}};
const float kOffset[kFrames][2] = {{0, 0}, {7, 3}};

float unorm(uint8_t v) { return float(v) / 255.0f; }

void push_vertex(std::vector<Vertex>& v, float x, float y, Rgba c) {
    v.push_back({x, y, unorm(c.r), unorm(c.g), unorm(c.b), unorm(c.a)});
}

std::vector<Vertex> make_vertices() {
    std::vector<Vertex> v;
    for (const Rect& r : kRects) {
        push_vertex(v, r.x0, r.y0, r.color);
        push_vertex(v, r.x1, r.y0, r.color);
        push_vertex(v, r.x0, r.y1, r.color);
        push_vertex(v, r.x1, r.y0, r.color);
        push_vertex(v, r.x1, r.y1, r.color);
        push_vertex(v, r.x0, r.y1, r.color);
    }
    for (int i = 0; i < 3; ++i) push_vertex(v, kTriangle.x[i], kTriangle.y[i], kTriangle.color);
    return v;
}

// Signed distance (pixels) from point to the triangle's edges: > 0 inside, < 0 outside.
float triangle_distance(float px, float py, float ox, float oy) {
    float area = (kTriangle.x[1] - kTriangle.x[0]) * (kTriangle.y[2] - kTriangle.y[0]) -
                 (kTriangle.y[1] - kTriangle.y[0]) * (kTriangle.x[2] - kTriangle.x[0]);
    float sign = area > 0 ? 1.0f : -1.0f;
    float best = 1e9f;
    for (int i = 0; i < 3; ++i) {
        int j = (i + 1) % 3;
        float ax = kTriangle.x[i] + ox, ay = kTriangle.y[i] + oy;
        float bx = kTriangle.x[j] + ox, by = kTriangle.y[j] + oy;
        float ex = bx - ax, ey = by - ay;
        float d = sign * (ex * (py - ay) - ey * (px - ax)) / std::sqrt(ex * ex + ey * ey);
        best = std::min(best, d);
    }
    return best;
}

// Expected colour of pixel (x, y) in `frame`; false if it is too close to a slanted edge.
bool expected_pixel(uint32_t frame, uint32_t x, uint32_t y, Rgba* out) {
    const float ox = kOffset[frame][0], oy = kOffset[frame][1];
    const float cx = float(x) + 0.5f, cy = float(y) + 0.5f;
    float d = triangle_distance(cx, cy, ox, oy);
    if (std::fabs(d) < 1.5f) return false;
    if (d > 0) {
        *out = kTriangle.color;
        return true;
    }
    *out = kClear[frame];
    for (const Rect& r : kRects)
        if (cx >= r.x0 + ox && cx < r.x1 + ox && cy >= r.y0 + oy && cy < r.y1 + oy) *out = r.color;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    suite::parse_scale(argc, argv);
    vkapp::ContextOptions options;
    options.graphics = true;
    vkapp::Context ctx = vkapp::create_context("offscreen_render", options);
    VkDevice dev = ctx.device;
    const VkFormat kFormat = VK_FORMAT_R8G8B8A8_UNORM;
    const VkDeviceSize frame_bytes = VkDeviceSize(kWidth) * kHeight * 4;

    // Colour attachment image.
    VkImageCreateInfo ici{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO};
    ici.imageType = VK_IMAGE_TYPE_2D;
    ici.format = kFormat;
    ici.extent = {kWidth, kHeight, 1};
    ici.mipLevels = 1;
    ici.arrayLayers = 1;
    ici.samples = VK_SAMPLE_COUNT_1_BIT;
    ici.tiling = VK_IMAGE_TILING_OPTIMAL;
    ici.usage = VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT;
    ici.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    ici.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    VkImage image;
    VK_CHECK(vkCreateImage(dev, &ici, nullptr, &image));
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(dev, image, &req);
    int type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits,
                                       VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    if (type < 0) type = vkapp::find_memory_type(ctx.memory_properties, req.memoryTypeBits, 0);
    VkMemoryAllocateInfo mai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
    mai.allocationSize = req.size;
    mai.memoryTypeIndex = uint32_t(type);
    VkDeviceMemory image_memory;
    VK_CHECK(vkAllocateMemory(dev, &mai, nullptr, &image_memory));
    VK_CHECK(vkBindImageMemory(dev, image, image_memory, 0));
    VkImageViewCreateInfo vci{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO};
    vci.image = image;
    vci.viewType = VK_IMAGE_VIEW_TYPE_2D;
    vci.format = kFormat;
    vci.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 1, 0, 1};
    VkImageView view;
    VK_CHECK(vkCreateImageView(dev, &vci, nullptr, &view));

    // Render pass: clear, draw, leave the image ready for a transfer read.
    VkAttachmentDescription att{};
    att.format = kFormat;
    att.samples = VK_SAMPLE_COUNT_1_BIT;
    att.loadOp = VK_ATTACHMENT_LOAD_OP_CLEAR;
    att.storeOp = VK_ATTACHMENT_STORE_OP_STORE;
    att.stencilLoadOp = VK_ATTACHMENT_LOAD_OP_DONT_CARE;
    att.stencilStoreOp = VK_ATTACHMENT_STORE_OP_DONT_CARE;
    att.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    att.finalLayout = VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL;
    VkAttachmentReference color_ref{0, VK_IMAGE_LAYOUT_COLOR_ATTACHMENT_OPTIMAL};
    VkSubpassDescription subpass{};
    subpass.pipelineBindPoint = VK_PIPELINE_BIND_POINT_GRAPHICS;
    subpass.colorAttachmentCount = 1;
    subpass.pColorAttachments = &color_ref;
    VkSubpassDependency deps[2] = {};
    // The previous frame's copy must have read the image before this frame writes it.
    deps[0].srcSubpass = VK_SUBPASS_EXTERNAL;
    deps[0].dstSubpass = 0;
    deps[0].srcStageMask = VK_PIPELINE_STAGE_TRANSFER_BIT;
    deps[0].srcAccessMask = 0;
    deps[0].dstStageMask = VK_PIPELINE_STAGE_COLOR_ATTACHMENT_OUTPUT_BIT;
    deps[0].dstAccessMask = VK_ACCESS_COLOR_ATTACHMENT_WRITE_BIT;
    // The copy after the render pass reads what it wrote.
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
    rpci.dependencyCount = 2;
    rpci.pDependencies = deps;
    VkRenderPass render_pass;
    VK_CHECK(vkCreateRenderPass(dev, &rpci, nullptr, &render_pass));

    VkFramebufferCreateInfo fci{VK_STRUCTURE_TYPE_FRAMEBUFFER_CREATE_INFO};
    fci.renderPass = render_pass;
    fci.attachmentCount = 1;
    fci.pAttachments = &view;
    fci.width = kWidth;
    fci.height = kHeight;
    fci.layers = 1;
    VkFramebuffer framebuffer;
    VK_CHECK(vkCreateFramebuffer(dev, &fci, nullptr, &framebuffer));

    // Graphics pipeline.
    VkPushConstantRange pcr{VK_SHADER_STAGE_VERTEX_BIT, 0, 4 * sizeof(float)};
    VkPipelineLayoutCreateInfo plci{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
    plci.pushConstantRangeCount = 1;
    plci.pPushConstantRanges = &pcr;
    VkPipelineLayout layout;
    VK_CHECK(vkCreatePipelineLayout(dev, &plci, nullptr, &layout));
    VkShaderModule vs = vkapp::create_shader_module(ctx, render_vert, sizeof(render_vert));
    VkShaderModule fs = vkapp::create_shader_module(ctx, render_frag, sizeof(render_frag));
    VkPipelineShaderStageCreateInfo stages[2] = {};
    stages[0].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[0].stage = VK_SHADER_STAGE_VERTEX_BIT;
    stages[0].module = vs;
    stages[0].pName = "main";
    stages[1].sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
    stages[1].stage = VK_SHADER_STAGE_FRAGMENT_BIT;
    stages[1].module = fs;
    stages[1].pName = "main";
    VkVertexInputBindingDescription vb{0, sizeof(Vertex), VK_VERTEX_INPUT_RATE_VERTEX};
    VkVertexInputAttributeDescription va[2] = {
        {0, 0, VK_FORMAT_R32G32_SFLOAT, 0},
        {1, 0, VK_FORMAT_R32G32B32A32_SFLOAT, 2 * sizeof(float)}};
    VkPipelineVertexInputStateCreateInfo vi{
        VK_STRUCTURE_TYPE_PIPELINE_VERTEX_INPUT_STATE_CREATE_INFO};
    vi.vertexBindingDescriptionCount = 1;
    vi.pVertexBindingDescriptions = &vb;
    vi.vertexAttributeDescriptionCount = 2;
    vi.pVertexAttributeDescriptions = va;
    VkPipelineInputAssemblyStateCreateInfo ia{
        VK_STRUCTURE_TYPE_PIPELINE_INPUT_ASSEMBLY_STATE_CREATE_INFO};
    ia.topology = VK_PRIMITIVE_TOPOLOGY_TRIANGLE_LIST;
    VkPipelineViewportStateCreateInfo vp{VK_STRUCTURE_TYPE_PIPELINE_VIEWPORT_STATE_CREATE_INFO};
    vp.viewportCount = 1;
    vp.scissorCount = 1;
    VkPipelineRasterizationStateCreateInfo rs{
        VK_STRUCTURE_TYPE_PIPELINE_RASTERIZATION_STATE_CREATE_INFO};
    rs.polygonMode = VK_POLYGON_MODE_FILL;
    rs.cullMode = VK_CULL_MODE_NONE;
    rs.frontFace = VK_FRONT_FACE_COUNTER_CLOCKWISE;
    rs.lineWidth = 1.0f;
    VkPipelineMultisampleStateCreateInfo ms{
        VK_STRUCTURE_TYPE_PIPELINE_MULTISAMPLE_STATE_CREATE_INFO};
    ms.rasterizationSamples = VK_SAMPLE_COUNT_1_BIT;
    VkPipelineColorBlendAttachmentState cba{};
    cba.colorWriteMask = VK_COLOR_COMPONENT_R_BIT | VK_COLOR_COMPONENT_G_BIT |
                         VK_COLOR_COMPONENT_B_BIT | VK_COLOR_COMPONENT_A_BIT;
    VkPipelineColorBlendStateCreateInfo cb_state{
        VK_STRUCTURE_TYPE_PIPELINE_COLOR_BLEND_STATE_CREATE_INFO};
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
    gpci.pDynamicState = &dyn;
    gpci.layout = layout;
    gpci.renderPass = render_pass;
    gpci.subpass = 0;
    VkPipeline pipeline;
    VK_CHECK(vkCreateGraphicsPipelines(dev, VK_NULL_HANDLE, 1, &gpci, nullptr, &pipeline));
    vkDestroyShaderModule(dev, vs, nullptr);
    vkDestroyShaderModule(dev, fs, nullptr);

    // Vertex buffer (host-visible, written before submission) and readback buffers.
    const std::vector<Vertex> vertices = make_vertices();
    const VkDeviceSize vb_bytes = vertices.size() * sizeof(Vertex);
    vkapp::Buffer vertex_buffer =
        vkapp::create_buffer(ctx, vb_bytes, VK_BUFFER_USAGE_VERTEX_BUFFER_BIT, suite::kHostMemory);
    std::memcpy(vertex_buffer.mapped, vertices.data(), size_t(vb_bytes));
    suite::flush(ctx, vertex_buffer);
    vkapp::Buffer readback[kFrames];
    for (auto& r : readback)
        r = vkapp::create_buffer(ctx, frame_bytes, VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                                 suite::kHostMemory);

    VkCommandPool pool = vkapp::create_command_pool(ctx);
    std::vector<VkCommandBuffer> cbs = suite::allocate_command_buffers(ctx, pool, kFrames);
    VkFence fence = suite::create_fence(ctx);
    for (uint32_t f = 0; f < kFrames; ++f) {
        VkCommandBuffer cb = cbs[f];
        suite::begin(cb);
        VkClearValue clear{};
        clear.color.float32[0] = unorm(kClear[f].r);
        clear.color.float32[1] = unorm(kClear[f].g);
        clear.color.float32[2] = unorm(kClear[f].b);
        clear.color.float32[3] = unorm(kClear[f].a);
        VkRenderPassBeginInfo rpbi{VK_STRUCTURE_TYPE_RENDER_PASS_BEGIN_INFO};
        rpbi.renderPass = render_pass;
        rpbi.framebuffer = framebuffer;
        rpbi.renderArea = {{0, 0}, {kWidth, kHeight}};
        rpbi.clearValueCount = 1;
        rpbi.pClearValues = &clear;
        vkCmdBeginRenderPass(cb, &rpbi, VK_SUBPASS_CONTENTS_INLINE);
        vkCmdBindPipeline(cb, VK_PIPELINE_BIND_POINT_GRAPHICS, pipeline);
        VkViewport viewport{0, 0, float(kWidth), float(kHeight), 0, 1};
        VkRect2D scissor{{0, 0}, {kWidth, kHeight}};
        vkCmdSetViewport(cb, 0, 1, &viewport);
        vkCmdSetScissor(cb, 0, 1, &scissor);
        VkDeviceSize zero = 0;
        vkCmdBindVertexBuffers(cb, 0, 1, &vertex_buffer.buffer, &zero);
        const float pc[4] = {float(kWidth), float(kHeight), kOffset[f][0], kOffset[f][1]};
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(pc), pc);
        // Rectangles one draw each, then the triangle: draw order decides the overlaps.
        for (uint32_t r = 0; r < 3; ++r) vkCmdDraw(cb, 6, 1, r * 6, 0);
        vkCmdDraw(cb, 3, 1, 18, 0);
        vkCmdEndRenderPass(cb);
        VkBufferImageCopy region{};
        region.imageSubresource = {VK_IMAGE_ASPECT_COLOR_BIT, 0, 0, 1};
        region.imageExtent = {kWidth, kHeight, 1};
        vkCmdCopyImageToBuffer(cb, image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback[f].buffer,
                               1, &region);
        vkapp::barrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_ACCESS_TRANSFER_WRITE_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
        VK_CHECK(vkEndCommandBuffer(cb));
        suite::submit(ctx.queue, cb, f + 1 == kFrames ? fence : VK_NULL_HANDLE);
    }
    suite::wait_fence(ctx, fence);

    bool ok = true;
    uint64_t checksum = vkapp::fnv1a(nullptr, 0);
    uint32_t checked = 0;
    for (uint32_t f = 0; f < kFrames; ++f) {
        suite::invalidate(ctx, readback[f]);
        const auto* px = static_cast<const Rgba*>(readback[f].mapped);
        checksum = vkapp::fnv1a(px, size_t(frame_bytes), checksum);
        uint32_t bad = 0;
        for (uint32_t y = 0; y < kHeight; ++y) {
            for (uint32_t x = 0; x < kWidth; ++x) {
                Rgba want;
                if (!expected_pixel(f, x, y, &want)) continue;
                ++checked;
                const Rgba got = px[y * kWidth + x];
                if (!(got == want)) {
                    if (bad < 8)
                        std::fprintf(stderr,
                                     "offscreen_render: frame %u pixel (%u,%u) is %u,%u,%u,%u, "
                                     "expected %u,%u,%u,%u\n",
                                     f, x, y, got.r, got.g, got.b, got.a, want.r, want.g, want.b,
                                     want.a);
                    ++bad;
                }
            }
        }
        // A few landmarks, by value (frame 0: no offset).
        struct Known {
            uint32_t x, y;
            Rgba color;
        };
        const int ox = int(kOffset[f][0]), oy = int(kOffset[f][1]);
        const Known known[] = {
            {0, 0, kClear[f]},                                         // corner: clear colour
            {uint32_t(12 + ox), uint32_t(12 + oy), kRects[0].color},   // first rectangle only
            {uint32_t(60 + ox), uint32_t(40 + oy), kRects[1].color},   // overlap: second wins
            {uint32_t(149 + ox), uint32_t(5 + oy), kRects[2].color},   // third: top-right
            {uint32_t(30 + ox), uint32_t(100 + oy), kTriangle.color},  // inside the triangle
        };
        for (const Known& k : known) {
            const Rgba got = px[k.y * kWidth + k.x];
            if (!(got == k.color)) {
                std::fprintf(stderr,
                             "offscreen_render: frame %u landmark (%u,%u) is %u,%u,%u,%u, "
                             "expected %u,%u,%u,%u\n",
                             f, k.x, k.y, got.r, got.g, got.b, got.a, k.color.r, k.color.g,
                             k.color.b, k.color.a);
                ++bad;
            }
        }
        if (bad) {
            std::fprintf(stderr, "offscreen_render: frame %u: %u pixels wrong\n", f, bad);
            ok = false;
        }
    }
    if (checked < kFrames * kWidth * kHeight * 9 / 10) {
        std::fprintf(stderr, "offscreen_render: only %u pixels checked\n", checked);
        ok = false;
    }

    vkDestroyFence(dev, fence, nullptr);
    vkDestroyCommandPool(dev, pool, nullptr);
    for (auto& r : readback) vkapp::destroy_buffer(ctx, r);
    vkapp::destroy_buffer(ctx, vertex_buffer);
    vkDestroyPipeline(dev, pipeline, nullptr);
    vkDestroyPipelineLayout(dev, layout, nullptr);
    vkDestroyFramebuffer(dev, framebuffer, nullptr);
    vkDestroyRenderPass(dev, render_pass, nullptr);
    vkDestroyImageView(dev, view, nullptr);
    vkDestroyImage(dev, image, nullptr);
    vkFreeMemory(dev, image_memory, nullptr);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
