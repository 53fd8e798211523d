#version 450
// fusion_hazards `graphics_mix`: writes the vertex buffer a draw reads, three rectangles of two
// triangles each (18 vertices: x, y in pixels, then r, g, b, a), from the push constants.
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) writeonly buffer Vertices { float v[]; };
struct Rect {
    vec4 box;    // x0, y0, x1, y1
    vec4 color;  // r, g, b, a
};
layout(push_constant) uniform Params {
    Rect rects[3];
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= 18u) return;
    uint r = i / 6u, c = i % 6u;
    // Corners (x0,y0) (x1,y0) (x0,y1), (x1,y0) (x1,y1) (x0,y1).
    bool right = c == 1u || c == 3u || c == 4u;
    bool bottom = c == 2u || c == 4u || c == 5u;
    vec4 b = pc.rects[r].box;
    v[i * 6u + 0u] = right ? b.z : b.x;
    v[i * 6u + 1u] = bottom ? b.w : b.y;
    v[i * 6u + 2u] = pc.rects[r].color.r;
    v[i * 6u + 3u] = pc.rects[r].color.g;
    v[i * 6u + 4u] = pc.rects[r].color.b;
    v[i * 6u + 5u] = pc.rects[r].color.a;
}
