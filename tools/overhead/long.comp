#version 450
// Serial busy work: each dispatch's result feeds the next through the barrier between them.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint v[]; } data;
layout(push_constant) uniform P { uint iterations; } p;
void main() {
    uint i = gl_GlobalInvocationID.x % 4096u;
    uint x = data.v[i] + gl_GlobalInvocationID.x;
    // lavapipe ends an invocation's loops after 65535 iterations: stay below.
    for (uint k = 0u; k < p.iterations; ++k) x = x * 1664525u + 1013904223u;
    if (x == 0u) data.v[i] = x;  // almost never true: keeps the loop alive, writes nothing
}
