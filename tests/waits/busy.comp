#version 450
// Busy work whose result depends on every iteration: a wait that returns early reads zeros.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Out { uint v[]; } o;
layout(push_constant) uniform P { uint iterations; uint seed; } p;
void main() {
    uint x = p.seed + gl_GlobalInvocationID.x;
    // llvmpipe (lavapipe) ends an invocation's loops after 65535 iterations in all: stay below.
    for (uint i = 0u; i < p.iterations; ++i) x = x * 1664525u + 1013904223u;
    o.v[gl_GlobalInvocationID.x] = x | 1u;
}
