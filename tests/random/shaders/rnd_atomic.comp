#version 450
// random_program `atomic`: every word j < n of binding 0 is added atomically into word
// (j * stride + salt) % rounds of binding 1 (rounds: 1..n buckets). Addition commutes, so the
// result does not depend on the order in which invocations run.
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
        atomicAdd(dst[(j * pc.stride + pc.salt) % pc.rounds], src[j] ^ (j * 2654435761u));
}
