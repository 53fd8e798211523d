#version 450
// narrow_barriers, layout_transition scenario: writes texel (x, y) of an R32_UINT storage
// image; mode 0 from its coordinates and a seed only, mode 1 from its current value too.
layout(local_size_x = 8, local_size_y = 8) in;
layout(set = 0, binding = 0, r32ui) uniform uimage2D image;
layout(push_constant) uniform Push {
    uint width;
    uint height;
    uint seed;
    uint mode;
} pc;

void main() {
    uvec2 p = gl_GlobalInvocationID.xy;
    if (p.x >= pc.width || p.y >= pc.height) return;
    uint v = (p.x * 73856093u) ^ (p.y * 19349663u) ^ pc.seed;
    if (pc.mode == 1u) v += imageLoad(image, ivec2(p)).x * 1664525u;
    v ^= v >> 11;
    imageStore(image, ivec2(p), uvec4(v, 0u, 0u, 0u));
}
