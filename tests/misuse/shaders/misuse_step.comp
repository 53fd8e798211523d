#version 450
// misuse: one step of an order-dependent chain (d = d * 3 + add + i), so results show whether
// every step ran, once, in order.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint d[]; };
layout(push_constant) uniform Params { uint add; } pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    d[i] = d[i] * 3u + pc.add + i;
}
