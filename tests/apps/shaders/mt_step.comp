#version 450
// multithread_record: one step on a thread's own buffer.
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Data { uint d[]; };
layout(push_constant) uniform Params {
    uint n;
    uint mul;
    uint add;
} pc;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < pc.n) {
        uint v = d[i] * pc.mul + (pc.add ^ i);
        d[i] = (v << 5) | (v >> 27);
    }
}
