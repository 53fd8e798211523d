// offscreen_render: a render pass with a vertex and a fragment shader draws rectangles and
// a slanted triangle (vertex buffer, flat colours, no blending) into an offscreen
// R8G8B8A8_UNORM image, which is copied to a host-visible buffer and read back. Two frames,
// each its own command buffer and submission, with a different clear colour and offset.
//
// Every pixel is checked against a CPU rasterization: rectangle edges lie on pixel
// boundaries, so their coverage is exact; pixels within 1.5 px of a slanted triangle edge
// are skipped (rasterization rules there are the driver's business, and the same
// whatever the layer does). A few known pixels are also checked by value.
#include "offscreen_target.h"
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

    const VkExtent2D extent{kWidth, kHeight};
    static_assert(sizeof(Vertex) == offscreen::kVertexStride, "render.vert's vertex layout");

    // Colour attachment image; the render pass clears it, draws, and leaves it ready for a
    // transfer read; its dependencies order the previous frame's copy before this frame's
    // writes, and the copy after the render pass after what it wrote.
    offscreen::Image image = offscreen::create_image(
        ctx, kFormat, kWidth, kHeight, VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT | VK_IMAGE_USAGE_TRANSFER_SRC_BIT);
    VkRenderPass render_pass = offscreen::create_render_pass(ctx, kFormat, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL,
                                                             offscreen::Dependencies::transfer);
    VkFramebuffer framebuffer = offscreen::create_framebuffer(ctx, render_pass, image.view, extent);

    // Graphics pipeline (dynamic viewport and scissor).
    VkPipelineLayout layout = offscreen::create_pipeline_layout(ctx);
    VkPipeline pipeline = offscreen::create_pipeline(ctx, render_vert, sizeof(render_vert), render_frag,
                                                     sizeof(render_frag), layout, render_pass);

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
        offscreen::begin(cb, render_pass, framebuffer, extent, clear, pipeline, true);
        VkDeviceSize zero = 0;
        vkCmdBindVertexBuffers(cb, 0, 1, &vertex_buffer.buffer, &zero);
        const float pc[4] = {float(kWidth), float(kHeight), kOffset[f][0], kOffset[f][1]};
        vkCmdPushConstants(cb, layout, VK_SHADER_STAGE_VERTEX_BIT, 0, sizeof(pc), pc);
        // Rectangles one draw each, then the triangle: draw order decides the overlaps.
        for (uint32_t r = 0; r < 3; ++r) vkCmdDraw(cb, 6, 1, r * 6, 0);
        vkCmdDraw(cb, 3, 1, 18, 0);
        vkCmdEndRenderPass(cb);
        offscreen::copy_to_buffer(cb, image.image, VK_IMAGE_LAYOUT_TRANSFER_SRC_OPTIMAL, readback[f].buffer,
                                  kWidth, kHeight);
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
    offscreen::destroy_image(ctx, image);
    if (!ok) {
        vkapp::destroy_context(ctx);
        return 1;
    }
    return vkapp::finish(ctx, checksum);
}
