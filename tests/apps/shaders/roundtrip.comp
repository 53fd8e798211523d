#version 450
// staging_roundtrip: transforms the first n words of the buffer in place.
layout(local_size_x = 256) in;
layout(set = 0, binding = 0) buffer Data { uint d[]; };
layout(push_constant) uniform Params {
    uint n;
    uint seed;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        uint v = d[i];
        v = v * 2654435761u + (pc.seed ^ i);
        v ^= v >> 15;
        d[i] = v;
    }
}
