#version 450
// random_program `mix`: dst[j] = a hash of src[j], src[(j * stride + salt) % n] and the push
// constants. Reads binding 0, writes binding 1 (never the same buffer). A grid-stride loop
// covers the first n words whatever the dispatch size.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
    uint salt;
    uint stride;
    uint rounds;
} pc;

void main() {
    uint total = gl_NumWorkGroups.x * 64u;
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += total) {
        uint x = src[j];
        uint y = src[(j * pc.stride + pc.salt) % pc.n];
        for (uint r = 0u; r <= pc.rounds; ++r) {
            x = x * 1664525u + (y ^ (pc.salt + r));
            x ^= x >> 15;
        }
        dst[j] = x;
    }
}
