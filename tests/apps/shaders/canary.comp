#version 450
// validation_canary: dst[i] = f(a[i], b[i], i).
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer A { uint a[]; };
layout(set = 0, binding = 1) readonly buffer B { uint b[]; };
layout(set = 0, binding = 2) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Params {
    uint n;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) dst[i] = (a[i] * 2654435761u + b[i]) ^ i;
}
