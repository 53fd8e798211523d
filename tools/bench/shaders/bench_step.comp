#version 450
// "pipeline": one link of a chain of dependent kernels.
// dst[i] = src[i] * 1664525 + 1013904223 + k (mod 2^32); the host replays it to verify.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push { uint k; uint count; } pc;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.count) dst[i] = src[i] * 1664525u + 1013904223u + pc.k;
}
