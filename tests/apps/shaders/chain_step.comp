#version 450
// One link of chain_dispatch: dst[j] = mix of src[j] and another element of src, `rounds`
// times. A grid-stride loop covers all n elements whatever the dispatch size.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer Src { uint src[]; };
layout(set = 0, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
    uint step;
    uint rounds;
    uint stride;
} pc;

void main() {
    uint total = gl_NumWorkGroups.x * 64u;
    for (uint j = gl_GlobalInvocationID.x; j < pc.n; j += total) {
        uint x = src[j];
        uint y = src[(j * pc.stride + pc.step) % pc.n];
        for (uint r = 0u; r < pc.rounds; ++r) {
            x = x * 1664525u + (y ^ (pc.step + r));
            x ^= x >> 13;
        }
        dst[j] = x;
    }
}
