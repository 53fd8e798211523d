#version 450
// narrow_barriers, graphics_after scenario: rectangle r of `rects` (x0, y0, x1, y1 in pixels
// and an RGBA8 colour) becomes six vertices {x, y, r, g, b, a} of two triangles in `verts`,
// moved by the push constants' offset.
layout(local_size_x = 8) in;
layout(set = 0, binding = 0) readonly buffer Rects { uint rects[]; };
layout(set = 0, binding = 1) writeonly buffer Verts { float verts[]; };
layout(push_constant) uniform Push {
    uint count;
    int dx;
    int dy;
} pc;

void put(uint v, float x, float y, vec4 c) {
    verts[6u * v + 0u] = x;
    verts[6u * v + 1u] = y;
    verts[6u * v + 2u] = c.r;
    verts[6u * v + 3u] = c.g;
    verts[6u * v + 4u] = c.b;
    verts[6u * v + 5u] = c.a;
}

void main() {
    uint r = gl_GlobalInvocationID.x;
    if (r >= pc.count) return;
    float x0 = float(int(rects[5u * r + 0u]) + pc.dx), y0 = float(int(rects[5u * r + 1u]) + pc.dy);
    float x1 = float(int(rects[5u * r + 2u]) + pc.dx), y1 = float(int(rects[5u * r + 3u]) + pc.dy);
    vec4 c = unpackUnorm4x8(rects[5u * r + 4u]);
    put(6u * r + 0u, x0, y0, c);
    put(6u * r + 1u, x1, y0, c);
    put(6u * r + 2u, x0, y1, c);
    put(6u * r + 3u, x1, y0, c);
    put(6u * r + 4u, x1, y1, c);
    put(6u * r + 5u, x0, y1, c);
}
