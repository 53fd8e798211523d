#version 450
// random_program `accum`: dst[j] = dst[j] * (2 * salt + 1) + src[j] + stride, in place: reads
// binding 0, reads and writes binding 1 (never the same buffer).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
    uint salt;
    uint stride;
    uint rounds;
} pc;

void main() {
    uint total = gl_NumWorkGroups.x * 64u;
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += total)
        dst[j] = dst[j] * (2u * pc.salt + 1u) + src[j] + pc.stride;
}
