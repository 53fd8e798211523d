#version 450
// sync2_submit2: phase 0 writes b from a; phase 1 updates a in place from a and b.
layout(local_size_x = 128) in;
layout(set = 0, binding = 0) buffer A { uint a[]; };
layout(set = 0, binding = 1) buffer B { uint b[]; };
layout(push_constant) uniform Params {
    uint n;
    uint round_index;
    uint phase;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= pc.n) return;
    if (pc.phase == 0u) {
        uint x = a[i] ^ (a[(i + 1u) % pc.n] >> 3);
        b[i] = x * 747796405u + pc.round_index;
    } else {
        uint x = a[i] + (b[i] ^ (b[i ^ 1u] << 7));
        a[i] = (x ^ (x >> 11)) * 2891336453u;
    }
}
